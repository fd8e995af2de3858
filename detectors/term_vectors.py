"""The term vector database: each page's top tf·idf terms, stored compactly.

Stata, Bharat and Maghoul, "The Term Vector Database: fast access to indexing terms for
Web pages" (WWW9, 2000), as the CS276 notes (lecture 13) give it: fast access to a
50-word term vector per page, terms chosen as the page's top 50 by tf·idf, term
weighting deferred to run time (it can be based on term frequency and document length).
Here a page's terms are its canonical tokens (``detectors.canonical``: NFKC, lowercased,
CJK runs as character bigrams) less stopwords and one-character words
(``detectors.canonical.content_bag``, English stopwords only).

Selection. Term t of page d weighs tf(t, d) · idf(t), with the smoothed idf

    idf(t) = ln((1 + N) / (1 + df(t))) + 1,

N the pages seen and df(t) those holding t, against whatever snapshot the caller has (a
crawl counts as it goes, so its first pages are chosen mostly by tf: the +1 keeps every
idf positive, so early pages still keep their most frequent words). The ``TOP_TERMS``
(50) heaviest are kept, ties broken by the smaller term id. The notes' restriction to the
middle third of the lexicon by df is not made at selection: the co-clustering drops the
terms found in too many vectors instead (``detectors.cocluster``).

What is stored is the term frequency, not the weight, so the weight can be computed at
run time against the df of the whole store, as the notes say; tf is quantised on a
half-octave log scale to 4 bits, q = clip(round(2 log2 tf), 0, 15), read back as
2^(q/2) (tf 1, 1.4, 2, 2.8, ... 181; larger counts read as 181): within 19% of the count
(half a step of √2), which is finer than tf·idf's own meaning.

Layout of one vector of n terms (n <= 127), term ids sorted ascending:

    byte 0            n
    ceil(n / 2) bytes the 4-bit weights, two a byte, the first in the high nibble
    n varints         the first id, then each gap to the next id less one (ids are
                      distinct), LEB128 (``detectors.linkgraph.varint_encode``)

Term ids are dense and given in order of first sight across the crawl, so the gaps
between a page's 50 ids are mostly one or two bytes. Decoding many vectors at once is
numpy over their concatenation: the varint regions and the weight regions are found
from each vector's first byte, not by a loop over vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.linkgraph import _varint_ends, varint_decode, varint_encode
from mirrorscope.detectors.runs import ramp, runs

__all__ = [
    "MAX_TERMS",
    "TOP_TERMS",
    "WEIGHT_LEVELS",
    "DocumentFrequencies",
    "TermVectors",
    "count_terms",
    "decode_many",
    "dequantise",
    "encode_many",
    "idf",
    "quantise",
    "select_top",
    "vectors_of",
]

#: Terms kept per page (the CS276 notes' term vector database: 50).
TOP_TERMS = 50
#: Most terms a vector may hold: its size is one byte under 128.
MAX_TERMS = 127
#: Levels of the 4-bit quantised term frequency.
WEIGHT_LEVELS = 16


@dataclass(frozen=True, slots=True)
class TermVectors:
    """Vectors in CSR form: vector ``i`` holds ``term_ids[offsets[i] : offsets[i + 1]]``
    (ascending, distinct, int64) with quantised frequencies ``levels`` (uint8, 0..15)."""

    offsets: np.ndarray
    term_ids: np.ndarray
    levels: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def rows(self) -> np.ndarray:
        """The vector of each entry (int64)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)

    def tf(self) -> np.ndarray:
        """The term frequencies read back from the levels (float64)."""
        return dequantise(self.levels)


def idf(document_frequency: ArrayLike, n_documents: int) -> np.ndarray:
    """Smoothed idf, ln((1 + N) / (1 + df)) + 1 (module docstring), float64."""
    df = np.asarray(document_frequency, dtype=np.float64)
    return np.log((1.0 + n_documents) / (1.0 + df)) + 1.0


def quantise(tf: ArrayLike) -> np.ndarray:
    """Term frequencies (>= 1) as 4-bit levels clip(round(2 log2 tf), 0, 15), uint8."""
    t = np.maximum(np.asarray(tf, dtype=np.float64), 1.0)
    return np.clip(np.rint(2.0 * np.log2(t)), 0, WEIGHT_LEVELS - 1).astype(np.uint8)


def dequantise(levels: ArrayLike) -> np.ndarray:
    """The term frequency a level stands for, 2^(q/2) (float64)."""
    return np.exp2(np.asarray(levels, dtype=np.float64) / 2.0)


def count_terms(
    rows: ArrayLike, term_ids: ArrayLike, n_rows: int, counts: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Occurrences (row, term id), each ``counts`` times (once without), as CSR counts:
    (offsets (n_rows + 1,), term ids ascending within each row, counts), all int64."""
    r = np.asarray(rows, dtype=np.int64)
    t = np.asarray(term_ids, dtype=np.int64)
    if r.size and (r.min() < 0 or r.max() >= n_rows):
        raise ValueError("rows must lie in [0, n_rows)")
    width = int(t.max()) + 1 if t.size else 1
    keys = r * width + t
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts, lengths = runs(keys)
    if counts is not None and starts.size:
        lengths = np.add.reduceat(np.asarray(counts, dtype=np.int64)[order], starts)
    first = keys[starts]
    row_of = first // width
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=n_rows), out=offsets[1:])
    return offsets, first % width, lengths


def select_top(
    offsets: ArrayLike, term_ids: ArrayLike, counts: ArrayLike, term_idf: ArrayLike, k: int = TOP_TERMS
) -> TermVectors:
    """Each row's ``k`` terms of largest tf·idf (ties: smaller id first), ids ascending,
    frequencies quantised. ``term_idf`` is the idf of each entry (same length as
    ``term_ids``)."""
    if not 1 <= k <= MAX_TERMS:
        raise ValueError(f"k must lie in [1, {MAX_TERMS}]")
    off = np.asarray(offsets, dtype=np.int64)
    ids = np.asarray(term_ids, dtype=np.int64)
    tf = np.asarray(counts, dtype=np.float64)
    weight = tf * np.asarray(term_idf, dtype=np.float64)
    sizes = np.diff(off)
    rows = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    order = np.lexsort((ids, -weight, rows))  # by row, heaviest first, then smaller id
    keep = order[ramp(sizes) < k] if order.size else order
    keep = keep[np.lexsort((ids[keep], rows[keep]))]
    kept = np.minimum(sizes, k)
    new_offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    return TermVectors(new_offsets, ids[keep], quantise(tf[keep]))


def encode_many(vectors: TermVectors) -> list[bytes]:
    """Each vector in the byte layout of the module docstring."""
    sizes = vectors.sizes
    if sizes.size and sizes.max() > MAX_TERMS:
        raise ValueError(f"a vector holds more than {MAX_TERMS} terms")
    ids = vectors.term_ids.astype(np.int64)
    first = ramp(sizes) == 0
    values = np.empty(ids.size, dtype=np.int64)
    values[first] = ids[first]
    values[~first] = (ids[1:] - ids[:-1] - 1)[~first[1:]]
    if values.size and values.min() < 0:
        raise ValueError("term ids must be ascending and distinct within a vector")
    varints = varint_encode(values)
    value_bytes = np.diff(np.concatenate(([-1], _varint_ends(varints))))
    rows = vectors.rows
    varint_per_row = np.bincount(rows, weights=value_bytes, minlength=sizes.size).astype(np.int64)
    nibble_per_row = (sizes + 1) // 2
    lengths = 1 + nibble_per_row + varint_per_row
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    out[starts] = sizes.astype(np.uint8)
    # Weights: entry j of a row goes to its row's byte 1 + j // 2, high nibble when j is even.
    position = ramp(sizes)
    shift = np.where(position % 2 == 0, 4, 0).astype(np.uint8)
    np.add.at(out, np.repeat(starts + 1, sizes) + position // 2, (vectors.levels.astype(np.uint8) << shift))
    varint_starts = starts + 1 + nibble_per_row
    out[np.repeat(varint_starts, varint_per_row) + ramp(varint_per_row)] = varints
    data = out.tobytes()
    ends = starts + lengths
    return [data[a:b] for a, b in zip(starts.tolist(), ends.tolist())]


def decode_many(blobs: Sequence[bytes]) -> TermVectors:
    """The vectors of ``encode_many``'s bytes, in order."""
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    if not lengths.size:
        return TermVectors(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8))
    if lengths.min() < 1:
        raise ValueError("an empty term vector blob")
    data = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    sizes = data[starts].astype(np.int64)
    nibble_bytes = (sizes + 1) // 2
    varint_bytes = lengths - 1 - nibble_bytes
    if sizes.max() > MAX_TERMS or varint_bytes.min() < 0:
        raise ValueError("not a term vector blob")
    varint_region = np.repeat(starts + 1 + nibble_bytes, varint_bytes) + ramp(varint_bytes)
    values = varint_decode(data[varint_region]).astype(np.int64)
    if values.size != int(sizes.sum()):
        raise ValueError("not a term vector blob: term count and ids disagree")
    first = ramp(sizes) == 0
    steps = values + 1
    steps[first] = values[first]
    total = np.cumsum(steps)
    # Each vector's running sum restarts at its first id.
    before = np.repeat(total[first] - steps[first], sizes[sizes > 0])
    ids = total - before
    position = ramp(sizes)
    packed = data[np.repeat(starts + 1, sizes) + position // 2]
    levels = np.where(position % 2 == 0, packed >> 4, packed & 0x0F).astype(np.uint8)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return TermVectors(offsets, ids, levels)


class DocumentFrequencies:
    """Document frequencies grown page by page: ``df[t]`` pages hold term id ``t``, of
    ``n_documents`` pages; ``pending`` the increments not yet handed to a store."""

    def __init__(self, df: ArrayLike = (), n_documents: int = 0) -> None:
        self.df = np.asarray(df, dtype=np.int64).copy()
        self.n_documents = int(n_documents)
        self.pending = np.zeros(self.df.size, dtype=np.int64)

    def _grow(self, size: int) -> None:
        if size > self.df.size:
            self.df = np.concatenate((self.df, np.zeros(size - self.df.size, dtype=np.int64)))
            self.pending = np.concatenate((self.pending, np.zeros(size - self.pending.size, dtype=np.int64)))

    def add(self, offsets: np.ndarray, term_ids: np.ndarray) -> None:
        """Count the pages of CSR ``offsets``/``term_ids`` (distinct ids in each row)."""
        self._grow(int(term_ids.max()) + 1 if term_ids.size else 0)
        counts = np.bincount(term_ids, minlength=self.df.size)
        self.df += counts
        self.pending += counts
        self.n_documents += int(offsets.size - 1)

    def take_pending(self) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, increments) counted since the last call, and forget them."""
        ids = np.flatnonzero(self.pending)
        increments = self.pending[ids]
        self.pending[ids] = 0
        return ids, increments


def vectors_of(
    rows: ArrayLike, term_ids: ArrayLike, n_rows: int, frequencies: DocumentFrequencies,
    counts: ArrayLike | None = None, k: int = TOP_TERMS,
) -> TermVectors:
    """The term vectors of ``n_rows`` pages whose term occurrences are (row, term id)
    (each ``counts`` times), counted into ``frequencies`` first, so each page weighs its
    terms against the pages before it and itself."""
    offsets, ids, counts = count_terms(rows, term_ids, n_rows, counts)
    frequencies.add(offsets, ids)
    return select_top(offsets, ids, counts, idf(frequencies.df[ids], frequencies.n_documents), k)
