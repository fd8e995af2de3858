"""w-shingling, shingle and document fingerprints, exact resemblance and containment."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mirrorscope.detectors.shingles as shingles_module
from mirrorscope.detectors.shingles import (
    MULTIPLIER,
    containment,
    resemblance,
    shingle_batch,
    shingle_fingerprints,
    shingle_set,
)

ROSE = "a rose is a rose is a rose".split()
MASK64 = (1 << 64) - 1


def ref(data: bytes) -> int:
    """Horner's rule over 1 || data in Python integers, mod 2^64."""
    value = 1
    for byte in data:
        value = (value * MULTIPLIER + byte) & MASK64
    return value


def text(tokens: list[str]) -> bytes:
    """The tokens' UTF-8 bytes, 0x01 and 0x00 escaped, joined by 0x00."""
    escaped = (t.replace("\x01", "\x01\x01").replace("\x00", "\x01\x02") for t in tokens)
    return "\x00".join(escaped).encode("utf-8", "surrogatepass")


def reference_shingles(tokens: list[str], w: int) -> list[int]:
    """f(text of each window of w tokens), w' = n if n < w."""
    if not tokens:
        return []
    width = min(w, len(tokens))
    return [ref(text(tokens[i : i + width])) for i in range(len(tokens) - width + 1)]


def reference_document(tokens: list[str]) -> int:
    return ref(text(tokens)) if tokens else 0


def test_worked_example_of_the_notes() -> None:
    assert shingle_set(ROSE, 4) == {("a", "rose", "is", "a"), ("rose", "is", "a", "rose"), ("is", "a", "rose", "is")}
    fps = shingle_fingerprints(ROSE, 4)
    assert len(fps) == 5  # positions, duplicates kept
    assert len(np.unique(fps)) == 3  # the shingling is a set


def test_short_documents_use_the_whole_document_as_one_shingle() -> None:
    batch = shingle_batch([[], ["one"], ["a", "b", "c"], list("abcdefghij")], 10)
    assert batch.counts.tolist() == [0, 1, 1, 1]
    assert batch.token_counts.tolist() == [0, 1, 3, 10]
    # A short document's single shingle is the whole sequence: its document fingerprint.
    assert batch.fingerprints[:2].tolist() == batch.document_fingerprints[1:3].tolist()
    assert shingle_set(["a", "b"], 10) == {("a", "b")}
    assert shingle_set([], 10) == set()


def test_empty_document_differs_from_one_empty_token() -> None:
    batch = shingle_batch([[], [""], ["", ""]], 10)
    assert batch.document_fingerprints.tolist() == [0, 1, ref(b"\x00")]
    assert batch.fingerprints.tolist() == [1, ref(b"\x00")]


#: Chinese and Japanese bigrams, Hangul, combining marks (e + U+0301 is not NFC's é), an
#: astral character, the separator and escape bytes themselves, an empty token.
NON_ASCII = ["中文", "文字", "日本", "ひら", "カタ", "한국어", "e\u0301", "é", "\u0915\u093f", "\U0001f600", "\x00", "\x01", "a\x01\x00b", ""]
tokens_strategy = st.lists(st.sampled_from(["a", "rose", "is", "b", "x" * 12, *NON_ASCII]), max_size=40)


@settings(max_examples=80, deadline=None)
@given(documents=st.lists(tokens_strategy, min_size=1, max_size=5), w=st.sampled_from([1, 3, 4, 10]))
def test_fingerprints_match_reference(documents: list[list[str]], w: int) -> None:
    batch = shingle_batch(documents, w)
    expected = [fp for tokens in documents for fp in reference_shingles(tokens, w)]
    assert batch.fingerprints.tolist() == expected
    assert batch.counts.tolist() == [len(reference_shingles(t, w)) for t in documents]
    assert batch.document_fingerprints.tolist() == [reference_document(t) for t in documents]


def test_exact_values() -> None:
    """Pinned by hand: the multiplier, the leading 1, the separator and UTF-8."""
    assert MULTIPLIER == 0xBF21D195AFED2011
    p = MULTIPLIER
    assert shingle_batch([["a"]], 10).document_fingerprints.tolist() == [(p + 0x61) & MASK64]
    assert shingle_batch([["a", "b"]], 1).fingerprints.tolist() == [(p + 0x61) & MASK64, (p + 0x62) & MASK64]
    two = (p**3 + 0x61 * p**2 + 0x00 * p + 0x62) & MASK64
    assert shingle_batch([["a", "b"]], 2).fingerprints.tolist() == [two]
    # 中 is e4 b8 ad in UTF-8; e + U+0301 is 65 cc 81.
    assert shingle_fingerprints(["中"], 1).tolist() == [ref(bytes([0xE4, 0xB8, 0xAD]))]
    assert shingle_fingerprints(["e\u0301"], 1).tolist() == [ref(bytes([0x65, 0xCC, 0x81]))]
    assert shingle_fingerprints(["e\u0301"], 1).tolist() != shingle_fingerprints(["é"], 1).tolist()
    # Separators inside tokens are escaped, so the token boundaries are not ambiguous.
    assert shingle_fingerprints(["a\x00b"], 1).tolist() == [ref(b"a\x01\x02b")]
    assert shingle_fingerprints(["a\x00b"], 1).tolist() != shingle_fingerprints(["a", "b"], 2).tolist()
    assert shingle_fingerprints(["\x01"], 1).tolist() == [ref(b"\x01\x01")]
    assert shingle_fingerprints(["\x01\x02"], 1).tolist() != shingle_fingerprints(["\x00"], 1).tolist()


@settings(max_examples=40, deadline=None)
@given(a=tokens_strategy, b=tokens_strategy)
def test_exact_measures_match_sets_of_tuples(a: list[str], b: list[str]) -> None:
    fa, fb = shingle_fingerprints(a, 3), shingle_fingerprints(b, 3)
    sa, sb = shingle_set(a, 3), shingle_set(b, 3)
    union = sa | sb
    assert resemblance(fa, fb) == pytest.approx(len(sa & sb) / len(union) if union else 1.0)
    assert containment(fa, fb) == pytest.approx(len(sa & sb) / len(sa) if sa else 1.0)


def test_exact_measures_by_hand() -> None:
    a = np.array([1, 2, 3, 4, 4], dtype=np.uint64)
    b = np.array([3, 4, 5, 6], dtype=np.uint64)
    assert resemblance(a, b) == pytest.approx(2 / 6)
    assert containment(a, b) == pytest.approx(2 / 4)
    assert containment(b, a) == pytest.approx(2 / 4)
    assert resemblance(a, a) == 1.0 and containment(a[:2], a) == 1.0
    empty = np.array([], dtype=np.uint64)
    assert resemblance(empty, empty) == 1.0 and resemblance(a, empty) == 0.0
    assert containment(empty, a) == 1.0 and containment(a, empty) == 0.0


def test_results_do_not_depend_on_the_batch() -> None:
    """A document's fingerprints are the same alone, in any batch, on the fast or the
    escaped path, and across the chunks of the prefix sum."""
    rng = np.random.default_rng(11)
    vocabulary = [f"w{i}" for i in range(3000)] + NON_ASCII[:-4]
    documents = [[vocabulary[i] for i in rng.integers(0, len(vocabulary), size=n)] for n in (0, 5, 50, 800, 30_000)]
    expected = shingle_batch(documents, 10)
    alone = [shingle_batch([d], 10) for d in documents]
    assert np.concatenate([a.fingerprints for a in alone]).tolist() == expected.fingerprints.tolist()
    assert [int(a.document_fingerprints[0]) for a in alone] == expected.document_fingerprints.tolist()
    escaped = shingle_batch([*documents, ["\x00"]], 10)  # one token with a separator: the slow path
    assert escaped.fingerprints[:-1].tolist() == expected.fingerprints.tolist()
    assert expected.document_fingerprints[-1] == reference_document(documents[-1])  # > 64 KB of text
    assert expected.fingerprints[-3:].tolist() == reference_shingles(documents[-1][-12:], 10)


def test_thread_safe() -> None:
    rng = np.random.default_rng(12)
    documents = [[f"t{i}" for i in rng.integers(0, 5000, size=int(n))] for n in rng.integers(1, 20_000, size=40)]
    expected = [shingle_fingerprints(d, 10).tolist() for d in documents]
    results: dict[int, list[list[int]]] = {}

    def work(worker: int) -> None:
        results[worker] = [shingle_fingerprints(d, 10).tolist() for d in documents]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values())


def test_hostile_tokens() -> None:
    documents = [
        ["\ud800", "x\udfff", "\x00", "", "\U0001f600"],  # lone surrogates, NUL, empty, astral
        ["a" * 100_000],
        ["word"] * 100_000,
    ]
    batch = shingle_batch(documents, 10)
    assert batch.counts.tolist() == [1, 1, 100_000 - 9]
    assert batch.fingerprints[0] == reference_document(documents[0])
    assert batch.document_fingerprints[1] == ref(b"a" * 100_000)
    assert len(np.unique(batch.fingerprints[2:])) == 1
    assert batch.fingerprints[2] == ref(text(["word"] * 10))


def test_long_document_fingerprint() -> None:
    rng = np.random.default_rng(13)
    tokens = [f"t{i}" for i in rng.integers(0, 500, size=12_345)]
    batch = shingle_batch([tokens, tokens[:7]], 10)
    assert batch.document_fingerprints.tolist() == [reference_document(tokens), reference_document(tokens[:7])]


def test_tokens_must_be_str() -> None:
    with pytest.raises(TypeError):
        shingle_batch([["fresh", "words", ["not", "a", "token"]]], 3)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        shingle_batch([["fresh", b"bytes"]], 3)  # type: ignore[list-item]
    with pytest.raises(ValueError):
        shingle_batch([["a"]], 0)


def test_no_collision_among_short_tokens() -> None:
    """Every token of one or two characters below U+0100 (65,792 of them, 1-4 bytes,
    the separator and escape escaped) has its own fingerprint."""
    alphabet = [chr(c) for c in range(256)]
    tokens = alphabet + [a + b for a in alphabet for b in alphabet]
    fingerprints = shingle_fingerprints(tokens, 1)
    assert fingerprints.size == len(tokens) == np.unique(fingerprints).size


def test_a_span_longer_than_the_kept_powers() -> None:
    """A token of 2 MB (hostile: canonical tokens have at most 255 characters) hashes as
    the reference does, and leaves no 2 MB table of powers behind."""
    token = "ab" * (1 << 20)
    assert shingle_batch([[token]], 10).document_fingerprints.tolist() == [ref(token.encode())]
    assert shingles_module._POWERS.up_to(1).size <= shingles_module._KEPT_POWERS
