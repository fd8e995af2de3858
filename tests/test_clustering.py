"""Broder's syntactic clustering: planted near-duplicates, exact estimates, chunking, hostile input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors import minhash
from mirrorscope.detectors.clustering import (
    cluster_sketches,
    cluster_super_shingles,
    containment_pairs,
    default_prefix,
    sketch_arrays,
)
from mirrorscope.detectors.lsh import candidate_pairs
from mirrorscope.detectors.minhash import EMPTY
from mirrorscope.detectors.sketch import IncompatibleSketchError, SketchParams, sketch_many
from mirrorscope.detectors.supershingles import super_shingles

S = 200


def random_set(rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.integers(0, 2**64 - 1, size, dtype=np.uint64)


def variant(rng: np.random.Generator, base: np.ndarray, replace: float) -> np.ndarray:
    """`base` with a fraction `replace` of its elements swapped for new ones."""
    out = base.copy()
    change = rng.random(base.size) < replace
    out[change] = random_set(rng, int(change.sum()))
    return out


def sketch(shingles: np.ndarray, s: int = S) -> np.ndarray:
    """MIN_s: the s smallest distinct values."""
    return np.unique(shingles)[:s]


def csr(sketches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.concatenate(([0], np.cumsum([len(x) for x in sketches]))).astype(np.int64)
    values = np.concatenate(sketches).astype(np.uint64) if sketches else np.empty(0, dtype=np.uint64)
    return offsets, values


def planted(
    seed: int, groups: int = 40, unrelated: int = 150, s: int = S
) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """Groups of 2-6 documents at pairwise resemblance >= 0.8 (each variant replaces at
    most 5% of the base's 100-600 shingles; a few are exact copies), decoys at resemblance
    ~0.25 to a group's base, and unrelated documents. Documents shuffled. Returns the
    sketches, the planted group of each document, and the full shingle sets."""
    rng = np.random.default_rng(seed)
    sets, truth = [], []
    for g in range(groups):
        base = random_set(rng, int(rng.integers(100, 600)))
        for member in range(int(rng.integers(2, 7))):
            sets.append(base if member == 0 or rng.random() < 0.15 else variant(rng, base, rng.uniform(0.0, 0.05)))
            truth.append(g)
        if g % 4 == 0:
            sets.append(variant(rng, base, 0.6))
            truth.append(groups + len(sets))
    for _ in range(unrelated):
        sets.append(random_set(rng, int(rng.integers(30, 600))))
        truth.append(groups + len(sets))
    order = rng.permutation(len(sets))
    sets = [sets[k] for k in order]
    return [sketch(x, s) for x in sets], np.array(truth)[order], sets


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal as partitions (labels may differ)."""
    return len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist())) == len(set(b.tolist()))


def reference_estimate(a_full: np.ndarray, b_full: np.ndarray, dropped: np.ndarray, s: int, estimator: str) -> float:
    """The estimators by set operations, on sketches with the dropped values removed."""
    a = a_full[~np.isin(a_full, dropped)]
    b = b_full[~np.isin(b_full, dropped)]
    union = np.union1d(a, b)
    common = np.intersect1d(a, b)
    if estimator == "jaccard":
        return common.size / union.size if union.size else 0.0
    # A truncated sketch that lost values to the drop knows only its s' smallest.
    s_pair = min(s, a.size if a_full.size >= s else s, b.size if b_full.size >= s else s)
    sample = union[:s_pair]
    return np.count_nonzero(np.isin(sample, common)) / sample.size if sample.size else 0.0


def all_pairs(
    sketches: list[np.ndarray], dropped: np.ndarray, s: int, estimator: str, threshold: float
) -> dict[tuple[int, int], float]:
    found = {}
    for a, b in itertools.combinations(range(len(sketches)), 2):
        if sketches[a].size and sketches[b].size:
            r = reference_estimate(sketches[a], sketches[b], dropped, s, estimator)
            if r >= threshold:
                found[(a, b)] = r
    return found


def overlapping(seed: int, docs: int, pool: int, s: int) -> list[np.ndarray]:
    """Documents drawn from one pool of shingles: resemblances spread over 0 .. 1."""
    rng = np.random.default_rng(seed)
    shared = random_set(rng, pool)
    out = []
    for _ in range(docs):
        size = int(rng.integers(5, 3 * s))
        own = rng.choice(shared, size=min(pool, size), replace=False)
        out.append(sketch(np.concatenate((own, random_set(rng, int(rng.integers(0, 20))))), s))
    return out


def test_planted_groups_are_recovered() -> None:
    sketches, truth, _ = planted(seed=1)
    offsets, values = csr(sketches)
    ids = np.arange(len(sketches)) + 1000
    result = cluster_sketches(ids, offsets, values)
    assert same_partition(result.labels, truth)
    assert np.array_equal(result.doc_ids, ids)
    assert (result.similarity >= 0.5).all() and (result.i < result.j).all()
    assert result.labels[result.labels].tolist() == result.labels.tolist()
    groups = result.groups()
    assert sum(len(g) for g in groups) == result.stats["clustered_documents"]
    assert all(len(set(truth[g - 1000].tolist())) == 1 for g in groups)
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)


@pytest.mark.parametrize("estimator", ["min_s", "jaccard"])
def test_estimates_are_exact_and_no_pair_is_missed(estimator: str) -> None:
    s, threshold = 50, 0.3
    sketches = overlapping(seed=2, docs=70, pool=120, s=s)
    offsets, values = csr(sketches)
    exact_prefix = int((1 - threshold) * s) + 1
    result = cluster_sketches(
        np.arange(70), offsets, values, threshold=threshold, s=s, prefix=exact_prefix, estimator=estimator
    )
    expected = all_pairs(sketches, np.empty(0, dtype=np.uint64), s, estimator, threshold)
    got = {(a, b): r for a, b, r in zip(result.i.tolist(), result.j.tolist(), result.similarity.tolist())}
    assert got == expected
    assert len(expected) > 50
    if estimator == "min_s":
        # Without dropped values the estimate is Broder's, as detectors.minhash computes it.
        for (a, b), r in got.items():
            assert r == minhash.resemblance_min_s(sketches[a], sketches[b], s)


def test_common_fingerprints_are_dropped_from_the_sketches() -> None:
    s, threshold, limit = 60, 0.3, 5
    rng = np.random.default_rng(3)
    boiler = np.sort(random_set(rng, 6)) >> np.uint64(8)  # small: inside every sketch
    sketches = []
    for doc in overlapping(seed=3, docs=40, pool=150, s=s):
        own = boiler[rng.random(6) < 0.5]
        sketches.append(sketch(np.concatenate((doc, own)), s))
    offsets, values = csr(sketches)
    held, counts = np.unique(values, return_counts=True)
    dropped = held[counts > limit]
    assert set(boiler.tolist()) & set(dropped.tolist()) and dropped.size < held.size
    for estimator in ("min_s", "jaccard"):
        result = cluster_sketches(
            np.arange(40), offsets, values, threshold=threshold, s=s, max_docs_per_fingerprint=limit,
            prefix=int((1 - threshold) * s) + 1, estimator=estimator,
        )  # fmt: skip
        assert result.stats["dropped_fingerprints"] == dropped.size
        got = {(a, b): r for a, b, r in zip(result.i.tolist(), result.j.tolist(), result.similarity.tolist())}
        assert got == all_pairs(sketches, dropped, s, estimator, threshold)


def with_boilerplate(seed: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``planted`` documents with 3 boilerplate values each in ~30% of them: sketches,
    truth, CSR offsets and values, whole-document fingerprints."""
    sketches, truth, sets = planted(seed=seed, groups=60, unrelated=200)
    rng = np.random.default_rng(seed)
    boiler = random_set(rng, 3) >> np.uint64(10)
    sketches = [sketch(np.concatenate((x, boiler[rng.random(3) < 0.3])), S) for x in sets]
    offsets, values = csr(sketches)
    whole = np.array([hash(x.tobytes()) & (2**63 - 1) for x in sets], dtype=np.uint64)
    return sketches, truth, offsets, values, whole


def test_chunked_and_in_memory_give_identical_results() -> None:
    sketches, truth, offsets, values, whole = with_boilerplate(seed=4)
    runs = [
        cluster_sketches(np.arange(len(sketches)), offsets, values, document_fingerprints=whole,
                         max_docs_per_fingerprint=20, memory_budget=budget)
        for budget in (1 << 12, 1 << 16, 1 << 30)
    ]  # fmt: skip
    assert runs[0].stats["dropped_fingerprints"] > 0
    assert min(runs[0].stats[k] for k in ("common_pieces", "candidate_pieces", "estimate_batches")) > 1
    assert max(runs[2].stats[k] for k in ("common_pieces", "candidate_pieces", "estimate_batches")) == 1
    for run in runs[1:]:
        for name in ("labels", "identical", "i", "j", "similarity"):
            assert np.array_equal(getattr(run, name), getattr(runs[0], name)), name
    assert same_partition(runs[0].labels, truth)


def test_memory_mapped_input_gives_identical_results(tmp_path, monkeypatch) -> None:
    """A sketch file read through a memory map (its pages dropped from the resident set
    every 4 KB here) clusters exactly as the same arrays in memory."""
    from mirrorscope.detectors import clustering

    sketches, truth, offsets, values, whole = with_boilerplate(seed=6)
    np.save(tmp_path / "values.npy", values)
    mapped = np.load(tmp_path / "values.npy", mmap_mode="r")
    assert clustering._MappedPages(mapped).mapping is not None
    assert clustering._MappedPages(values).mapping is None
    monkeypatch.setattr(clustering, "_RELEASE_BYTES", 1 << 12)
    expected = cluster_sketches(np.arange(len(sketches)), offsets, values, document_fingerprints=whole,
                                max_docs_per_fingerprint=20)
    for budget in (1 << 12, 1 << 30):
        got = cluster_sketches(np.arange(len(sketches)), offsets, mapped, document_fingerprints=whole,
                               max_docs_per_fingerprint=20, memory_budget=budget)
        for name in ("labels", "identical", "i", "j", "similarity"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    assert expected.stats["dropped_fingerprints"] > 0
    assert same_partition(expected.labels, truth)


@pytest.mark.parametrize("budget", [1 << 12, 1 << 15, 1 << 30])
def test_common_fingerprints_counted_exactly_in_pieces(budget: int) -> None:
    """The pigeonhole pass finds every value held by more than the limit, whatever the
    number of pieces: counts straddle the limit."""
    from mirrorscope.detectors.clustering import _common_fingerprints, _MappedPages

    rng = np.random.default_rng(7)
    pool = np.sort(random_set(rng, 400))
    weights = 1.0 / np.arange(1, pool.size + 1) ** 0.8
    docs = [np.unique(rng.choice(pool, int(rng.integers(5, 60)), p=weights / weights.sum())) for _ in range(3000)]
    offsets, values = csr(docs)
    reps = np.arange(0, 3000, 2)  # counted over these only
    limit = 40
    held, counts = np.unique(np.concatenate([docs[k] for k in reps]), return_counts=True)
    expected = held[counts > limit]
    assert 0 < expected.size < held.size and np.any((counts > limit // 2) & (counts <= limit))
    dropped, pieces, kept = _common_fingerprints(offsets, values, reps, limit, budget, _MappedPages(values))
    assert np.array_equal(dropped, expected)
    assert np.array_equal(kept, [np.count_nonzero(~np.isin(d, expected)) for d in docs])
    assert (pieces > 1) == (budget < 1 << 20)


def test_identical_documents_collapse() -> None:
    rng = np.random.default_rng(5)
    a, b = sketch(random_set(rng, 300)), sketch(random_set(rng, 300))
    offsets, values = csr([a, b, a, a, b, sketch(random_set(rng, 50))])
    result = cluster_sketches(np.arange(6), offsets, values)
    assert result.identical.tolist() == [0, 1, 0, 0, 1, 5]
    assert result.labels.tolist() == [0, 1, 0, 0, 1, 5]
    assert result.i.size == 0 and result.stats["representatives"] == 3
    # Whole-document fingerprints decide what is identical; equal sketches still cluster.
    whole = np.array([7, 8, 9, 7, 8, 10], dtype=np.uint64)
    result = cluster_sketches(np.arange(6), offsets, values, document_fingerprints=whole)
    assert result.identical.tolist() == [0, 1, 2, 0, 1, 5]
    assert result.labels.tolist() == [0, 1, 0, 0, 1, 5]


def test_hostile_inputs() -> None:
    empty = cluster_sketches(np.empty(0, dtype=np.int64), [0], np.empty(0, dtype=np.uint64))
    assert empty.labels.size == 0 and empty.i.size == 0 and empty.groups() == []
    rng = np.random.default_rng(6)
    one = sketch(random_set(rng, 120))
    single = cluster_sketches([42], [0, one.size], one)
    assert single.labels.tolist() == [0] and single.identical.tolist() == [0]
    offsets, values = csr([one] * 500)
    same = cluster_sketches(np.arange(500), offsets, values)
    assert (same.labels == 0).all() and (same.identical == 0).all() and same.i.size == 0
    # Empty sketches resemble nothing, not even each other; their fingerprints can say
    # they are identical.
    nothing = np.empty(0, dtype=np.uint64)
    offsets, values = csr([nothing, one, nothing, one, nothing])
    result = cluster_sketches(np.arange(5), offsets, values)
    assert result.labels.tolist() == [0, 1, 2, 1, 4]
    whole = np.array([5, 6, 5, 6, 5], dtype=np.uint64)
    result = cluster_sketches(np.arange(5), offsets, values, document_fingerprints=whole)
    assert result.labels.tolist() == [0, 1, 0, 1, 0]
    offsets, values = csr([nothing] * 3)
    assert cluster_sketches(np.arange(3), offsets, values).labels.tolist() == [0, 1, 2]


def test_invalid_input_is_refused() -> None:
    with pytest.raises(ValueError, match="sorted"):
        cluster_sketches([1, 2], [0, 2, 4], np.array([1, 2, 9, 3], dtype=np.uint64))
    with pytest.raises(ValueError, match="sorted"):
        cluster_sketches([1], [0, 2], np.array([4, 4], dtype=np.uint64))
    with pytest.raises(ValueError, match="offsets"):
        cluster_sketches([1, 2], [0, 2], np.array([1, 2], dtype=np.uint64))
    with pytest.raises(ValueError):
        cluster_sketches([1], [0, 1], np.array([1], dtype=np.uint64), threshold=0.0)


def test_center_does_not_chain() -> None:
    rng = np.random.default_rng(7)
    a = random_set(rng, 150)
    b = np.concatenate((a[:100], random_set(rng, 50)))  # r(a, b) = 0.5
    c = np.concatenate((b[50:], random_set(rng, 50)))  # r(b, c) = 0.5, r(a, c) = 0.2
    offsets, values = csr([sketch(x) for x in (a, b, c)])
    chained = cluster_sketches(np.arange(3), offsets, values, threshold=0.4)
    assert chained.labels.tolist() == [0, 0, 0]
    centred = cluster_sketches(np.arange(3), offsets, values, threshold=0.4, method="center")
    assert len(set(centred.labels.tolist())) == 2
    sketches, truth, _ = planted(seed=8)
    offsets, values = csr(sketches)
    assert same_partition(cluster_sketches(np.arange(len(sketches)), offsets, values, method="center").labels, truth)


def test_merge_repairs_values_sharing_their_top_bits() -> None:
    # Three candidate pairs leave 61 bits of each value in the merge words: values
    # differing only in their 3 lowest bits tie, and the pair is recomputed exactly.
    high = np.uint64(0xF000000000000000)
    a = np.array([high | np.uint64(1), high | np.uint64(2), high | np.uint64(9)], dtype=np.uint64)
    b = np.array([high | np.uint64(2), high | np.uint64(3), high | np.uint64(9)], dtype=np.uint64)
    c = np.array([high | np.uint64(0), high | np.uint64(1), high | np.uint64(9)], dtype=np.uint64)
    offsets, values = csr([a, b, c])
    result = cluster_sketches(np.arange(3), offsets, values, threshold=0.1, s=3)
    got = {(x, y): r for x, y, r in zip(result.i.tolist(), result.j.tolist(), result.similarity.tolist())}
    assert got == all_pairs([a, b, c], np.empty(0, dtype=np.uint64), 3, "min_s", 0.1)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 40), max_size=25), min_size=1, max_size=12),
    st.integers(3, 20),
    st.sampled_from([0.2, 0.5, 0.8, 1.0]),
    st.sampled_from(["min_s", "jaccard"]),
    st.booleans(),
)
def test_estimates_match_the_reference_on_any_small_input(
    sets: list[set[int]], s: int, threshold: float, estimator: str, high: bool
) -> None:
    # With ``high``, values differ only in their lowest bits: most neighbours tie in the
    # merge words and take the exact path.
    base = np.uint64(2**63 + 2**62) if high else np.uint64(0)
    sketches = [np.array(sorted(x), dtype=np.uint64)[:s] + base for x in sets]
    offsets, values = csr(sketches)
    prefix = int((1 - threshold) * s) + 1
    result = cluster_sketches(
        np.arange(len(sets)), offsets, values, threshold=threshold, s=s, prefix=prefix, estimator=estimator
    )
    expected = {}
    firsts: dict[bytes, int] = {}
    for k, x in enumerate(sketches):  # identical sketches collapse to their first
        firsts.setdefault(x.tobytes(), k)
    reps = [k for k, x in enumerate(sketches) if x.size and firsts[x.tobytes()] == k]
    for a, b in itertools.combinations(reps, 2):
        r = reference_estimate(sketches[a], sketches[b], np.empty(0, dtype=np.uint64), s, estimator)
        if r >= threshold:
            expected[(a, b)] = r
    got = {(a, b): r for a, b, r in zip(result.i.tolist(), result.j.tolist(), result.similarity.tolist())}
    assert got == expected


def test_default_prefix() -> None:
    assert default_prefix(0.5) == 20
    assert default_prefix(0.8) == 9
    assert default_prefix(0.1, 200) == 132
    assert default_prefix(0.05, 20) == 20  # capped by the exact length
    assert default_prefix(1.0) == 1


def test_super_shingle_clustering() -> None:
    rng = np.random.default_rng(9)
    rows, truth = [], []
    for g in range(30):
        base = rng.integers(0, 2**64 - 1, 84, dtype=np.uint64)
        for _ in range(3):
            copy = base.copy()
            copy[rng.choice(84, 2, replace=False)] = rng.integers(
                0, 2**64 - 1, 2, dtype=np.uint64
            )  # >= 4 of 6 groups intact
            rows.append(copy)
            truth.append(g)
    for _ in range(50):
        rows.append(rng.integers(0, 2**64 - 1, 84, dtype=np.uint64))
        truth.append(len(truth) + 100)
    rows += [np.full(84, EMPTY, dtype=np.uint64)] * 3 + [rows[0]]
    truth += [len(truth) + 100, len(truth) + 101, len(truth) + 102, truth[0]]
    supers = super_shingles(np.array(rows))
    result = cluster_super_shingles(np.arange(len(rows)), supers)
    assert same_partition(result.labels, np.array(truth))
    assert result.identical[-1] == 0 and (result.similarity >= 2 / 6).all()
    assert same_partition(cluster_super_shingles(np.arange(len(rows)), supers, method="center").labels, np.array(truth))


def test_containment_from_mod_m_samples() -> None:
    rng = np.random.default_rng(10)
    big = random_set(rng, 3000)
    small = np.concatenate((big[:600], random_set(rng, 20)))  # mostly inside big
    other = random_set(rng, 1000)
    tiny = big[:100]
    samples = [minhash.mod_m(np.sort(x), np.array([x.size]), 25)[0] for x in (big, small, other, tiny)]
    offsets, values = csr(samples)
    a, b, c = containment_pairs(offsets, values, threshold=0.8)
    got = {(x, y): r for x, y, r in zip(a.tolist(), b.tolist(), c.tolist())}
    assert (1, 0) in got and got[(1, 0)] >= 0.8
    assert (0, 1) not in got and not any(2 in pair for pair in got)
    assert all(x != 3 for x, _ in got)  # its sample is too small to be the contained side
    for (x, y), r in got.items():
        assert r == pytest.approx(minhash.containment_mod_m(samples[x], samples[y]))


def test_real_sketches_end_to_end() -> None:
    """Token documents through ``detectors.sketch``: edited copies cluster, others do not."""
    rng = np.random.default_rng(12)
    words = [f"w{k}" for k in range(5000)]
    documents, truth = [], []
    for g in range(12):
        base = list(rng.choice(words, int(rng.integers(300, 900))))
        for _ in range(3):
            copy = list(base)
            for at in rng.choice(len(copy), 2, replace=False):  # two edited words: r ~ 0.95
                copy[at] = "edited"
            documents.append(copy)
            truth.append(g)
    for _ in range(20):
        documents.append(list(rng.choice(words, int(rng.integers(50, 900)))))
        truth.append(len(truth) + 100)
    documents += [[], [], documents[0]]
    truth += [len(truth) + 100, len(truth) + 101, truth[0]]
    arrays = sketch_arrays(sketch_many(documents))
    ids = np.arange(len(documents))
    result = cluster_sketches(ids, arrays.offsets, arrays.min_s, document_fingerprints=arrays.fingerprints)
    # The two empty documents have the same (empty) content: identical, by fingerprint.
    assert same_partition(result.labels, np.array(truth[:-3] + [-1, -1, truth[0]]))
    assert result.identical[-1] == 0 and result.identical[-2] == len(documents) - 3
    supers = cluster_super_shingles(ids, arrays.super_shingles)
    assert all(truth[x] == truth[y] for x, y in zip(supers.i.tolist(), supers.j.tolist()))
    found = set(map(tuple, candidate_pairs(arrays.signatures).tolist()))
    assert {(int(a), int(b)) for a, b in zip(result.i, result.j)} <= found
    a, b, c = containment_pairs(arrays.mod_offsets, arrays.mod_m)
    assert a.size > 20 and all(truth[x] == truth[y] for x, y in zip(a.tolist(), b.tolist()))
    sample = [arrays.mod_m[arrays.mod_offsets[k] : arrays.mod_offsets[k + 1]] for k in range(len(documents))]
    assert c.tolist() == [minhash.containment_mod_m(sample[x], sample[y]) for x, y in zip(a.tolist(), b.tolist())]
    with pytest.raises(IncompatibleSketchError):
        sketch_arrays(sketch_many(documents[:1]) + sketch_many(documents[:1], SketchParams(seed=7)))
    assert sketch_arrays([]).signatures.shape == (0, 84)
