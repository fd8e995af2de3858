"""Weighted min-hash signatures of anchor bags (MH signatures).

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000)
give every bag m = 80 min-hash values; a bag's term t with multiplicity k
(``detectors.tfidf``) counts as the elements (t, 1) ... (t, k), so that agreement
estimates weighted Jaccard similarity. h_i(x) = fmix32(key(x) xor s_i) for i < m, the
minimum over the bag's elements. key(t, c) is the top half of the c-th splitmix64
output seeded with the 64-bit fingerprint of term t's UTF-8 bytes
(``detectors.rabin.RABIN64``), so keys depend only on the words, never on the order in
which a vocabulary met them; s_i are splitmix64(seed) words; fmix32 is MurmurHash3's
32-bit finaliser. Values are uint32: half the memory and time of 64-bit values, and two
distinct elements of a union of u elements tie with probability about u / 2^32 per
position, far below the estimator's own spread. P[h_i agree] is the Jaccard similarity
of the expanded sets; the tests check the spread of the agreement fraction against
sqrt(J (1 - J) / m).

Vectorised: signatures are computed for bags sorted by element count, a chunk of bags of
nearly equal size at a time padded to one width (with copies of each bag's own last
element, which leave its minimum unchanged), so all m functions of a chunk are one
(bags, width, m) numpy block reduced along its middle axis; ``np.minimum.reduceat``
pays ~20 ns per segment and bag, more than the hashing. Bags larger than a chunk are
reduced in slices.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.anchor_bags import Bags
from mirrorscope.detectors.anchor_lsh import EMPTY
from mirrorscope.detectors.lsh import mix64
from mirrorscope.detectors.minhash import splitmix64
from mirrorscope.detectors.runs import ramp

__all__ = ["DEFAULT_M", "DEFAULT_SEED", "EMPTY", "minhash_signatures"]

#: MH values per bag (the paper's m = 80).
DEFAULT_M = 80
#: Seed of the m min-hash functions.
DEFAULT_SEED = 0x616E63686F722D6D  # b"anchor-m"

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # splitmix64's increment
_FMIX1 = np.uint32(0x85EBCA6B)
_FMIX2 = np.uint32(0xC2B2AE35)
_S16, _S13 = np.uint32(16), np.uint32(13)
# Hash values per padded chunk (bags x width x m uint32): ~2 MB, so the chunk and its
# scratch copy stay in cache through the finaliser's eight passes.
_CHUNK_VALUES = 1 << 19
# CSR entries, and the elements they expand to (an entry with multiplicity c gives c
# elements, up to the cap), expanded into element keys per numpy pass (~40 bytes per
# element: 1M elements, ~40 MB of temporaries at most).
_EXPAND_ENTRIES = 1 << 20
_EXPAND_ELEMENTS = 1 << 20


def _function_seeds(seed: int, m: int) -> np.ndarray:
    words = splitmix64(seed)
    return np.array([next(words) >> 32 for _ in range(m)], dtype=np.uint32)


def _element_keys(term_keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """key(t, c) for c = 1 .. count of every CSR entry, concatenated: the top 32 bits of
    the c-th splitmix64 output seeded with t's key."""
    ends = np.cumsum(counts)
    keys = np.empty(int(ends[-1]) if ends.size else 0, dtype=np.uint32)
    start = 0
    while start < counts.size:
        # Bounded by elements, not entries: an entry expands to up to ``cap`` (255) elements.
        done = int(ends[start - 1]) if start else 0
        stop = max(start + 1, min(int(np.searchsorted(ends, done + _EXPAND_ELEMENTS, side="right")), start + _EXPAND_ENTRIES))
        copies = counts[start:stop]
        state = np.repeat(term_keys[start:stop], copies)
        state += (ramp(copies) + 1).astype(np.uint64) * _GOLDEN
        first = int(ends[start] - counts[start])
        keys[first : first + state.size] = mix64(state) >> np.uint64(32)
        start = stop
    return keys


def _min_hash(keys: np.ndarray, seeds: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """fmix32(key xor seed_i) for every key (any shape) and seed, in ``out``'s buffer."""
    h = out[: keys.size * seeds.size].reshape(*keys.shape, seeds.size)
    s = scratch[: h.size].reshape(h.shape)
    np.bitwise_xor(keys[..., None], seeds, out=h)
    np.right_shift(h, _S16, out=s)
    h ^= s
    h *= _FMIX1
    np.right_shift(h, _S13, out=s)
    h ^= s
    h *= _FMIX2
    np.right_shift(h, _S16, out=s)
    h ^= s
    return h


def minhash_signatures(bags: Bags, term_keys: ArrayLike, m: int = DEFAULT_M, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(n, m) uint32 MH signatures of bags whose counts are multiplicities; ``term_keys``
    (uint64, by term id: ``Vocabulary.keys``) name the terms. Empty bags get all ``EMPTY``."""
    if m < 1:
        raise ValueError("m must be positive")
    keys = np.asarray(term_keys, dtype=np.uint64)
    if bags.term_ids.size and int(bags.term_ids.max()) >= keys.size:
        raise ValueError("a term id has no key")
    counts = bags.counts.astype(np.int64)
    if (counts < 1).any():
        raise ValueError("multiplicities must be positive")
    elements = _element_keys(keys[bags.term_ids], counts)
    bounds = np.concatenate(([0], np.cumsum(counts)))[bags.offsets]
    starts, sizes = bounds[:-1], np.diff(bounds)
    seeds = _function_seeds(seed, m)
    signatures = np.full((len(bags), m), EMPTY, dtype=np.uint32)
    per_chunk = max(1, _CHUNK_VALUES // m)
    out = np.empty(per_chunk * m, dtype=np.uint32)
    scratch = np.empty_like(out)
    order = np.argsort(sizes, kind="stable")
    order = order[sizes[order] > 0]
    first = 0
    while first < order.size and sizes[order[first]] <= per_chunk:
        # Sorted sizes: the chunk's last bag is its widest; shrink until it fits.
        stop = min(order.size, first + per_chunk // int(sizes[order[first]]))
        while stop - first > 1 and (stop - first) * int(sizes[order[stop - 1]]) > per_chunk:
            stop = first + max(1, per_chunk // int(sizes[order[stop - 1]]))
        chunk = order[first:stop]
        width = int(sizes[chunk[-1]])
        index = starts[chunk, None] + np.minimum(np.arange(width), sizes[chunk, None] - 1)
        signatures[chunk] = _min_hash(elements[index], seeds, out, scratch).min(axis=1)
        first = stop
    for bag in order[first:].tolist():  # bags larger than a chunk, a slice at a time
        row = signatures[bag]
        for lo in range(int(starts[bag]), int(starts[bag] + sizes[bag]), per_chunk):
            piece = elements[lo : min(lo + per_chunk, int(starts[bag] + sizes[bag]))]
            np.minimum(row, _min_hash(piece, seeds, out, scratch).min(axis=0), out=row)
    return signatures
