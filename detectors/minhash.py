"""Min-wise sketches of shingle sets: MIN_s, MOD_m and a positional signature.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997):
under a random permutation pi of the shingle fingerprints,

* MIN_s(W), the s smallest of pi(W) (default s = 200), estimates resemblance by
  |MIN_s(F(A) u F(B)) & F(A) & F(B)| / |MIN_s(F(A) u F(B))|, unbiased, standard error
  about sqrt(r(1 - r) / s);
* MOD_m(W), the elements of pi(W) divisible by m (default m = 25; variable size, about
  |W| / m), estimates resemblance by |V(A) & V(B)| / |V(A) u V(B)| and containment of A
  in B by |V(A) & V(B)| / |V(A)|.

The positional signature (default 84 values, Henzinger, SIGIR 2006) uses one
permutation hashing (Li, Owen and Zhang, NIPS 2012): the 64-bit range is cut into 84
equal bins and position i holds the smallest pi(shingle) falling in bin i; an empty bin
takes the value of the first non-empty bin along its own probe sequence, a fixed random
order of all bins (after Shrivastava's optimal densification, ICML 2017). Both documents
follow the same sequence, so position i agrees exactly when the first bin on it that is
non-empty for A u B has its minimum in A & B: P[agree] = r at every position, and the
fraction of agreeing positions estimates r. 84 independent permutations would cost 84
hash evaluations per shingle; this costs one sort.

pi is a fixed bijection of 64-bit words (``Permutation64``): XOR with a key, then three
rounds of xorshift and multiplication by an odd multiplier with its top bit set (full
64-bit multipliers: small ones leave high bits poorly mixed and inflate the estimators'
spread). Keys and multipliers come from splitmix64 (Steele, Lea and Flood, OOPSLA 2014)
seeded with the sketch seed, so they are the same in every process and numpy version.

Conventions for the estimators below: an estimator with an empty sample returns nan
(the sample says nothing); callers that know the documents are empty decide before.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from mirrorscope.detectors.runs import ramp

__all__ = [
    "DEFAULT_M",
    "DEFAULT_S",
    "DEFAULT_SIGNATURE_SIZE",
    "EMPTY",
    "Permutation64",
    "bin_bounds",
    "containment_mod_m",
    "distinct_segments",
    "divisible",
    "min_s",
    "mod_m",
    "probe_order",
    "resemblance_min_s",
    "resemblance_mod_m",
    "signature_agreement",
    "signatures",
    "sort_segments",
    "splitmix64",
]

#: MIN_s sample size (Broder et al.: "200 more than enough").
DEFAULT_S = 200
#: MOD_m modulus (Broder et al.: 25).
DEFAULT_M = 25
#: Positions of the min-hash signature (Henzinger: 84 = 6 super-shingles of 14).
DEFAULT_SIGNATURE_SIZE = 84
#: Signature value of a document without shingles.
EMPTY = np.uint64(2**64 - 1)

_MASK64 = (1 << 64) - 1


def splitmix64(seed: int) -> Iterator[int]:
    """The splitmix64 sequence from ``seed``: a portable source of 64-bit constants."""
    state = seed & _MASK64
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        yield z ^ (z >> 31)


class Permutation64:
    """pi: a fixed bijection of 64-bit words, drawn from ``seed``.

    pi(v) = xs_31(m3 * xs_32(m2 * xs_29(m1 * xs_33(v ^ key)))), xs_k(v) = v ^ (v >> k),
    all mod 2^64: each step is invertible (odd multipliers), so pi is a bijection.
    """

    #: Shift amounts of the xorshift steps, as in MurmurHash3's fmix64 and splitmix64.
    SHIFTS = (33, 29, 32)
    FINAL_SHIFT = 31

    def __init__(self, seed: int) -> None:
        words = splitmix64(seed)
        self.key = next(words)
        self.multipliers = tuple(next(words) | (1 << 63) | 1 for _ in self.SHIFTS)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        mixed = np.asarray(values, dtype=np.uint64) ^ np.uint64(self.key)
        scratch = np.empty_like(mixed)
        for shift, multiplier in zip(self.SHIFTS, self.multipliers):
            np.right_shift(mixed, np.uint64(shift), out=scratch)
            mixed ^= scratch
            mixed *= np.uint64(multiplier)
        np.right_shift(mixed, np.uint64(self.FINAL_SHIFT), out=scratch)
        mixed ^= scratch
        return mixed


@lru_cache(maxsize=None)
def bin_bounds(size: int) -> np.ndarray:
    """Lower bounds ceil(i 2^64 / size) of the ``size`` equal bins of the 64-bit range."""
    bounds = np.array([-(-i * 2**64 // size) for i in range(size)], dtype=np.uint64)
    bounds.setflags(write=False)
    return bounds


@lru_cache(maxsize=None)
def probe_order(size: int, seed: int) -> np.ndarray:
    """Row i: bin i, then the other bins in a fixed random order (densification)."""
    words = splitmix64(seed ^ 0x64656E7369667900)  # "densify": its own stream
    order = np.empty((size, size), dtype=np.intp)
    for i in range(size):
        others = [j for j in range(size) if j != i]
        for last in range(len(others) - 1, 0, -1):  # Fisher-Yates
            pick = next(words) % (last + 1)
            others[last], others[pick] = others[pick], others[last]
        order[i] = [i, *others]
    order.setflags(write=False)
    return order


def sort_segments(values: np.ndarray, counts: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Sort each document's segment of ``values`` in place.

    Returns, per document, the global index in ``values`` of the first element of each
    bin (``bounds`` as from ``bin_bounds``); a bin is empty when that index equals the
    next one (or the segment's end).
    """
    ends = counts.cumsum()
    starts = ends - counts
    first = np.empty((len(counts), len(bounds)), dtype=np.intp)
    for doc, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        segment = values[start:end]
        segment.sort()
        first[doc] = segment.searchsorted(bounds)
    first += starts[:, None]
    return first


def distinct_segments(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of each sorted segment, concatenated, and their counts."""
    ends = counts.cumsum()
    repeated = np.empty(len(values), dtype=bool)
    repeated[:1] = False
    np.equal(values[1:], values[:-1], out=repeated[1:])
    # A value equal to the last one of the previous segment is still new in its own.
    repeated[ends[:-1][ends[:-1] < len(values)]] = False
    dropped = np.concatenate(([0], repeated.cumsum()))
    return values[~repeated], counts - (dropped[ends] - dropped[ends - counts])


def min_s(distinct: np.ndarray, counts: np.ndarray, s: int = DEFAULT_S) -> tuple[np.ndarray, np.ndarray]:
    """MIN_s of each sorted distinct segment: its first s values, and their counts."""
    taken = np.minimum(counts, s)
    return distinct[(counts.cumsum() - counts).repeat(taken) + ramp(taken)], taken


def mod_m(distinct: np.ndarray, counts: np.ndarray, m: int = DEFAULT_M) -> tuple[np.ndarray, np.ndarray]:
    """MOD_m of each distinct segment: its values divisible by m, and their counts."""
    where = divisible(distinct, m).nonzero()[0]
    ends = counts.cumsum()
    return distinct[where], where.searchsorted(ends) - where.searchsorted(ends - counts)


def divisible(values: np.ndarray, m: int) -> np.ndarray:
    """values % m == 0 for uint64 values. For odd m, v is divisible exactly when
    v * m^-1 mod 2^64 <= (2^64 - 1) // m (multiplying by the inverse maps the multiples
    of m onto 0 .. (2^64 - 1) // m), a multiplication where % is a division."""
    if m % 2 == 0:
        return values % np.uint64(m) == 0
    return values * np.uint64(pow(m, -1, 2**64)) <= np.uint64((2**64 - 1) // m)


def signatures(values: np.ndarray, counts: np.ndarray, first: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """Densified one-permutation signatures, one row per document (uint64).

    ``values`` sorted per segment and ``first`` as returned by ``sort_segments``;
    ``probe`` as from ``probe_order``. A document without values gets all ``EMPTY``.
    """
    ends = counts.cumsum()
    following = np.concatenate((first[:, 1:], ends[:, None]), axis=1)
    filled = first < following
    result = np.full(first.shape, EMPTY, dtype=np.uint64)
    if values.size:
        result[filled] = values[first[filled]]
    partial = (filled.any(axis=1) & ~filled.all(axis=1)).nonzero()[0]
    if partial.size:
        # First filled bin along each bin's probe sequence (the bin itself if filled).
        source = probe[np.arange(probe.shape[0]), filled[partial][:, probe].argmax(axis=2)]
        result[partial] = result[partial[:, None], source]
    return result


def resemblance_min_s(a: np.ndarray, b: np.ndarray, s: int = DEFAULT_S) -> float:
    """Broder's MIN_s estimate of r(A, B) from two sorted MIN_s sketches."""
    union = np.union1d(a, b)[:s]
    if not union.size:
        return float("nan")
    common = np.intersect1d(a, b, assume_unique=True)
    return np.count_nonzero(common <= union[-1]) / union.size


def resemblance_mod_m(a: np.ndarray, b: np.ndarray) -> float:
    """Broder's MOD_m estimate of r(A, B): |V(A) & V(B)| / |V(A) u V(B)|."""
    common = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - common
    return common / union if union else float("nan")


def containment_mod_m(a: np.ndarray, b: np.ndarray) -> float:
    """Broder's MOD_m estimate of c(A, B): |V(A) & V(B)| / |V(A)|."""
    if not a.size:
        return float("nan")
    return np.intersect1d(a, b, assume_unique=True).size / a.size


def signature_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of signature positions where a and b agree: an estimate of r(A, B)."""
    if a.shape != b.shape:
        raise ValueError(f"signatures of different sizes: {a.shape} and {b.shape}")
    return float(np.count_nonzero(a == b)) / a.size if a.size else float("nan")
