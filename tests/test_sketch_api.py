"""DocumentSketch: contents, serialisation, parameters, hostile input, determinism."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mirrorscope.detectors.sketch as sketch_module
from mirrorscope.detectors.canonical import canonical_tokens
from mirrorscope.detectors.minhash import EMPTY, divisible
from mirrorscope.detectors.rabin import RABIN64
from mirrorscope.detectors.shingles import shingle_batch
from mirrorscope.detectors.sketch import (
    DEFAULT_PARAMS,
    DocumentSketch,
    IncompatibleSketchError,
    SketchParams,
    containment_mod_m,
    is_near_duplicate,
    resemblance_min_s,
    resemblance_mod_m,
    signature_agreement,
    sketch_many,
    sketch_tokens,
    super_shingle_matches,
)
from tests.helpers import prose

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = [resemblance_min_s, resemblance_mod_m, containment_mod_m, signature_agreement, super_shingle_matches]


SAMPLE = prose(1, 2000)


def test_sketch_contents() -> None:
    s = sketch_tokens(SAMPLE)
    batch = shingle_batch([SAMPLE], 10)
    distinct = np.unique(batch.fingerprints)
    assert s.token_count == 2000 and s.shingle_count == len(distinct) and not s.too_short
    assert s.fingerprint == int(batch.document_fingerprints[0])
    assert len(s.min_s) == 200 and (np.diff(s.min_s.astype(object)) > 0).all()
    assert (s.mod_m % np.uint64(25) == 0).all() and (np.diff(s.mod_m.astype(object)) > 0).all()
    assert s.signature.shape == (84,) and s.super_shingles.shape == (6,)
    arrays = (s.min_s, s.mod_m, s.signature, s.super_shingles)
    assert all(a.dtype == np.uint64 and not a.flags.writeable for a in arrays)
    # MIN_s and MOD_m are samples of the permuted shingle set, the signature too.
    permuted = sketch_module._permutation(DEFAULT_PARAMS.seed)(distinct)
    assert np.isin(s.min_s, permuted).all() and np.isin(s.signature, permuted).all()
    assert s.min_s.tolist() == np.sort(permuted)[:200].tolist()
    assert s.mod_m.tolist() == np.sort(permuted[permuted % np.uint64(25) == 0]).tolist()


@pytest.mark.parametrize("m", [1, 2, 3, 25, 64, 97, 2**32 + 1, 2**63 + 1])
def test_divisible_is_the_remainder_test(m: int) -> None:
    rng = np.random.default_rng(m)
    top = (2**64 - 1) // m * m  # the largest multiple, and its neighbours, at the edge
    edges = [0, 1, m - 1, m, m + 1, top - 1, top, min(top + 1, 2**64 - 1), 2**64 - 1]
    multiples = rng.integers(0, (2**64 - 1) // m, 1000, dtype=np.uint64, endpoint=True) * np.uint64(m)
    values = np.concatenate((np.array([e % 2**64 for e in edges], dtype=np.uint64), multiples,
                             multiples + np.uint64(1), rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64)))  # fmt: skip
    assert divisible(values, m).tolist() == [int(v) % m == 0 for v in values.tolist()]


def test_super_shingles_fingerprint_the_signature() -> None:
    """Super-shingle g = f(signature values 14g .. 14g + 13, 8 bytes each, big-endian)."""
    for tokens in (SAMPLE, ["a", "b"], []):
        s = sketch_tokens(tokens)
        groups = s.signature.reshape(6, 14).tolist()
        expected = [RABIN64.fingerprint(b"".join(v.to_bytes(8, "big") for v in group)) for group in groups]
        assert s.super_shingles.tolist() == expected


def test_round_trip_and_size() -> None:
    for tokens in ([], ["one"], SAMPLE[:5], SAMPLE, prose(2, 20_000)):
        s = sketch_tokens(tokens)
        data = s.to_bytes()
        back = DocumentSketch.from_bytes(data)
        assert back == s and back.to_bytes() == data
        assert (back.token_count, back.shingle_count, back.too_short, back.fingerprint, back.params) == (
            s.token_count, s.shingle_count, s.too_short, s.fingerprint, s.params,
        )  # fmt: skip
        for name in ("min_s", "mod_m", "signature", "super_shingles"):
            assert getattr(back, name).tolist() == getattr(s, name).tolist()
            assert not getattr(back, name).flags.writeable
        header = 4 + 1 + 1 + len(DEFAULT_PARAMS.scheme) + 8 + 4 * 2 + 3 + 3 * 8 + 2 + 4
        assert len(data) == header + 8 * (len(s.min_s) + len(s.mod_m) + 84 + 6)
    assert len(sketch_tokens(SAMPLE).to_bytes()) < 4000


VALID = sketch_tokens(SAMPLE).to_bytes()


@pytest.mark.parametrize("data", [b"", b"MSKT", b"XXXX" + bytes(200), VALID[:-1], VALID + b"\0", VALID[:30]])
def test_from_bytes_rejects_garbage(data: bytes) -> None:
    with pytest.raises(ValueError):
        DocumentSketch.from_bytes(data)


def test_different_params_refuse_to_compare() -> None:
    a = sketch_tokens(SAMPLE)
    for params in (SketchParams(seed=1), SketchParams(w=8), SketchParams(s=100), SketchParams(m=16)):
        b = sketch_tokens(SAMPLE, params)
        for estimator in ESTIMATORS:
            with pytest.raises(IncompatibleSketchError, match="different parameters"):
                estimator(a, b)
    b = DocumentSketch.from_bytes(sketch_tokens(SAMPLE, SketchParams(seed=1)).to_bytes())
    assert b.params == SketchParams(seed=1)
    with pytest.raises(IncompatibleSketchError):
        is_near_duplicate(a, b)


@pytest.mark.parametrize(
    "kwargs",
    [{"scheme": "md5-v0"}, {"seed": -1}, {"seed": 2**64}, {"w": 0}, {"s": 0}, {"m": 0}, {"signature_size": 80},
     {"super_groups": 0, "signature_size": 0}, {"w": 70_000}],
)  # fmt: skip
def test_params_are_validated(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        SketchParams(**kwargs)


def test_retired_scheme_is_read_not_made() -> None:
    """A stored 'rabin64-xsm-v1' sketch still loads and compares with its own kind only."""
    retired = SketchParams(scheme="rabin64-xsm-v1")
    with pytest.raises(ValueError, match="no longer made"):
        sketch_many([SAMPLE], retired)
    current = sketch_tokens(SAMPLE)
    old = DocumentSketch.from_bytes(dataclasses.replace(current, params=retired).to_bytes())
    assert old.params == retired and signature_agreement(old, old) == 1.0
    with pytest.raises(IncompatibleSketchError):
        signature_agreement(old, current)


def test_other_params_work() -> None:
    params = SketchParams(w=4, s=50, m=7, signature_size=20, super_groups=4, super_size=5, seed=3)
    s = sketch_tokens(SAMPLE, params)
    assert len(s.min_s) == 50 and s.signature.shape == (20,) and s.super_shingles.shape == (4,)
    assert DocumentSketch.from_bytes(s.to_bytes()) == s
    assert resemblance_min_s(s, s) == 1.0


def test_batches_equal_single_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    # More than 64 super-shingle rows in one batch: the large-array path of the fold.
    documents = [prose(seed, n) for seed, n in enumerate((0, 3, 9, 10, 11, 500, 4000, 1, 0, 2500) * 2)]
    single = [sketch_tokens(d).to_bytes() for d in documents]
    assert [s.to_bytes() for s in sketch_many(documents)] == single
    monkeypatch.setattr(sketch_module, "_BATCH_TOKENS", 1000)  # many small passes
    assert [s.to_bytes() for s in sketch_many(iter(documents))] == single
    assert sketch_many([]) == []


def test_a_string_is_not_a_document() -> None:
    with pytest.raises(TypeError):
        sketch_tokens("a rose is a rose")  # type: ignore[arg-type]


HOSTILE_HTML = {
    "empty": "",
    "one word": "<p>word</p>",
    "only punctuation": "<p>!!! ... ??? --- ;;; (((</p>" * 50,
    "binary junk": "\x00\x01\x02\ufffd\ud800" * 100,
    "10 MB of one word": "<p>" + "word " * 2_000_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_HTML))
def test_hostile_html(name: str) -> None:
    tokens = canonical_tokens(HOSTILE_HTML[name])
    s = sketch_tokens(tokens)
    assert s.token_count == len(tokens) and s.too_short == (len(tokens) < 10)
    check_defined(s)


@pytest.mark.parametrize(
    "tokens",
    [
        ["word"] * 2_000_000,  # 10 MB of one repeated word
        ["x" * 10_000_000],  # 10 MB without a space
        ["\ud800", "\x00", "", "\U0001f600"] * 5,
        [str(i) for i in range(300_000)],  # all distinct
    ],
    ids=["10MB-one-word", "10MB-one-token", "odd-characters", "all-distinct"],
)
def test_hostile_tokens(tokens: list[str]) -> None:
    s = sketch_tokens(tokens)
    assert s.token_count == len(tokens)
    check_defined(s)


def check_defined(s: DocumentSketch) -> None:
    other = sketch_tokens(SAMPLE)
    for estimator in ESTIMATORS:
        value = estimator(s, other)
        assert value is not None and (math.isnan(value) or 0 <= value <= 6)
        assert estimator(s, s) in (1.0, 6) or math.isnan(estimator(s, s))
    assert DocumentSketch.from_bytes(s.to_bytes()) == s


def test_empty_and_short_document_conventions() -> None:
    empty, also_empty, word, long = (sketch_tokens(t) for t in ([], [], ["word"], SAMPLE))
    assert empty.shingle_count == 0 and empty.too_short and len(empty.min_s) == 0
    assert (empty.signature == EMPTY).all() and empty.fingerprint == 0  # no text, not even the leading 1
    assert empty == also_empty
    for estimator in (resemblance_min_s, resemblance_mod_m, containment_mod_m, signature_agreement):
        assert estimator(empty, also_empty) == 1.0
    assert super_shingle_matches(empty, also_empty) == 6
    assert resemblance_min_s(empty, long) == 0.0 and signature_agreement(empty, long) == 0.0
    assert containment_mod_m(empty, long) == 1.0  # the empty set is inside every set
    assert containment_mod_m(long, empty) == 0.0
    # One word: one shingle, which MIN_s holds; MOD_m probably holds nothing.
    assert word.too_short and word.shingle_count == 1 and len(word.min_s) == 1
    assert resemblance_min_s(word, sketch_tokens(["word"])) == 1.0
    assert (word.signature == word.signature[0]).all()
    assert math.isnan(containment_mod_m(word, long)) == (len(word.mod_m) == 0)


GOLDEN_SHA256 = "cb1f2ec2b645c3b5a10e54165e29732133e42b148b9018ccffac107201d0f218"


def test_sketches_are_fixed_by_the_scheme() -> None:
    """'poly64-xsm-v1' pins every byte: change the algorithm, change the scheme name."""
    data = b"".join(s.to_bytes() for s in sketch_many([SAMPLE, ["a", "rose", "is", "a", "rose"], []]))
    assert hashlib.sha256(data).hexdigest() == GOLDEN_SHA256


CHILD = """
import sys
sys.path.insert(0, {root!r})
from mirrorscope.detectors.sketch import sketch_many
from tests.helpers import prose
docs = [prose(1, 2000), prose(5, 777), ["é", "\\ud800"], []]
print("".join(s.to_bytes().hex() for s in sketch_many(docs)))
"""


def test_deterministic_across_processes() -> None:
    expected = "".join(s.to_bytes().hex() for s in sketch_many([SAMPLE, prose(5, 777), ["é", "\ud800"], []]))
    for hash_seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        child = subprocess.run(
            [sys.executable, "-c", CHILD.format(root=str(ROOT))], env=env, capture_output=True, text=True, check=True
        )
        assert child.stdout.strip() == expected
