"""LSH banding: the band choice, exact batch candidates, the online index, the packed sort."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mirrorscope.detectors.lsh import (
    LSHIndex,
    argsort_u64,
    band_keys,
    candidate_pairs,
    candidate_probability,
    choose_bands,
    equal_key_pairs,
)
from mirrorscope.detectors.minhash import EMPTY

SIZE = 84


def planted_signatures(
    rng: np.random.Generator, groups: int, size: int, agreement: float, singles: int
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Groups of `size` signatures whose positions agree pairwise with probability
    `agreement` (each keeps a position of the group's base with probability
    sqrt(agreement)), then unrelated ones; returns the rows and the planted pairs."""
    rows, planted = [], []
    for _ in range(groups):
        base = rng.integers(0, 2**64 - 1, SIZE, dtype=np.uint64)
        first = len(rows)
        for _ in range(size):
            variant = base.copy()
            change = rng.random(SIZE) > np.sqrt(agreement)
            variant[change] = rng.integers(0, 2**64 - 1, int(change.sum()), dtype=np.uint64)
            rows.append(variant)
        planted += list(itertools.combinations(range(first, first + size), 2))
    rows += list(rng.integers(0, 2**64 - 1, (singles, SIZE), dtype=np.uint64))
    order = rng.permutation(len(rows))
    where = np.argsort(order)
    shuffled = np.array(rows, dtype=np.uint64)[order]
    return shuffled, sorted((min(where[a], where[b]), max(where[a], where[b])) for a, b in planted)


def brute_force(sig: np.ndarray, bands: int, rows: int) -> set[tuple[int, int]]:
    found = set()
    empty = (sig == EMPTY).all(axis=1)
    for a, b in itertools.combinations(range(sig.shape[0]), 2):
        if empty[a] or empty[b]:
            continue
        for g in range(bands):
            if np.array_equal(sig[a, g * rows : (g + 1) * rows], sig[b, g * rows : (g + 1) * rows]):
                found.add((a, b))
                break
    return found


def test_choose_bands_for_the_default_signature() -> None:
    assert choose_bands() == (16, 5)
    for threshold in (0.5, 0.7, 0.8, 0.9):
        bands, rows = choose_bands(SIZE, threshold, recall=0.99)
        assert bands * rows <= SIZE
        assert candidate_probability(threshold, bands, rows) >= 0.99
        # One more row per band no longer reaches the recall.
        assert candidate_probability(threshold, SIZE // (rows + 1), rows + 1) < 0.99
    assert candidate_probability([0.0, 1.0], 16, 5).tolist() == [0.0, 1.0]


def test_band_keys_differ_between_bands_with_equal_rows() -> None:
    sig = np.tile(np.arange(5, dtype=np.uint64), 2).reshape(1, 10)
    keys = band_keys(sig, 2, 5)
    assert keys.shape == (1, 2) and keys[0, 0] != keys[0, 1]
    assert np.array_equal(keys, band_keys(sig.copy(), 2, 5))


def test_batch_candidates_equal_brute_force() -> None:
    rng = np.random.default_rng(1)
    sig, _ = planted_signatures(rng, groups=12, size=4, agreement=0.75, singles=100)
    # Some exact copies and rows that agree on a single band only.
    sig = np.concatenate((sig, sig[:5], sig[5:8]))
    sig[-1, 5:] = rng.integers(0, 2**64 - 1, SIZE - 5, dtype=np.uint64)
    got = candidate_pairs(sig, 16, 5)
    assert got.dtype == np.int64 and got.shape[1] == 2
    assert (got[:, 0] < got[:, 1]).all()
    assert np.array_equal(got, np.unique(got, axis=0))
    assert set(map(tuple, got.tolist())) == brute_force(sig, 16, 5)


def test_candidates_catch_pairs_above_threshold() -> None:
    rng = np.random.default_rng(2)
    sig, planted = planted_signatures(rng, groups=150, size=3, agreement=0.85, singles=2000)
    found = set(map(tuple, candidate_pairs(sig).tolist()))
    caught = sum(p in found for p in planted)
    # P(candidate | agreement 0.85) = 0.99996 per pair.
    assert caught >= len(planted) - 1
    # Unrelated signatures (agreement ~0) are never candidates.
    assert found <= set(planted)


def test_empty_signatures_never_collide() -> None:
    rng = np.random.default_rng(3)
    sig = rng.integers(0, 2**64 - 1, (6, SIZE), dtype=np.uint64)
    sig[[1, 2, 4]] = EMPTY
    sig[5] = sig[0]
    assert candidate_pairs(sig).tolist() == [[0, 5]]
    index = LSHIndex()
    for key, row in enumerate(sig):
        index.insert(key, row)
    assert len(index) == 3
    assert index.query(sig[1]).tolist() == []
    assert index.query(sig[0]).tolist() == [0, 5]
    assert candidate_pairs(np.empty((0, SIZE), dtype=np.uint64)).shape == (0, 2)


def test_online_index_matches_batch() -> None:
    rng = np.random.default_rng(4)
    sig, _ = planted_signatures(rng, groups=40, size=5, agreement=0.8, singles=300)
    ids = np.arange(sig.shape[0]) * 10 + 7  # the caller's ids, not positions
    expected = {(int(ids[a]), int(ids[b])) for a, b in candidate_pairs(sig).tolist()}
    index = LSHIndex(buffer_size=7)  # many flushes and level merges
    online = set()
    for key, row in zip(ids.tolist(), sig):
        online |= {(int(other), key) for other in index.query(row).tolist()}
        index.insert(key, row)
    assert online == expected
    assert len(index._levels) <= 8
    bulk = LSHIndex()
    bulk.insert_many(ids[:200], sig[:200])
    for key, row in zip(ids[200:].tolist(), sig[200:]):
        bulk.insert(key, row)
    for key, row in zip(ids.tolist(), sig):
        assert set(bulk.query(row).tolist()) == {key} | {b for a, b in expected if a == key} | {
            a for a, b in expected if b == key
        }
    assert bulk.nbytes < 250 * len(bulk)


def test_index_rejects_wrong_sizes() -> None:
    index = LSHIndex()
    with pytest.raises(ValueError):
        index.insert(1, np.zeros(10, dtype=np.uint64))
    with pytest.raises(ValueError):
        LSHIndex(bands=20, rows=5)


@pytest.mark.parametrize("size", [10, 40_000, 300_000])
def test_argsort_u64_is_a_stable_argsort(size: int) -> None:
    rng = np.random.default_rng(size)
    values = rng.integers(0, 2**64 - 1, size, dtype=np.uint64)
    values[rng.integers(0, size, size // 3)] = values[rng.integers(0, size, size // 3)]  # duplicates
    # Distinct values sharing their top bits, interleaved: the runs the packed sort must repair.
    clash = rng.integers(0, size, size // 10)
    values[clash] = (values[clash] & np.uint64(0xFFFFFFFF00000000)) | rng.integers(
        0, 2**20, clash.size, dtype=np.uint64
    )
    order, ordered = argsort_u64(values)
    assert np.array_equal(order, np.argsort(values, kind="stable"))
    assert np.array_equal(ordered, values[order])
    small = np.arange(size, dtype=np.uint64) % np.uint64(97)  # every top bit zero
    assert np.array_equal(argsort_u64(small)[0], np.argsort(small, kind="stable"))


def test_equal_key_pairs_in_batches() -> None:
    rng = np.random.default_rng(6)
    keys = rng.integers(0, 30, 200).astype(np.uint64)
    owners = np.arange(200) // 2  # two entries per owner
    expected = sorted((owners[a], owners[b]) for a, b in itertools.combinations(range(200), 2) if keys[a] == keys[b])
    for batch in (1, 7, 1 << 20):
        got = [(int(a), int(b)) for left, right in equal_key_pairs(keys, owners, batch) for a, b in zip(left, right)]
        assert sorted(got) == expected
    assert list(equal_key_pairs(np.array([5], dtype=np.uint64))) == []


def test_same_candidates_as_datasketch() -> None:
    import datasketch
    rng = np.random.default_rng(7)
    sig, _ = planted_signatures(rng, groups=30, size=4, agreement=0.8, singles=200)
    bands, rows = choose_bands(SIZE, 0.8)
    lsh = datasketch.MinHashLSH(threshold=0.8, num_perm=SIZE, params=(bands, rows))
    sketches = [datasketch.LeanMinHash(seed=1, hashvalues=row, scheme="affine64") for row in sig]
    for key, m in enumerate(sketches):
        lsh.insert(key, m)
    theirs = {(min(a, b), max(a, b)) for a, m in enumerate(sketches) for b in lsh.query(m) if a != b}
    assert set(map(tuple, candidate_pairs(sig, bands, rows).tolist())) == theirs
