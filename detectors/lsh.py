"""LSH banding over positional min-hash signatures, online and in batch.

Leskovec, Rajaraman and Ullman, *Mining of Massive Datasets*, chapter 3: cut each
signature into b bands of r consecutive positions (band g holds positions g*r .. g*r+r-1,
as in datasketch's ``MinHashLSH``); two documents are candidates when all r positions of
at least one band agree. Positions of ``detectors.minhash`` signatures agree with
probability s, the resemblance, so a pair is a candidate with probability
1 - (1 - s^r)^b, an S-curve whose steepest point is near (1/b)^(1/r).

``choose_bands(signature_size=84, threshold=0.8, recall=0.99)`` takes the largest r (the
fewest false candidates) whose b = signature_size // r bands still catch a pair at the
threshold with probability >= recall. Candidate probability for the 84-value signature:

====== ===== ===== ===== ===== ===== ===== ===== ===== =============
b x r   0.5   0.6   0.7   0.75  0.8   0.85  0.9   0.95  (1/b)^(1/r)
====== ===== ===== ===== ===== ===== ===== ===== ===== =============
21 x 4 0.742 0.946 0.997 1.000 1.000 1.000 1.000 1.000 0.467
16 x 5 0.398 0.726 0.947 0.987 0.998 1.000 1.000 1.000 0.574
14 x 6 0.198 0.488 0.827 0.936 0.986 0.999 1.000 1.000 0.644
12 x 7 0.090 0.289 0.643 0.821 0.941 0.990 1.000 1.000 0.701
7 x 12 0.002 0.015 0.093 0.202 0.392 0.658 0.902 0.996 0.850
====== ===== ===== ===== ===== ===== ===== ===== ===== =============

The default choice at threshold 0.8 is 16 bands of 5 rows (80 of the 84 positions):
0.998 of the pairs at resemblance 0.8 become candidates, 40% at 0.5. datasketch's own
choice for 0.8 (7 x 12, minimising false positives and negatives equally) would miss 61%
of them; candidates are verified afterwards, so a false candidate costs one comparison
while a missed one is lost.

Each band's r values are hashed to one 64-bit key: every value XORed with a salt of its
(band, row), mixed by splitmix64's finaliser, and the band's values summed; equal rows in
different bands give different keys.

* ``candidate_pairs`` (batch): per band, one sort of <key, document> pairs packed into
  single uint64 words, documents with equal keys paired; the band's rows are compared
  exactly, so the pairs are exactly those with at least one identical band (the pairs
  datasketch's ``MinHashLSH`` returns with the same bands and rows), without dicts.
* ``LSHIndex`` (online, one page at a time during the crawl): an insert buffer (a dict)
  plus sorted arrays of (key, sequence number) merged like a log-structured merge tree;
  a query is one binary search per level. About 12 bytes per band per document (16
  bands: 200 bytes a document; datasketch's ``MinHashLSH``, dicts of byte-string keys,
  takes ~5 KB); a 64-bit key collision (probability ~2^-64 per pair and band) gives a
  spurious candidate.

Empty documents (signature all ``EMPTY``) have no shingles to share: they would all
share every band, so they are never indexed and never candidates; find them by their
exact fingerprint instead. A band value shared by g documents gives g(g-1)/2 pairs:
collapse identical documents first (``detectors.clustering`` does).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.minhash import DEFAULT_SIGNATURE_SIZE, EMPTY, splitmix64
from mirrorscope.detectors.runs import DEFAULT_PAIR_BATCH, ramp, run_pairs, runs, unique_sorted

__all__ = [
    "DEFAULT_RECALL",
    "DEFAULT_THRESHOLD",
    "LSHIndex",
    "argsort_u64",
    "band_keys",
    "candidate_pairs",
    "candidate_probability",
    "choose_bands",
    "equal_key_pairs",
    "mix64",
]

#: Resemblance the bands are tuned for.
DEFAULT_THRESHOLD = 0.8
#: Probability that a pair at the threshold becomes a candidate.
DEFAULT_RECALL = 0.99

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BAND_SEED = 0x6C73682D62616E64  # b"lsh-band": salts of the band hashes
# Below this size numpy's own argsort is as fast as the packed sort.
_SMALL_SORT = 1 << 15


def candidate_probability(similarity: ArrayLike, bands: int, rows: int) -> np.ndarray:
    """1 - (1 - s^rows)^bands: probability that a pair at resemblance s is a candidate."""
    s = np.asarray(similarity, dtype=np.float64)
    return 1.0 - (1.0 - s**rows) ** bands


def choose_bands(
    signature_size: int = DEFAULT_SIGNATURE_SIZE,
    threshold: float = DEFAULT_THRESHOLD,
    recall: float = DEFAULT_RECALL,
) -> tuple[int, int]:
    """(bands, rows): the most rows per band that still catch a pair at ``threshold`` with
    probability ``recall``, with as many bands as fit in ``signature_size``."""
    if signature_size < 1:
        raise ValueError("signature_size must be positive")
    if not (0.0 < threshold <= 1.0 and 0.0 < recall < 1.0):
        raise ValueError("threshold must be in (0, 1] and recall in (0, 1)")
    best = (signature_size, 1)
    for rows in range(2, signature_size + 1):
        bands = signature_size // rows
        if candidate_probability(threshold, bands, rows) >= recall:
            best = (bands, rows)
    return best


def _finalise(h: np.ndarray) -> np.ndarray:
    """splitmix64's output function, in place: a bijection of 64-bit words."""
    h ^= h >> np.uint64(30)
    h *= _MIX1
    h ^= h >> np.uint64(27)
    h *= _MIX2
    h ^= h >> np.uint64(31)
    return h


def mix64(values: ArrayLike) -> np.ndarray:
    """A fixed bijection of 64-bit words (splitmix64's output function) that spreads
    any keys over all 64 bits, as ``argsort_u64`` likes them; equal in, equal out."""
    return _finalise(np.array(values, dtype=np.uint64))


@lru_cache(maxsize=None)
def _salts(bands: int, rows: int) -> np.ndarray:
    words = splitmix64(_BAND_SEED)
    salts = np.array([next(words) for _ in range(bands * rows)], dtype=np.uint64).reshape(bands, rows)
    salts.setflags(write=False)
    return salts


def band_keys(signatures: ArrayLike, bands: int, rows: int) -> np.ndarray:
    """(n, bands) uint64: one hash per band of each (n, size) signature.

    Each value is XORed with a salt of its (band, row) and mixed, and a band's mixed
    values are summed: a handful of numpy calls for any number of signatures.
    """
    sig = np.asarray(signatures, dtype=np.uint64)
    if sig.ndim != 2 or sig.shape[1] < bands * rows or bands < 1 or rows < 1:
        raise ValueError(f"signatures of shape {sig.shape} do not hold {bands} bands of {rows} rows")
    cut = sig[:, : bands * rows].reshape(sig.shape[0], bands, rows)
    return _finalise(cut ^ _salts(bands, rows)).sum(axis=2, dtype=np.uint64)


def _empty_rows(sig: np.ndarray) -> np.ndarray:
    return (sig == EMPTY).all(axis=1)


def argsort_u64(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stable argsort of a uint64 array and the sorted values.

    numpy sorts 64-bit values (AVX-512 / AVX2 quicksort) an order of magnitude faster
    than it argsorts them. The index is packed under the top 64 - L bits of the values'
    range (L bits hold the index), the packed words sorted, and the few runs where
    distinct values share those top bits re-sorted exactly. Fast when the values spread
    over their range (hashes, fingerprints, keys i * n + j); exact for any input.
    """
    values = np.asarray(values, dtype=np.uint64)
    m = values.size
    if m <= _SMALL_SORT:
        order = np.argsort(values, kind="stable")
        return order, values[order]
    index_bits = (m - 1).bit_length()
    shift = np.uint64(max(0, int(values.max()).bit_length() + index_bits - 64))
    bits = np.uint64(index_bits)
    packed = (values >> shift) << bits
    packed |= np.arange(m, dtype=np.uint64)
    packed.sort()
    top = packed >> bits
    order = (packed & ((np.uint64(1) << bits) - np.uint64(1))).astype(np.int64)
    del packed
    ordered = values[order]
    same_top = top[1:] == top[:-1]
    del top
    clash = same_top & (ordered[1:] != ordered[:-1])
    if clash.any():
        run = np.concatenate(([0], np.cumsum(~same_top)))
        mixed = np.zeros(int(run[-1]) + 1, dtype=bool)
        mixed[run[1:][clash]] = True
        where = np.flatnonzero(mixed[run])
        sub = order[where]
        fixed = sub[np.lexsort((sub, values[sub]))]
        order[where] = fixed
        ordered[where] = values[fixed]
    return order, ordered


def equal_key_pairs(
    keys: ArrayLike, owners: ArrayLike | None = None, batch: int = DEFAULT_PAIR_BATCH
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of (left, right): every pair of entries with equal keys, as owners.

    ``owners[k]`` names entry k (default: k); owners must be non-decreasing, so that
    left <= right in every pair (left < right when an owner holds each key once). A key
    held by g entries gives g(g-1)/2 pairs; batches hold about ``batch`` pairs.
    """
    keys = np.asarray(keys, dtype=np.uint64)
    who = np.arange(keys.size, dtype=np.int64) if owners is None else np.asarray(owners, dtype=np.int64)
    if who.shape != keys.shape:
        raise ValueError("keys and owners differ in shape")
    if keys.size < 2:
        return
    order, ordered = argsort_u64(keys)
    for left, right in run_pairs(*runs(ordered), batch=batch):
        yield who[order[left]], who[order[right]]


def candidate_pairs(
    signatures: ArrayLike,
    bands: int | None = None,
    rows: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> np.ndarray:
    """(k, 2) int64 row pairs i < j of ``signatures`` (n, size) that agree on all rows of
    at least one band, sorted. Bands and rows default to ``choose_bands(size, threshold)``."""
    sig = np.asarray(signatures, dtype=np.uint64)
    if sig.ndim != 2:
        raise ValueError("signatures must be a 2-d array, one row per document")
    n, size = sig.shape
    if bands is None or rows is None:
        bands, rows = choose_bands(size, threshold)
    keys = band_keys(sig, bands, rows)
    indexed = np.flatnonzero(~_empty_rows(sig))
    found = []
    for band in range(bands):
        columns = slice(band * rows, (band + 1) * rows)
        for left, right in equal_key_pairs(keys[indexed, band], indexed):
            # Equal keys, equal rows but for a 64-bit collision: check the rows.
            same = (sig[left, columns] == sig[right, columns]).all(axis=1)
            found.append(unique_sorted(left[same] * n + right[same]))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pair_keys = unique_sorted(np.concatenate(found))
    return np.stack((pair_keys // n, pair_keys % n), axis=1)


class LSHIndex:
    """Online LSH index: insert a document's signature, query the candidates of another.

    ``insert(key, signature)`` and ``query(signature)`` cost a few numpy calls each:
    the band keys of one signature, a dict lookup per band in the insert buffer, and a
    binary search per band in each of the O(log(n / buffer_size)) sorted levels. Keys are
    the caller's integer document ids.
    """

    def __init__(
        self,
        threshold: float = DEFAULT_THRESHOLD,
        signature_size: int = DEFAULT_SIGNATURE_SIZE,
        bands: int | None = None,
        rows: int | None = None,
        buffer_size: int = 4096,
    ) -> None:
        if bands is None or rows is None:
            bands, rows = choose_bands(signature_size, threshold)
        if bands * rows > signature_size:
            raise ValueError(f"{bands} bands of {rows} rows do not fit in {signature_size} positions")
        if buffer_size < 1:
            raise ValueError("buffer_size must be positive")
        self.signature_size, self.bands, self.rows = signature_size, bands, rows
        self._buffer_size = buffer_size
        # Document keys by sequence number, 8 bytes each.
        self._ids = array("q")
        self._buffer: dict[int, list[int]] = {}
        self._pending: list[np.ndarray] = []
        self._pending_first = 0
        # Sorted runs of (band key, sequence number), largest first.
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (the insert buffer's dict not counted)."""
        levels = sum(keys.nbytes + seqs.nbytes for keys, seqs in self._levels)
        return levels + self._ids.itemsize * len(self._ids) + sum(p.nbytes for p in self._pending)

    def _keys(self, signature: ArrayLike) -> np.ndarray | None:
        sig = np.asarray(signature, dtype=np.uint64).reshape(1, -1)
        if sig.shape[1] != self.signature_size:
            raise ValueError(f"expected a signature of {self.signature_size} values, got {sig.shape[1]}")
        if _empty_rows(sig)[0]:
            return None
        return band_keys(sig, self.bands, self.rows)[0]

    def insert(self, key: int, signature: ArrayLike) -> None:
        """Index document ``key`` (an int) under its signature; empty signatures are not indexed."""
        keys = self._keys(signature)
        if keys is not None:
            self._insert(key, keys)

    def _insert(self, key: int, keys: np.ndarray) -> None:
        seq = len(self._ids)
        self._ids.append(key)
        for band_key in keys.tolist():
            self._buffer.setdefault(band_key, []).append(seq)
        self._pending.append(keys)
        if len(self._pending) >= self._buffer_size:
            self._flush()

    def insert_many(self, keys: ArrayLike, signatures: ArrayLike) -> None:
        """Index many documents at once (rebuilding an index from a store)."""
        ids = np.asarray(keys, dtype=np.int64).ravel()
        sig = np.asarray(signatures, dtype=np.uint64)
        if sig.ndim != 2 or sig.shape != (ids.size, self.signature_size):
            raise ValueError(f"expected signatures of shape ({ids.size}, {self.signature_size})")
        self._flush()
        kept = ~_empty_rows(sig)
        ids, sig = ids[kept], sig[kept]
        if not ids.size:
            return
        first = len(self._ids)
        self._ids.extend(ids.tolist())
        band = band_keys(sig, self.bands, self.rows).ravel()
        seqs = np.repeat(np.arange(first, first + ids.size, dtype=np.int64), self.bands)
        self._add_run(band, seqs)

    def query(self, signature: ArrayLike) -> np.ndarray:
        """Keys of the indexed documents sharing at least one band with ``signature``,
        ascending, each once."""
        return self._query(self._keys(signature))

    def query_and_insert(self, key: int, signature: ArrayLike) -> np.ndarray:
        """``query(signature)`` then ``insert(key, signature)``, hashing the bands once:
        the call for a page just crawled."""
        keys = self._keys(signature)
        found = self._query(keys)
        if keys is not None:
            self._insert(key, keys)
        return found

    def _query(self, keys: np.ndarray | None) -> np.ndarray:
        if keys is None:
            return np.empty(0, dtype=np.int64)
        found = [np.array(recent, dtype=np.int64) for k in keys.tolist() if (recent := self._buffer.get(k))]
        keys = np.sort(keys)
        for level_keys, level_seqs in self._levels:
            lo = np.searchsorted(level_keys, keys, side="left")
            hi = np.searchsorted(level_keys, keys, side="right")
            hit = hi > lo
            if hit.any():
                width = hi[hit] - lo[hit]
                found.append(level_seqs[np.repeat(lo[hit], width) + ramp(width)])
        if not found:
            return np.empty(0, dtype=np.int64)
        seqs = np.concatenate(found)
        return unique_sorted(np.frombuffer(self._ids, dtype=np.int64)[seqs])

    def _flush(self) -> None:
        if not self._pending:
            return
        band = np.concatenate(self._pending)
        seqs = np.repeat(np.arange(self._pending_first, len(self._ids), dtype=np.int64), self.bands)
        self._buffer.clear()
        self._pending.clear()
        self._add_run(band, seqs)

    def _add_run(self, band: np.ndarray, seqs: np.ndarray) -> None:
        order, band = argsort_u64(band)
        seqs = seqs[order].astype(np.int32 if len(self._ids) < 2**31 else np.int64)
        # Merge while the last level is no more than twice the new run: O(log n) levels,
        # each entry merged O(log n) times. Timsort merges two sorted runs in linear time.
        while self._levels and self._levels[-1][0].size <= 2 * band.size:
            last_band, last_seqs = self._levels.pop()
            band = np.concatenate((last_band, band))
            seqs = np.concatenate((last_seqs.astype(seqs.dtype), seqs))
            order = np.argsort(band, kind="stable")
            band, seqs = band[order], seqs[order]
        self._levels.append((band, seqs))
        self._pending_first = len(self._ids)
