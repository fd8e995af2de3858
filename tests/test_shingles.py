"""w-shingling, shingle and document fingerprints, exact resemblance and containment."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors.rabin import POLY64
from mirrorscope.detectors.shingles import (
    TokenTable,
    containment,
    resemblance,
    shingle_batch,
    shingle_fingerprints,
    shingle_set,
)

ROSE = "a rose is a rose is a rose".split()


def ref(data: bytes) -> int:
    """Bit by bit long division of 1 || data by x^64 + POLY64 (as in test_rabin)."""
    full = (1 << 64) | POLY64
    remainder = 1
    for byte in data:
        for bit in range(7, -1, -1):
            remainder = (remainder << 1) | ((byte >> bit) & 1)
            if remainder >> 64:
                remainder ^= full
    return remainder


def token_fp(token: str) -> bytes:
    return ref(token.encode("utf-8", "surrogatepass")).to_bytes(8, "big")


def reference_shingles(tokens: list[str], w: int) -> list[int]:
    """f(concatenation of the tokens' 8-byte fingerprints) for each window, w' = n if n < w."""
    if not tokens:
        return []
    width = min(w, len(tokens))
    return [ref(b"".join(map(token_fp, tokens[i : i + width]))) for i in range(len(tokens) - width + 1)]


def reference_document(tokens: list[str]) -> int:
    return ref(b"".join(map(token_fp, tokens)))


def test_worked_example_of_the_notes() -> None:
    assert shingle_set(ROSE, 4) == {("a", "rose", "is", "a"), ("rose", "is", "a", "rose"), ("is", "a", "rose", "is")}
    fps = shingle_fingerprints(ROSE, 4, TokenTable(w=4))
    assert len(fps) == 5  # positions, duplicates kept
    assert len(np.unique(fps)) == 3  # the shingling is a set


def test_short_documents_use_the_whole_document_as_one_shingle() -> None:
    batch = shingle_batch([[], ["one"], ["a", "b", "c"], list("abcdefghij")], 10, TokenTable(w=10))
    assert batch.counts.tolist() == [0, 1, 1, 1]
    assert batch.token_counts.tolist() == [0, 1, 3, 10]
    # A short document's single shingle is the whole sequence: its document fingerprint.
    assert batch.fingerprints[:2].tolist() == batch.document_fingerprints[1:3].tolist()
    assert shingle_set(["a", "b"], 10) == {("a", "b")}
    assert shingle_set([], 10) == set()


tokens_strategy = st.lists(st.sampled_from(["a", "rose", "is", "b", "x" * 12, "é", "\x00", ""]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(documents=st.lists(tokens_strategy, min_size=1, max_size=5), w=st.sampled_from([1, 3, 4, 10]))
def test_fingerprints_match_reference(documents: list[list[str]], w: int) -> None:
    batch = shingle_batch(documents, w, TokenTable(w=w))
    expected = [fp for tokens in documents for fp in reference_shingles(tokens, w)]
    assert batch.fingerprints.tolist() == expected
    assert batch.counts.tolist() == [len(reference_shingles(t, w)) for t in documents]
    assert batch.document_fingerprints.tolist() == [reference_document(t) for t in documents]


@settings(max_examples=40, deadline=None)
@given(a=tokens_strategy, b=tokens_strategy)
def test_exact_measures_match_sets_of_tuples(a: list[str], b: list[str]) -> None:
    table = TokenTable(w=3)
    fa, fb = shingle_fingerprints(a, 3, table), shingle_fingerprints(b, 3, table)
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


def test_results_do_not_depend_on_the_memo() -> None:
    rng = np.random.default_rng(11)
    vocabulary = [f"w{i}" for i in range(3000)]
    documents = [[vocabulary[i] for i in rng.integers(0, 3000, size=n)] for n in (0, 5, 50, 800, 2000)]
    expected = shingle_batch(documents, 10, TokenTable(w=10))
    warm = TokenTable(w=10)
    shingle_batch(documents[::-1], 10, warm)
    tiny = TokenTable(w=10, max_size=7)  # starts afresh over and over
    for table in (warm, tiny, tiny):
        got = shingle_batch(documents, 10, table)
        assert got.fingerprints.tolist() == expected.fingerprints.tolist()
        assert got.document_fingerprints.tolist() == expected.document_fingerprints.tolist()
    one_by_one = [shingle_fingerprints(d, 10, tiny) for d in documents]
    assert np.concatenate(one_by_one).tolist() == expected.fingerprints.tolist()
    assert len(tiny) <= 7 + 2000


def test_memo_is_thread_safe() -> None:
    rng = np.random.default_rng(12)
    documents = [[f"t{i}" for i in rng.integers(0, 5000, size=300)] for _ in range(40)]
    expected = [shingle_fingerprints(d, 10, TokenTable(w=10)).tolist() for d in documents]
    shared = TokenTable(w=10, max_size=600)
    results: dict[int, list[list[int]]] = {}

    def work(worker: int) -> None:
        results[worker] = [shingle_fingerprints(d, 10, shared).tolist() for d in documents]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values())


def test_hostile_tokens() -> None:
    table = TokenTable(w=10)
    documents = [
        ["\ud800", "x\udfff", "\x00", "", "\U0001f600"],  # lone surrogates, NUL, empty, astral
        ["a" * 100_000],
        ["word"] * 100_000,
    ]
    batch = shingle_batch(documents, 10, table)
    assert batch.counts.tolist() == [1, 1, 100_000 - 9]
    assert batch.fingerprints[0] == reference_document(documents[0])
    assert batch.document_fingerprints[1] == ref(token_fp("a" * 100_000))
    assert len(np.unique(batch.fingerprints[2:])) == 1


def test_long_document_fingerprint() -> None:
    """Enough blocks that the fold takes its large-array path."""
    rng = np.random.default_rng(13)
    tokens = [f"t{i}" for i in rng.integers(0, 500, size=12_345)]
    batch = shingle_batch([tokens, tokens[:7]], 10, TokenTable(w=10))
    assert batch.document_fingerprints.tolist() == [reference_document(tokens), reference_document(tokens[:7])]


def test_a_failed_lookup_leaves_the_memo_sound() -> None:
    table = TokenTable(w=3)
    expected = shingle_fingerprints(["fresh", "words", "here", "now"], 3, TokenTable(w=3)).tolist()
    with pytest.raises(TypeError):
        shingle_batch([["fresh", "words", ["not", "a", "token"]]], 3, table)  # type: ignore[list-item]
    with pytest.raises(AttributeError):
        shingle_batch([["fresh", b"bytes"]], 3, table)  # type: ignore[list-item]
    assert shingle_fingerprints(["fresh", "words", "here", "now"], 3, table).tolist() == expected


def test_table_width_must_match() -> None:
    with pytest.raises(ValueError):
        shingle_batch([["a"]], 10, TokenTable(w=4))
