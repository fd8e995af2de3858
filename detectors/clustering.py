"""Broder's syntactic clustering, offline: MIN_s sketches in, clusters of near-duplicates out.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997) cluster
30 million pages in four phases: sketch every document; sort <shingle, document> pairs;
expand them to <document, document, count> triples by sort-merge, summing counts (shingles
shared by more than 1,000 documents dropped, identical documents removed first); and join
the pairs above the resemblance threshold (50%) by union-find. Every phase works in pieces
that fit in memory and merges them ("divide, compute, merge").

``cluster_sketches`` takes each document's MIN_s sketch (``detectors.minhash``, s = 200:
the sorted, distinct s smallest permuted shingle fingerprints) in CSR form and runs:

1. **Identical documents** collapse to their first one: equal whole-document
   fingerprints (when given) or equal sketches (a hash per sketch, then checked value by
   value). Only representatives go on; members inherit their cluster.
2. **Common fingerprints**: those in more than ``max_docs_per_fingerprint`` (1,000)
   representatives' sketches are boilerplate and are removed from every sketch, as
   Broder removes them. Counted exactly in two ordered passes: each piece of documents
   sorted on its own keeps the values frequent enough there (by pigeonhole, a value in
   more than 1,000 sketches is in ceil(1,001 / pieces) of some piece's), then those
   candidates are counted over every piece.
3. **Candidates first.** Broder's expansion emits, for every shared fingerprint, every
   pair of its documents: sum of df(df - 1)/2 triples, most of them for pairs far below
   the threshold. Here only each sketch's prefix, its k smallest kept fingerprints, is
   sorted and expanded. A pair whose MIN_s estimate is r has a common fingerprint among the
   first k of the union of its sketches, and so in both prefixes, unless those k are all
   unshared: probability at most (1 - r)^k. The default k is the least with
   (1 - threshold)^k <= 1e-6 (k = 20 at 0.5); k = floor((1 - threshold) * s) + 1 makes
   the candidates exact (prefix filtering, Chaudhuri, Ganti and Kaushik, ICDE 2006): at
   least one of the first (1 - t) s + 1 values of the union is common when the estimate
   is >= t.

   ===========  ======  ======  ======  =======
   r \\ k        8       16      20      32
   ===========  ======  ======  ======  =======
   0.5          4e-3    2e-5    1e-6    2e-10
   0.6          7e-4    4e-7    1e-8    2e-13
   0.8          3e-6    7e-12   1e-14   4e-23
   ===========  ======  ======  ======  =======

   (miss probability (1 - r)^k of a pair at resemblance r)
4. **Exact MIN_s estimate for candidate pairs only**, a merge of the two sketches (for a
   batch of pairs at once: each value packed with its pair number into one word, one
   sort; O(|F(A)| + |F(B)|) per pair): Broder's estimator |MIN_s(F(A) u F(B)) n F(A) n F(B)| / |MIN_s(F(A) u F(B))|, on
   the sketches with common fingerprints removed; when that removal left a truncated
   sketch (one of s values) with s' < s values, the union's s' smallest are used (beyond
   them that sketch no longer knows its document). ``estimator="jaccard"`` uses
   |F(A) n F(B)| / |F(A) u F(B)| instead: the count-based estimate of Broder's
   <doc, doc, count> phase applied to MIN_s sketches (close to r for documents of similar
   size, biased for different sizes), as a SQL engine computes it.
5. Pairs at or above ``threshold`` (0.5) are joined by union-find
   (``detectors.unionfind``) or, with ``method="center"``, by Haveliwala's CENTER
   (``detectors.center``), which does not chain.

Memory: every phase runs in pieces of at most ``memory_budget`` bytes (default 512 MiB),
and of a few hundred thousand items where smaller is faster — document blocks for the
hashes, document pieces for the common fingerprints, hash ranges for the candidates,
batches of candidate pairs for the estimates — and the pieces' results are merged. The
clusters do not depend on the budget (``benchmarks/cluster.py`` measures time and peak
memory). Sketches larger than memory are passed memory-mapped (``np.load(path,
mmap_mode="r")``): every phase but the estimates reads them in order, and the pages read
are dropped from the resident set as it goes (10 million documents, 14.7 GB of
fingerprints, clustered in 149 s with a 6.6 GB peak and a 1 GiB budget;
``docs/MEASUREMENTS.md``).

``sketch_arrays`` turns ``detectors.sketch.DocumentSketch`` objects into these arrays;
``detectors.sketch_columns`` decodes stored sketches into them without the objects.

``cluster_super_shingles`` is the fast option: documents sharing at least 2 of their 6
super-shingles (``detectors.supershingles``; Henzinger, SIGIR 2006) are joined, with no
estimate; weak on short documents and blind to containment.

``containment_pairs`` estimates containment c(A, B) = |S(A) n S(B)| / |S(A)| from MOD_m
samples (Broder's estimator |V(A) n V(B)| / |V(A)|, ``detectors.minhash.mod_m``) by the
literal <doc, doc, count> expansion (its memory grows with the number of pairs sharing a
sampled value): MIN_s sketches cannot see that a small document lies inside a large one.
"""

from __future__ import annotations

import math
import mmap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.lsh import argsort_u64, equal_key_pairs, mix64
from mirrorscope.detectors.minhash import DEFAULT_S, EMPTY
from mirrorscope.detectors.runs import ramp, run_starts, runs, unique_sorted
from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch, IncompatibleSketchError
from mirrorscope.detectors.supershingles import DEFAULT_GROUP_SIZE, NEAR_DUPLICATE_MATCHES, super_shingles
from mirrorscope.detectors.unionfind import connected_components

__all__ = [
    "DEFAULT_MAX_DOCS_PER_FINGERPRINT",
    "DEFAULT_MEMORY_BUDGET",
    "DEFAULT_THRESHOLD",
    "Clusters",
    "SketchArrays",
    "cluster_sketches",
    "cluster_super_shingles",
    "containment_pairs",
    "default_prefix",
    "sketch_arrays",
]

#: Broder et al.'s resemblance threshold (50%).
DEFAULT_THRESHOLD = 0.5
#: Fingerprints in more sketches than this are dropped (Broder et al.: 1,000).
DEFAULT_MAX_DOCS_PER_FINGERPRINT = 1000
#: Bytes of working memory per piece of work.
DEFAULT_MEMORY_BUDGET = 1 << 29
#: Probability, at the threshold, that a pair is not a candidate (default prefix).
MISS_PROBABILITY = 1e-6

# Working bytes per item of each phase: sizes the pieces from the budget.
_BYTES_PER_ROW = 32
_BYTES_PER_PREFIX = 80
_BYTES_PER_PAIR = 64
_BYTES_PER_MERGED = 96
# Streaming phases go fastest in pieces of a few hundred thousand items (they stay in
# cache, and memory is reused instead of fresh pages from the kernel), below the budget.
_STREAM_ITEMS = 1 << 18
# A memory-mapped input's pages are dropped from the resident set after this many bytes
# were read (they stay in the page cache; ``_MappedPages``).
_RELEASE_BYTES = 1 << 29
# Resident bytes a scattered read of one document's sketch costs: a fault maps the
# page cache's whole folio (or fault_around_bytes) around the page read, not one page;
# measured ~250 KB a document on Linux 6.18 with the file cached.
_FAULT_AROUND = 1 << 18


@dataclass(frozen=True, slots=True, eq=False)
class Clusters:
    """The result of a clustering. Indices refer to positions in ``doc_ids``."""

    #: (n,) the documents, as given.
    doc_ids: np.ndarray
    #: (n,) int64: each document's cluster, named by the index of one member: the
    #: cluster's smallest index (union-find) or its centre (CENTER). Alone: itself.
    labels: np.ndarray
    #: (n,) int64: smallest index of the documents identical to each one (same
    #: whole-document fingerprint when given, else same non-empty sketch).
    identical: np.ndarray
    #: Pairs of representatives at or above the threshold, i < j, sorted, with their
    #: estimated similarity. Identical documents are not paired: see ``identical``.
    i: np.ndarray
    j: np.ndarray
    similarity: np.ndarray
    #: Counts and per-phase seconds.
    stats: dict[str, float] = field(default_factory=dict)

    def groups(self, min_size: int = 2) -> list[np.ndarray]:
        """Doc ids of each cluster of at least ``min_size`` documents, largest first."""
        order = np.argsort(self.labels, kind="stable")
        ordered = self.labels[order]
        starts, sizes = runs(ordered)
        big = np.flatnonzero(sizes >= min_size)
        big = big[np.argsort(-sizes[big], kind="stable")]
        return [self.doc_ids[order[starts[k] : starts[k] + sizes[k]]] for k in big.tolist()]


@dataclass(frozen=True, slots=True)
class SketchArrays:
    """Many documents' sketches as the arrays the functions here take."""

    #: (n + 1,) int64 and uint64: document k's MIN_s is ``min_s[offsets[k]:offsets[k + 1]]``.
    offsets: np.ndarray
    min_s: np.ndarray
    #: The same for MOD_m (``containment_pairs``).
    mod_offsets: np.ndarray
    mod_m: np.ndarray
    #: (n,) uint64 whole-document fingerprints.
    fingerprints: np.ndarray
    #: (n, signature_size) and (n, groups) uint64 (``detectors.lsh``, ``cluster_super_shingles``).
    signatures: np.ndarray
    super_shingles: np.ndarray


def sketch_arrays(sketches: Sequence[DocumentSketch]) -> SketchArrays:
    """Concatenate ``DocumentSketch`` objects; IncompatibleSketchError if their parameters differ."""
    params = sketches[0].params if sketches else DEFAULT_PARAMS
    if any(sketch.params != params for sketch in sketches):
        raise IncompatibleSketchError("sketches made with different parameters cannot be clustered together")

    def csr(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([part.size for part in parts], out=offsets[1:])
        return offsets, np.concatenate(parts).astype(np.uint64) if parts else np.empty(0, dtype=np.uint64)

    offsets, smallest = csr([sketch.min_s for sketch in sketches])
    mod_offsets, divisible = csr([sketch.mod_m for sketch in sketches])
    shape = (len(sketches), params.signature_size), (len(sketches), params.super_groups)
    return SketchArrays(
        offsets,
        smallest,
        mod_offsets,
        divisible,
        np.array([sketch.fingerprint for sketch in sketches], dtype=np.uint64),
        np.array([sketch.signature for sketch in sketches], dtype=np.uint64).reshape(shape[0]),
        np.array([sketch.super_shingles for sketch in sketches], dtype=np.uint64).reshape(shape[1]),
    )


def default_prefix(threshold: float, s: int = DEFAULT_S) -> int:
    """Prefix length that misses a pair at ``threshold`` with probability <= 1e-6,
    capped at the exact length floor((1 - threshold) * s) + 1."""
    exact = math.floor((1.0 - threshold) * s) + 1
    if threshold >= 1.0:
        return 1
    return min(exact, math.ceil(math.log(MISS_PROBABILITY) / math.log(1.0 - threshold)))


class _MappedPages:
    """The pages of a memory-mapped input (``np.load(..., mmap_mode="r")``) that this
    process has read, dropped from its resident set every ``_RELEASE_BYTES`` bytes.

    A file-backed page counts in a process's RSS once read, so streaming a 15 GB sketch
    file through a mapping would hold 15 GB; ``MADV_DONTNEED`` unmaps them (the kernel
    keeps them in its page cache while it has room). Does nothing for arrays in memory.
    """

    __slots__ = ("mapping", "read")

    def __init__(self, values: np.ndarray) -> None:
        base = values
        while isinstance(base, np.ndarray):
            base = base.base
        self.mapping = base if isinstance(base, mmap.mmap) else None
        self.read = 0

    def scattered(self, documents: int) -> None:
        """``documents`` sketches were read at scattered places."""
        self.touched(documents * _FAULT_AROUND)

    def touched(self, nbytes: int) -> None:
        if self.mapping is None:
            return
        self.read += nbytes
        if self.read >= _RELEASE_BYTES:
            self.mapping.madvise(mmap.MADV_DONTNEED)
            self.read = 0


def cluster_sketches(
    doc_ids: ArrayLike,
    offsets: ArrayLike,
    fingerprints: ArrayLike,
    *,
    document_fingerprints: ArrayLike | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_docs_per_fingerprint: int = DEFAULT_MAX_DOCS_PER_FINGERPRINT,
    s: int = DEFAULT_S,
    prefix: int | None = None,
    estimator: Literal["min_s", "jaccard"] = "min_s",
    method: Literal["union-find", "center"] = "union-find",
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> Clusters:
    """Cluster documents by the resemblance of their MIN_s sketches.

    Document k's sketch is ``fingerprints[offsets[k]:offsets[k + 1]]`` (uint64, sorted
    ascending, distinct: ``DocumentSketch.min_s``). ``document_fingerprints`` (n,) are
    whole-document fingerprints (``DocumentSketch.fingerprint``) for exact duplicates.
    ``prefix`` is the number of smallest fingerprints per sketch that make candidates
    (default ``default_prefix(threshold, s)``). Documents with empty sketches (no
    shingles) resemble nothing; equal whole-document fingerprints still group them.

    ``fingerprints`` may be memory-mapped (``np.load(path, mmap_mode="r")``): every
    phase reads it in order, in pieces, but for the candidates' estimates, and drops the
    pages it read from the resident set as it goes, so sketches larger than memory
    cluster in ``memory_budget`` plus about 64 bytes per document (10 million documents
    of ~180 fingerprints, 14.7 GB of input: ``benchmarks/cluster.py``).
    """
    started = time.perf_counter()
    ids, offsets, values = _check_csr(doc_ids, offsets, fingerprints)
    pages = _MappedPages(values)
    _check_options(threshold, max_docs_per_fingerprint, s, estimator, method, prefix)
    n = ids.size
    lengths = np.diff(offsets)
    stream = _stream_items(memory_budget, _BYTES_PER_ROW)
    stats: dict[str, float] = {"documents": n, "fingerprints": int(values.size)}

    top, (identical, combined, reps, anchor) = _identical_documents(offsets, values, document_fingerprints, stream, pages)
    stats |= {"representatives": reps.size, "identical_documents": int(np.count_nonzero(identical != np.arange(n)))}
    stats["seconds_identical"] = time.perf_counter() - started

    mark = time.perf_counter()
    dropped, pieces, kept = _common_fingerprints(offsets, values, reps, max_docs_per_fingerprint, memory_budget, pages)
    stats |= {"dropped_fingerprints": dropped.size, "common_pieces": pieces}
    stats["seconds_common"] = time.perf_counter() - mark

    mark = time.perf_counter()
    longest = int(kept[reps].max()) if reps.size else 0
    k = default_prefix(threshold, max(s, longest)) if prefix is None else prefix
    left, right, pieces = _prefix_candidates(offsets, values, reps, kept, dropped, k, memory_budget, pages)
    stats |= {"prefix": k, "candidate_pairs": left.size, "candidate_pieces": pieces}
    stats["seconds_candidates"] = time.perf_counter() - mark

    mark = time.perf_counter()
    similarity, batches = _estimate(offsets, values, kept, left, right, dropped, s, estimator, top, memory_budget, pages)
    close = similarity >= threshold
    left, right, similarity = left[close], right[close], similarity[close]
    stats |= {"pairs": left.size, "estimate_batches": batches, "seconds_estimates": time.perf_counter() - mark}

    mark = time.perf_counter()
    labels = _join(method, left, right, similarity, combined, anchor)
    stats |= _cluster_stats(labels)
    stats["seconds_join"] = time.perf_counter() - mark
    stats["seconds"] = time.perf_counter() - started
    return Clusters(ids, labels, identical, left, right, similarity, stats)


def _check_options(
    threshold: float, max_docs_per_fingerprint: int, s: int, estimator: str, method: str, prefix: int | None
) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1]")
    if max_docs_per_fingerprint < 2 or s < 1:
        raise ValueError("max_docs_per_fingerprint must be >= 2 and s >= 1")
    if estimator not in ("min_s", "jaccard") or method not in ("union-find", "center"):
        raise ValueError(f"unknown estimator {estimator!r} or method {method!r}")
    if prefix is not None and prefix < 1:
        raise ValueError("prefix must be positive")


def _identical_documents(
    offsets: np.ndarray, values: np.ndarray, document_fingerprints: ArrayLike | None, rows: int, pages: _MappedPages
) -> tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Phase 1: the largest fingerprint, and ``_collapse``'s identical groups, merged
    groups, representatives and anchors, from equal sketches (hashed, then checked value
    by value) and equal whole-document fingerprints."""
    keys, top = _sketch_keys(offsets, values, rows, pages)
    filled = np.flatnonzero(np.diff(offsets) > 0)
    same_sketch = np.arange(offsets.size - 1, dtype=np.int64)
    same_sketch[filled] = filled[_first_equal(keys[filled])]
    _confirm_equal_sketches(same_sketch, offsets, values, rows, pages)
    return top, _collapse(same_sketch, document_fingerprints, filled)


def _join(
    method: str, left: np.ndarray, right: np.ndarray, similarity: np.ndarray, combined: np.ndarray, anchor: np.ndarray
) -> np.ndarray:
    """Phase 5: cluster labels from the pairs at or above the threshold. Union-find
    continues from the identical groups ``combined``; CENTER clusters representatives,
    whose identical members follow them through ``anchor``."""
    if method == "union-find":
        return connected_components(combined.size, left, right, labels=combined)
    return center_clusters(combined.size, left, right, similarity)[anchor]


def cluster_super_shingles(
    doc_ids: ArrayLike,
    supers: ArrayLike,
    *,
    document_fingerprints: ArrayLike | None = None,
    min_matches: int = NEAR_DUPLICATE_MATCHES,
    group_size: int = DEFAULT_GROUP_SIZE,
    method: Literal["union-find", "center"] = "union-find",
) -> Clusters:
    """Cluster documents sharing at least ``min_matches`` of their super-shingles.

    ``supers`` (n, groups) uint64 as ``DocumentSketch.super_shingles``, from signatures
    of ``groups * group_size`` positions. Documents with equal super-shingles collapse
    first, like identical documents; empty documents (all-``EMPTY`` signature) match
    nothing. Similarity of a pair: the fraction of super-shingles shared.
    """
    started = time.perf_counter()
    ids = np.asarray(doc_ids, dtype=np.int64).ravel()
    table = np.asarray(supers, dtype=np.uint64)
    if table.ndim != 2 or table.shape[0] != ids.size:
        raise ValueError(f"expected super-shingles of shape ({ids.size}, groups)")
    if method not in ("union-find", "center") or not 1 <= min_matches <= table.shape[1]:
        raise ValueError(f"unknown method {method!r} or min_matches out of range")
    n, groups = table.shape
    empty_row = super_shingles(np.full((1, groups * group_size), EMPTY, dtype=np.uint64), groups, group_size)[0]
    filled = np.flatnonzero(~(table == empty_row).all(axis=1))
    row_keys = np.zeros(n, dtype=np.uint64)
    for g in range(groups):
        row_keys[filled] = mix64(row_keys[filled] ^ table[filled, g])
    same = np.arange(n, dtype=np.int64)
    same[filled] = filled[_first_equal(row_keys[filled])]
    members = np.flatnonzero(same != np.arange(n))
    collided = members[(table[members] != table[same[members]]).any(axis=1)]
    same[collided] = collided
    identical, combined, reps, anchor = _collapse(same, document_fingerprints, filled)
    found = [left * n + right for g in range(groups) for left, right in equal_key_pairs(table[reps, g], reps)]
    # A pair appears once per super-shingle it shares.
    pair_keys, matches = _count_sorted(np.concatenate(found) if found else np.empty(0, dtype=np.int64))
    hits = matches >= min_matches
    pair_keys, matches = pair_keys[hits], matches[hits]
    left, right, similarity = pair_keys // max(n, 1), pair_keys % max(n, 1), matches / groups
    if method == "union-find":
        labels = connected_components(n, left, right, labels=combined)
    else:
        labels = center_clusters(n, left, right, similarity)[anchor]
    stats: dict[str, float] = {"documents": n, "representatives": reps.size, "pairs": left.size}
    stats |= _cluster_stats(labels)
    stats["seconds"] = time.perf_counter() - started
    return Clusters(ids, labels, identical, left, right, similarity, stats)


def containment_pairs(
    offsets: ArrayLike,
    samples: ArrayLike,
    *,
    threshold: float = 0.8,
    max_docs_per_fingerprint: int = DEFAULT_MAX_DOCS_PER_FINGERPRINT,
    min_sample: int = 10,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c): ordered pairs with c(a, b) = |V(a) n V(b)| / |V(a)| >= ``threshold``.

    ``samples[offsets[k]:offsets[k + 1]]`` is document k's MOD_m sample (sorted,
    distinct; ``DocumentSketch.mod_m``). Documents with fewer than ``min_sample`` values
    left after dropping common ones are never the contained side (a sample of 3 says
    little). Pass one document per identical group: identical documents contain each
    other, pairwise.
    """
    ids = np.arange(np.asarray(offsets).size - 1, dtype=np.int64)
    _, offsets, values = _check_csr(ids, offsets, samples)
    if not 0.0 < threshold <= 1.0 or min_sample < 1:
        raise ValueError("threshold must be in (0, 1] and min_sample >= 1")
    n = ids.size
    for lo, hi in _blocks(offsets, _stream_items(memory_budget, _BYTES_PER_ROW)):
        _check_sorted(values[offsets[lo] : offsets[hi]], offsets[lo + 1 : hi] - offsets[lo])
    dropped, _, _ = _common_fingerprints(offsets, values, ids, max_docs_per_fingerprint, memory_budget, _MappedPages(values))
    owners = np.repeat(ids, np.diff(offsets))
    keep = ~_in_sorted(values, dropped) if dropped.size else np.ones(values.size, dtype=bool)
    sizes = np.bincount(owners[keep], minlength=n)
    counted = []
    for left, right in equal_key_pairs(mix64(values[keep]), owners[keep], _stream_items(memory_budget, 64)):
        counted.append(_count_sorted(left * n + right))
    pair_keys, common = _merge_counts(counted)
    a, b = pair_keys // max(n, 1), pair_keys % max(n, 1)
    # Each unordered pair gives both directions.
    a, b, common = np.concatenate((a, b)), np.concatenate((b, a)), np.concatenate((common, common))
    eligible = sizes[a] >= min_sample
    a, b, common = a[eligible], b[eligible], common[eligible]
    containment = common / sizes[a]
    close = containment >= threshold
    order = np.lexsort((b[close], a[close]))
    return a[close][order], b[close][order], containment[close][order]


def _stream_items(budget: int, item_bytes: int) -> int:
    return max(1 << 12, min(budget // item_bytes, _STREAM_ITEMS))


def _check_csr(doc_ids: ArrayLike, offsets: ArrayLike, fingerprints: ArrayLike) -> tuple[np.ndarray, ...]:
    ids = np.asarray(doc_ids, dtype=np.int64).ravel()
    bounds = np.asarray(offsets, dtype=np.int64).ravel()
    values = np.asarray(fingerprints, dtype=np.uint64).ravel()
    if bounds.shape != (ids.size + 1,) or bounds[0] != 0 or bounds[-1] != values.size:
        raise ValueError("offsets must have n + 1 entries from 0 to len(fingerprints)")
    if np.any(np.diff(bounds) < 0):
        raise ValueError("offsets must not decrease")
    return ids, bounds, values


def _blocks(offsets: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Consecutive document ranges of about ``rows`` fingerprints (at least one document)."""
    n = offsets.size - 1
    cuts = [0]
    while cuts[-1] < n:
        end = int(np.searchsorted(offsets, offsets[cuts[-1]] + rows, side="right")) - 1
        cuts.append(min(n, max(end, cuts[-1] + 1)))
    return list(zip(cuts[:-1], cuts[1:]))


def _check_sorted(block: np.ndarray, inner: np.ndarray) -> None:
    """Raise unless each document's values in ``block`` (split at ``inner``) rise strictly."""
    rising = block[1:] > block[:-1]
    rising[inner[(inner > 0) & (inner < block.size)] - 1] = True
    if not rising.all():
        raise ValueError("each document's fingerprints must be sorted ascending and distinct")


def _sketch_keys(offsets: np.ndarray, values: np.ndarray, rows: int, pages: _MappedPages) -> tuple[np.ndarray, int]:
    """A 64-bit hash of each sketch (with its length), and the largest fingerprint.

    Checks that each sketch is sorted and distinct on the way.
    """
    n = offsets.size - 1
    sums = np.zeros(n, dtype=np.uint64)
    top = 0
    for lo, hi in _blocks(offsets, rows):
        start, end = int(offsets[lo]), int(offsets[hi])
        block = values[start:end]
        pages.touched(block.nbytes)
        if not block.size:
            continue
        _check_sorted(block, offsets[lo + 1 : hi] - start)
        top = max(top, int(block.max()))
        running = np.concatenate((np.zeros(1, dtype=np.uint64), np.cumsum(mix64(block))))
        sums[lo:hi] = running[offsets[lo + 1 : hi + 1] - start] - running[offsets[lo:hi] - start]
    return mix64(sums + np.diff(offsets).astype(np.uint64)), top


def _first_equal(keys: np.ndarray) -> np.ndarray:
    """For each entry, the smallest index holding an equal key."""
    if not keys.size:
        return np.empty(0, dtype=np.int64)
    order, ordered = argsort_u64(mix64(np.asarray(keys, dtype=np.uint64)))
    starts = run_starts(ordered)
    first = np.empty(keys.size, dtype=np.int64)
    first[order] = order[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    return first


def _confirm_equal_sketches(same: np.ndarray, offsets: np.ndarray, values: np.ndarray, rows: int, pages: _MappedPages) -> None:
    """Unlink (in ``same``) documents whose sketch only hashed like their first's."""
    members = np.flatnonzero(same != np.arange(same.size))
    lengths = np.diff(offsets)
    differ = members[lengths[members] != lengths[same[members]]]
    ends = np.cumsum(lengths[members])
    first = 0
    while first < members.size:
        last = max(first + 1, int(np.searchsorted(ends, ends[first] - lengths[members[first]] + rows, side="right")))
        batch = members[first:last]
        batch = batch[lengths[batch] == lengths[same[batch]]]
        width = lengths[batch]
        step = ramp(width)
        pages.scattered(2 * batch.size)
        mismatch = (
            values[np.repeat(offsets[batch], width) + step] != values[np.repeat(offsets[same[batch]], width) + step]
        )
        differ = np.concatenate(
            (differ, batch[np.bincount(np.repeat(np.arange(batch.size), width)[mismatch], minlength=batch.size) > 0])
        )
        first = last
    same[differ] = differ


def _collapse(
    same: np.ndarray, document_fingerprints: ArrayLike | None, filled: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Identical groups (by whole-document fingerprint when given, else ``same``: the
    first document with the same sketch), the groups merged with ``same`` (smallest
    index), their representatives (first member with a sketch: ``filled``) and each
    document's representative (its group's label when no member has a sketch)."""
    n = same.size
    if document_fingerprints is None:
        identical = combined = same
    else:
        whole = np.asarray(document_fingerprints, dtype=np.uint64).ravel()
        if whole.shape != (n,):
            raise ValueError(f"expected {n} document fingerprints, got {whole.size}")
        identical = _first_equal(whole)
        members = np.flatnonzero(same != np.arange(n))
        combined = connected_components(n, members, same[members], labels=identical)
    lead = np.full(n, n, dtype=np.int64)
    np.minimum.at(lead, combined[filled], filled)
    reps = np.sort(lead[lead < n])
    anchor = np.where(lead[combined] < n, lead[combined], combined) if n else combined
    return identical, combined, reps, anchor


def _in_sorted(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """values in the sorted array ``table`` (a small one: binary search stays in cache)."""
    where = np.searchsorted(table, values)
    where[where == table.size] = 0
    return table[where] == values


def _common_fingerprints(
    offsets: np.ndarray, values: np.ndarray, reps: np.ndarray, limit: int, budget: int, pages: _MappedPages
) -> tuple[np.ndarray, int, np.ndarray]:
    """Sorted fingerprints in more than ``limit`` of the representatives' sketches, the
    number of pieces the work took, and every sketch's length once they are removed.

    Divide, compute, merge, in two passes that each read the sketches once, in order
    (so a memory-mapped input larger than memory streams from disk). The documents are
    cut into P consecutive pieces of about budget / 16 values. A fingerprint in more than
    ``limit`` sketches is, by pigeonhole, in at least ceil((limit + 1) / P) sketches of
    one piece: pass 1 sorts each piece's values on its own and keeps those that reach
    that count (the common ones and a few coincidences); pass 2 counts these candidates
    exactly over every piece, and where they occur.
    """
    lengths = np.diff(offsets)
    if reps.size <= limit:
        return np.empty(0, dtype=np.uint64), 0, lengths
    chosen = np.zeros(lengths.size, dtype=bool)
    chosen[reps] = True
    blocks = _blocks(offsets, max(1 << 12, budget // 16))
    need = -(-(limit + 1) // len(blocks))
    found = []
    for lo, hi in blocks:
        block = values[offsets[lo] : offsets[hi]]
        picked = block[np.repeat(chosen[lo:hi], lengths[lo:hi])]
        pages.touched(block.nbytes)
        picked.sort()
        # A value held ``need`` times or more equals the value need - 1 places on.
        if picked.size >= need:
            found.append(unique_sorted(picked[need - 1 :][picked[need - 1 :] == picked[: picked.size - need + 1]]))
    candidates = unique_sorted(np.concatenate(found)) if found else np.empty(0, dtype=np.uint64)
    if not candidates.size:
        return candidates, len(blocks), lengths
    counts = np.zeros(candidates.size, dtype=np.int64)
    hit_at, hit_value = [], []
    for lo, hi in _blocks(offsets, _stream_items(budget, _BYTES_PER_ROW)):
        block = values[offsets[lo] : offsets[hi]]
        pages.touched(block.nbytes)
        where = np.searchsorted(candidates, block)
        where[where == candidates.size] = 0
        hits = np.flatnonzero(candidates[where] == block)
        hit_at.append(hits + offsets[lo])
        hit_value.append(where[hits])
    at, value = np.concatenate(hit_at), np.concatenate(hit_value)
    owner = np.searchsorted(offsets, at, side="right") - 1
    counts = np.bincount(value[chosen[owner]], minlength=candidates.size)
    common = counts > limit
    kept = lengths - np.bincount(owner[common[value]], minlength=lengths.size)
    return candidates[common], len(blocks), kept


def _kept_values(
    offsets: np.ndarray, values: np.ndarray, docs: np.ndarray, width: np.ndarray, dropped: np.ndarray, take: np.ndarray
) -> np.ndarray:
    """The first ``take[d]`` kept fingerprints of each document, concatenated, reading
    ``width[d]`` fingerprints of each (enough to find them)."""
    chunk = values[np.repeat(offsets[docs], width) + ramp(width)]
    if not dropped.size:
        return chunk if np.array_equal(width, take) else chunk[ramp(width) < np.repeat(take, width)]
    keep = ~_in_sorted(chunk, dropped)
    running = np.cumsum(keep)
    # Kept values of a document so far: the running count minus the count before it.
    before = np.concatenate(([0], running))[np.cumsum(width) - width]
    keep &= running - np.repeat(before, width) <= np.repeat(take, width)
    return chunk[keep]


def _prefix_candidates(
    offsets: np.ndarray,
    values: np.ndarray,
    reps: np.ndarray,
    kept: np.ndarray,
    dropped: np.ndarray,
    k: int,
    budget: int,
    pages: _MappedPages,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Document pairs (i < j) whose sketches share one of their k smallest kept values,
    and the number of pieces.

    Divide, compute, merge: the prefixes are read in document order, a slice at a time,
    and their hashed values split by their top bits into pieces that sort within the
    budget; equal values fall in one piece.
    """
    lengths = np.diff(offsets)
    take = np.minimum(kept[reps], k)
    width = np.minimum(lengths[reps], take + lengths[reps] - kept[reps])
    spread = np.empty(int(take.sum()), dtype=np.uint64)
    ends = np.cumsum(width)
    rows = _stream_items(budget, _BYTES_PER_PREFIX)
    first = filled = 0
    while first < reps.size:
        last = max(first + 1, int(np.searchsorted(ends, ends[first] - width[first] + rows, side="right")))
        part = _kept_values(offsets, values, reps[first:last], width[first:last], dropped, take[first:last])
        pages.touched(8 * int(offsets[reps[last - 1] + 1] - offsets[reps[first]]))
        spread[filled : filled + part.size] = mix64(part)
        filled += part.size
        first = last
    owner = np.repeat(np.arange(reps.size, dtype=np.int32 if reps.size < 2**31 else np.int64), take)
    m = max(reps.size, 1)
    bits = min(16, (-(-spread.size * _BYTES_PER_PREFIX // budget) - 1).bit_length())
    piece_of = (spread >> np.uint64(64 - bits)).astype(np.uint16) if bits else None
    batch = _stream_items(budget, _BYTES_PER_PAIR)
    found = []
    for piece in range(1 << bits):
        chosen = np.flatnonzero(piece_of == piece) if piece_of is not None else slice(None)
        for left, right in equal_key_pairs(spread[chosen], owner[chosen], batch):
            found.append(unique_sorted(left.astype(np.int64) * m + right))
    pair_keys = unique_sorted(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)
    return reps[pair_keys // m], reps[pair_keys % m], 1 << bits


def _estimate(
    offsets: np.ndarray,
    values: np.ndarray,
    kept: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    dropped: np.ndarray,
    s: int,
    estimator: str,
    top: int,
    budget: int,
    pages: _MappedPages,
) -> tuple[np.ndarray, int]:
    """Similarity of each candidate pair, and the number of batches of about ``budget``
    bytes it took."""
    lengths = np.diff(offsets)
    similarity = np.empty(left.size, dtype=np.float64)
    merged = np.cumsum(kept[left] + kept[right])
    per_batch = _stream_items(budget, _BYTES_PER_MERGED)
    first = batches = 0
    while first < left.size:
        batches += 1
        done = merged[first - 1] if first else 0
        last = max(first + 1, int(np.searchsorted(merged, done + per_batch, side="right")))
        a, b = left[first:last], right[first:last]
        va = _kept_values(offsets, values, a, lengths[a], dropped, kept[a])
        vb = _kept_values(offsets, values, b, lengths[b], dropped, kept[b])
        pages.scattered(a.size + b.size)
        similarity[first:last] = _merge_estimate(va, kept[a], lengths[a], vb, kept[b], lengths[b], s, estimator, top)
        first = last
    return similarity, batches


def _merge_estimate(
    va: np.ndarray,
    la: np.ndarray,
    full_a: np.ndarray,
    vb: np.ndarray,
    lb: np.ndarray,
    full_b: np.ndarray,
    s: int,
    estimator: str,
    top: int,
) -> np.ndarray:
    """Estimates for pairs p = (A_p, B_p) from their kept sketches (concatenated in pair
    order, lengths la and lb), all pairs merged by one sort.

    Each value becomes one word: pair number, the value's top bits, side (A = 0, B = 1).
    After sorting, each pair's values are in ascending order, a common value as an A word
    directly followed by its B word. A word's index in va (or vb) is its position minus
    the B (or A) words before it, so the candidates are checked on the full values. A
    pair where two different values share their top 63 - log2(pairs) bits (~1e-11 per
    pair in batches of ~1,000 pairs) is recomputed exactly on its own.
    """
    pairs = la.size
    words, pair_shift = _merged_words(va, la, vb, lb, top)
    common_at, tied = _common_words(words, va, vb)
    pair_of_common = (words[common_at] >> pair_shift).astype(np.int64)
    common = np.bincount(pair_of_common, minlength=pairs)
    union = la + lb - common
    if estimator == "jaccard":
        result = np.divide(common, union, out=np.zeros(pairs), where=union > 0)
    else:
        truncated = np.iinfo(np.int64).max
        s_pair = np.minimum(s, np.minimum(np.where(full_a >= s, la, truncated), np.where(full_b >= s, lb, truncated)))
        # Rank of a common value in the union: its position in the pair's merged run
        # minus the duplicates (B words of common values) before it.
        block_start = np.cumsum(la + lb) - (la + lb)
        duplicates_before = np.cumsum(common) - common
        rank = common_at - block_start[pair_of_common] - (np.arange(common_at.size) - duplicates_before[pair_of_common])
        inside = np.bincount(pair_of_common[rank < s_pair[pair_of_common]], minlength=pairs)
        sample = np.minimum(s_pair, union)
        result = np.divide(inside, sample, out=np.zeros(pairs), where=sample > 0)
    if tied.size:
        a_start = np.cumsum(la) - la
        b_start = np.cumsum(lb) - lb
        for p in sorted(set((words[tied] >> pair_shift).tolist())):
            a = va[a_start[p] : a_start[p] + la[p]]
            b = vb[b_start[p] : b_start[p] + lb[p]]
            result[p] = _exact_estimate(a, b, int(full_a[p]), int(full_b[p]), s, estimator)
    return result


def _merged_words(
    va: np.ndarray, la: np.ndarray, vb: np.ndarray, lb: np.ndarray, top: int
) -> tuple[np.ndarray, np.uint64]:
    """Every value of both sides as one word (pair number, top bits, side), sorted, and
    the shift of the pair number."""
    pairs = la.size
    pair_bits = max(1, (pairs - 1).bit_length())
    value_bits = 63 - pair_bits
    shift = np.uint64(max(0, top.bit_length() - value_bits))
    pair_shift = np.uint64(value_bits + 1)
    ids = np.arange(pairs, dtype=np.uint64) << pair_shift
    words = np.empty(va.size + vb.size, dtype=np.uint64)
    for part, values, count, side in ((words[: va.size], va, la, 0), (words[va.size :], vb, lb, 1)):
        np.right_shift(values, shift, out=part)
        part <<= np.uint64(1)
        part |= np.repeat(ids | np.uint64(side), count)
    # A's words, then B's, are each one ascending run: timsort merges them in linear
    # time, twice as fast as the default quicksort here.
    words.sort(kind="stable")
    return words, pair_shift


def _common_words(words: np.ndarray, va: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in the merged ``words`` of the A words of common values, and of words
    whose top bits tie with a neighbour's but whose values differ (their pairs are
    recomputed exactly)."""
    one = np.uint64(1)
    b_seen = np.cumsum(words & one)
    # Neighbours in one pair with the same top bits (words equal but maybe for the side
    # bit): an A word then a B word holding a common value, or a tie.
    differ = words[1:] ^ words[:-1]
    close = np.flatnonzero(differ <= one)
    a_then_b = differ[close] == one
    del differ
    first = close[a_then_b]
    in_b = b_seen[first].astype(np.int64)  # B words before the A word at ``first``
    equal = va[first - in_b] == vb[in_b]
    return first[equal], np.concatenate((close[~a_then_b], first[~equal]))


def _exact_estimate(a: np.ndarray, b: np.ndarray, full_a: int, full_b: int, s: int, estimator: str) -> float:
    """The estimate of one pair by set operations: the reference for ``_merge_estimate``."""
    union = np.union1d(a, b)
    common = np.intersect1d(a, b, assume_unique=True)
    if estimator == "jaccard":
        return common.size / union.size if union.size else 0.0
    s_pair = min(s, a.size if full_a >= s else s, b.size if full_b >= s else s)
    sample = union[:s_pair]
    return np.count_nonzero(np.isin(sample, common)) / sample.size if sample.size else 0.0


def _count_sorted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys.sort()
    starts, counts = runs(keys)
    return keys[starts], counts


def _merge_counts(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not parts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    keys = np.concatenate([k for k, _ in parts])
    counts = np.concatenate([c for _, c in parts])
    order, _ = argsort_u64(keys.view(np.uint64))
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(run_starts(keys))
    return keys[starts], np.add.reduceat(counts, starts) if keys.size else counts


def _cluster_stats(labels: np.ndarray) -> dict[str, float]:
    sizes = np.bincount(labels, minlength=labels.size) if labels.size else labels
    return {
        "clusters": int(np.count_nonzero(sizes >= 2)),
        "clustered_documents": int(sizes[sizes >= 2].sum()),
        "largest_cluster": int(sizes.max()) if sizes.size else 0,
    }
