"""LSH signatures and ExtractSimilarPairs by sorting, over min-hash signature matrices.

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000).
Each bag has an MH signature of m min-hash values (``detectors.weighted_minhash``). An LSH
signature concatenates k of them; l LSH signatures per bag, table j using k positions
drawn at random from the m. Two bags with similarity s share the LSH signature of a
table with probability s^k, so they become a candidate pair with probability

    P(s) = 1 - (1 - s^k)^l,

LSH banding's S-curve with l bands of k rows: ``detectors.lsh.candidate_probability(s,
bands=l, rows=k)``.

With the paper's k = 3, l = 125 (m = 80): P(0.5) = 1 - 6e-8, P(0.3) = 0.966,
P(0.2) = 0.63, P(0.1) = 0.12: every pair worth keeping is a candidate, and the cost is
the low-similarity candidates that the filter then drops. The filter keeps a pair when
its MH signatures agree on at least 20% of the m positions (16 of 80), and its
similarity is that agreement fraction, an unbiased estimate of the (weighted) Jaccard
similarity of the bags with standard deviation sqrt(s(1 - s) / m) (0.056 at s = 0.5).

ExtractSimilarPairs, by sorting and never through dicts: for each table, the bags' LSH
keys (the k values hashed to one 64-bit word; a spurious 64-bit collision only costs one
verification) are sorted, runs of equal keys are the groups, and a group of g bags gives
its g(g - 1) / 2 pairs. Groups larger than ``max_group`` (100) would be quadratic: 10,000
template links with the same words give 5e7 pairs per table. Such a group gives instead
the g - 1 pairs joining its lowest row (the hub) to every other member: pairs stay
linear in g (at most l (n - 1) over all tables), and the hub, the lowest row wherever
it is in the group, is what CENTER (ties broken by ascending rows) makes the centre, so
the group still comes out as one cluster. Pairs between two non-hub members of a huge
group are missed unless another table finds them: the price of bounded output. Such
groups are not only hostile: on Zipfian bags (``benchmarks/anchors.py``) bags whose
minimum at all three positions of a table is the same copy of one common term form
groups of thousands, each worth millions of pairs uncapped.

Each table's candidate pairs are verified at once (an equality count over the m
positions of both rows) and only pairs passing the filter are kept; survivors, found
again in many tables when similar, are deduplicated by ``np.unique`` on packed
``i * n + j`` words whenever they outgrow the deduplicated set, so memory follows the
number of distinct similar pairs, not l times it.

Bags with no elements have an all-``EMPTY`` signature: they would share every LSH key,
so they are never indexed and never in a pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.lsh import argsort_u64, mix64
from mirrorscope.detectors.minhash import splitmix64
from mirrorscope.detectors.runs import run_pairs, runs

__all__ = [
    "DEFAULT_K",
    "DEFAULT_L",
    "DEFAULT_LSH_SEED",
    "DEFAULT_MAX_GROUP",
    "DEFAULT_MIN_AGREEMENT",
    "EMPTY",
    "SimilarPairs",
    "lsh_keys",
    "lsh_tables",
    "similar_pairs",
    "similar_to",
]

#: MH values per LSH signature (the paper's k = 3).
DEFAULT_K = 3
#: LSH signatures (tables) per bag (the paper's l = 125).
DEFAULT_L = 125
#: Fraction of the m positions two MH signatures must share to keep a pair (paper: 20%).
DEFAULT_MIN_AGREEMENT = 0.2
#: Largest group of equal LSH keys that gives all its pairs; larger ones give a star.
DEFAULT_MAX_GROUP = 100
#: Seed of the tables' positions and of the hubs of large groups.
DEFAULT_LSH_SEED = 0x616E63686F722D6C  # b"anchor-l"
#: Min-hash value of a bag without elements.
EMPTY = np.uint32(0xFFFFFFFF)

# Candidate pairs verified per numpy pass: 2 gathered rows of m uint32 each (~64 MB).
_VERIFY_BATCH = 1 << 17
# Survivors held before the first deduplication (8 bytes each).
_DEDUP_FLOOR = 1 << 22


@dataclass(frozen=True, slots=True)
class SimilarPairs:
    """Pairs of rows ``first < second`` and their MH agreement, by descending similarity
    (ties by ascending ``(first, second)``)."""

    first: np.ndarray  # int64
    second: np.ndarray  # int64
    similarity: np.ndarray  # float64, agreeing positions / m

    def __len__(self) -> int:
        return int(self.first.size)


def lsh_tables(m: int, k: int = DEFAULT_K, l: int = DEFAULT_L, seed: int = DEFAULT_LSH_SEED) -> np.ndarray:  # noqa: E741
    """(l, k) positions of the m MH values each table concatenates: k distinct positions
    per table, a partial Fisher-Yates shuffle driven by splitmix64(seed), so the tables
    are the same in every process and numpy version."""
    if not 1 <= k <= m:
        raise ValueError(f"k must be between 1 and m = {m}")
    if l < 1:
        raise ValueError("l must be positive")
    words = splitmix64(seed)
    tables = np.empty((l, k), dtype=np.intp)
    for table in range(l):
        positions = list(range(m))
        for i in range(k):
            pick = i + next(words) % (m - i)
            positions[i], positions[pick] = positions[pick], positions[i]
        tables[table] = positions[:k]
    return tables


def lsh_keys(values: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of the (n, k) MH ``values``: the values chained through
    splitmix64's finaliser (a bijection of 64-bit words), so equal rows give equal keys
    and the keys' top bits are spread, as ``argsort_u64`` wants them."""
    key = np.zeros(values.shape[0], dtype=np.uint64)
    for column in values.T:
        key ^= column
        key = mix64(key)
    return key


def _check_signatures(signatures: ArrayLike) -> np.ndarray:
    sig = np.asarray(signatures)
    if sig.ndim != 2:
        raise ValueError("signatures must be a 2-d array, one row per bag")
    if sig.dtype != np.uint32:
        raise ValueError(f"signatures must be uint32 min-hash values, not {sig.dtype}")
    return sig


def _agreement(sig: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Agreeing positions of the signatures of each pair of rows (int64)."""
    agree = np.empty(first.size, dtype=np.int64)
    for start in range(0, first.size, _VERIFY_BATCH):
        stop = start + _VERIFY_BATCH
        agree[start:stop] = np.count_nonzero(sig[first[start:stop]] == sig[second[start:stop]], axis=1)
    return agree


def _needed(m: int, min_agreement: float) -> int:
    """Fewest agreeing positions meeting ``min_agreement`` (the epsilon absorbs 0.2 * 80
    coming out as 16.000000000000004)."""
    if not 0.0 <= min_agreement <= 1.0:
        raise ValueError("min_agreement must be in [0, 1]")
    return int(np.ceil(min_agreement * m - 1e-9))


def similar_pairs(
    signatures: ArrayLike,
    k: int = DEFAULT_K,
    l: int = DEFAULT_L,  # noqa: E741
    min_agreement: float = DEFAULT_MIN_AGREEMENT,
    max_group: int = DEFAULT_MAX_GROUP,
    seed: int = DEFAULT_LSH_SEED,
) -> SimilarPairs:
    """ExtractSimilarPairs over (n, m) uint32 MH ``signatures``: the row pairs sharing an
    LSH signature in at least one of ``l`` tables and agreeing on ``min_agreement`` of
    the m positions (see the module docstring)."""
    sig = _check_signatures(signatures)
    n, m = sig.shape
    if max_group < 2:
        raise ValueError("max_group must be at least 2")
    needed = _needed(m, min_agreement)
    tables = lsh_tables(m, k, l, seed)
    indexed = np.flatnonzero((sig != EMPTY).any(axis=1))
    width = np.uint64(n)
    kept: list[np.ndarray] = []
    distinct = fresh = 0
    for positions in tables:
        order, ordered = argsort_u64(lsh_keys(sig[:, positions])[indexed])
        # Rows ascend within each run (a stable sort of ascending rows), so a run's
        # first entry, the hub of a star, is its lowest row.
        rows = indexed[order]
        for left, right in run_pairs(*runs(ordered), star_above=max_group):
            first, second = rows[left], rows[right]
            passed = _agreement(sig, first, second) >= needed
            kept.append(first[passed].astype(np.uint64) * width + second[passed].astype(np.uint64))
            fresh += kept[-1].size
        if fresh > max(distinct, _DEDUP_FLOOR):
            kept = [np.unique(np.concatenate(kept))]
            distinct, fresh = kept[0].size, 0
    packed = np.unique(np.concatenate(kept)) if kept else np.empty(0, dtype=np.uint64)
    first = (packed // width).astype(np.int64)
    second = (packed % width).astype(np.int64)
    agree = _agreement(sig, first, second)
    order = np.lexsort((second, first, -agree))
    return SimilarPairs(first[order], second[order], agree[order] / m)


def similar_to(
    signature: ArrayLike, signatures: ArrayLike, min_agreement: float = DEFAULT_MIN_AGREEMENT
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``signatures`` agreeing with ``signature`` on ``min_agreement`` of the
    positions, and their similarity, by descending similarity then row: a full scan
    (m equality tests per row, ~0.1 s for a million rows), for one-off look-ups."""
    sig = _check_signatures(signatures)
    one = np.asarray(signature, dtype=np.uint32)
    if one.shape != (sig.shape[1],):
        raise ValueError(f"signature must have {sig.shape[1]} values")
    if (one == EMPTY).all():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    agree = np.count_nonzero(sig == one, axis=1)
    rows = np.flatnonzero(agree >= _needed(sig.shape[1], min_agreement))
    rows = rows[np.argsort(-agree[rows], kind="stable")]
    return rows.astype(np.int64), agree[rows] / sig.shape[1]
