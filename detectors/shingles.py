"""w-shingling of canonical token sequences, fingerprinted by a polynomial hash of their text.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997): a
document is its canonical token sequence (``detectors.canonical.canonical_tokens``); a
shingle is a contiguous run of w tokens; the w-shingling S(D, w) is the *set* of a
document's shingles. Resemblance r(A, B) = |S(A) & S(B)| / |S(A) | S(B)|, containment
c(A, B) = |S(A) & S(B)| / |S(A)|. Default w = 10 (Broder et al.).

Short documents: a document of n < w tokens (n >= 1) has one shingle, the whole document
(w' = n), and is flagged ``too_short``: its sketch is exact but says little, and it shares
no shingle with a longer document that contains it. An empty document has no shingles.

Fingerprints. A run of tokens is written as its *text*: the tokens' UTF-8 bytes (lone
surrogates kept, "surrogatepass") joined by one 0x00 byte; a token holding 0x00 or 0x01
has them escaped (0x01 -> 01 01, 0x00 -> 01 02), so the text determines the tokens (no
canonical token holds either: they are runs of word characters). Its fingerprint is the
Karp-Rabin polynomial hash of 1 || text (Karp and Rabin, "Efficient randomized
pattern-matching algorithms", IBM J. Res. Dev. 1987), over the integers mod 2^64:

    f(b_0 .. b_(L-1)) = P^L + sum_i b_i * P^(L-1-i)  mod 2^64,   P odd, fixed below,

for every shingle (w tokens) and for the whole document (exact duplicates; an empty
document has fingerprint 0, so it differs from a document of one empty token). A short
document's single shingle is the whole document: its shingle and document fingerprints
are equal.

Why this hash: it is a sum, so all fingerprints of a batch come from one pass over its
text. With B(q) = sum_(p < q) b_p P^-p (P odd, so invertible mod 2^64) the text between
bytes s and e has f = P^(e-1) (B(e) - B(s)) + P^(e-s). Each document's tokens are joined
and encoded by str methods in C (the floor of the work: each token object is read once;
the former memo, token -> Rabin fingerprint, cost a Python dict lookup per token, about
two thirds of the sketch's time), and numpy computes B chunk by chunk in cache, keeping
V_k = P^(q_k - 2) B(q_k) at each token start q_k; a span of tokens [i, j) is then
V_j - P^d V_i + P^(d-1), d = q_j - q_i: a few array operations per shingle whatever w is.

Collisions. Two different texts of equal length collide when their difference polynomial,
with coefficients in (-256, 256), vanishes at P mod 2^64. Mod 2^64 is not a field, so no
bound holds for every pair of inputs: for every odd P the Thue-Morse string of 2^11 bytes
and its complement collide. For text not built against this P collisions are expected
about as rarely as for random 64-bit values, some n^2 / 2^65 pairs among n distinct
shingles (0.03 for 10^9). A page built to collide can make two shingles one, as it could
with the Rabin fingerprints used before (GF(2)-linear: with a public polynomial, colliding
texts solve a linear system); that moves a resemblance by about 1 / |A u B|, and nothing
else depends on it. The sketch's permutation (``detectors.minhash``) mixes the
fingerprints before they are sampled.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from mirrorscope.detectors.minhash import splitmix64
from mirrorscope.detectors.runs import ramp

__all__ = [
    "DEFAULT_W",
    "MULTIPLIER",
    "ShingleBatch",
    "containment",
    "resemblance",
    "shingle_batch",
    "shingle_fingerprints",
    "shingle_set",
]

#: Tokens per shingle (Broder et al.: 10 words).
DEFAULT_W = 10
#: P, the fingerprint's odd multiplier: the first splitmix64 value from b"KR64", top and
#: bottom bits set. Part of the sketch scheme: changing it changes every fingerprint.
MULTIPLIER = next(splitmix64(0x4B523634)) | (1 << 63) | 1

_MOD = 1 << 64
_SEPARATOR = "\x00"
_ESCAPE = "\x01"
_ESCAPE_BYTE = _ESCAPE.encode()
# Bytes per chunk of the prefix sum: its uint64 scratch (0.5 MB) stays in cache.
_CHUNK = 1 << 16
# Powers of P kept for the longest shingles (8 MB): a canonical shingle's text is at most
# about 10 KB (10 words of 255 characters), longer ones come from hostile token lists.
_KEPT_POWERS = 1 << 20


def _geometric(base: int, n: int) -> np.ndarray:
    """base^0 .. base^(n-1) mod 2^64 (uint64 products wrap)."""
    powers = np.full(n, base, dtype=np.uint64)
    powers[0] = 1
    return np.multiply.accumulate(powers)


# P^-t for the bytes t < _CHUNK of a chunk and P^(t - 2) for its token starts t <= _CHUNK.
_INVERSE = np.uint64(pow(MULTIPLIER, -1, _MOD))
_INVERSE_POWERS = _geometric(int(_INVERSE), _CHUNK)
_START_POWERS = np.uint64(pow(MULTIPLIER, -2, _MOD)) * _geometric(MULTIPLIER, _CHUNK + 1)


class _Powers:
    """P^0 .. P^(n-1), kept and grown on demand up to ``_KEPT_POWERS`` (8 bytes each);
    a longer span (hostile input only) gets powers of its own, dropped after use."""

    def __init__(self) -> None:
        self._powers = np.ones(1, dtype=np.uint64)
        self._lock = threading.Lock()

    def up_to(self, n: int) -> np.ndarray:
        powers = self._powers
        if n > _KEPT_POWERS:
            return _geometric(MULTIPLIER, n)
        if powers.size < n:
            with self._lock:
                if self._powers.size < n:
                    self._powers = _geometric(MULTIPLIER, min(max(n, 2 * self._powers.size), _KEPT_POWERS))
                powers = self._powers
        return powers


_POWERS = _Powers()


def shingle_set(tokens: Sequence[str], w: int = DEFAULT_W) -> set[tuple[str, ...]]:
    """S(D, w) as tuples of tokens, for inspection and tests (not the fast path)."""
    if not tokens:
        return set()
    width = min(w, len(tokens))
    return {tuple(tokens[i : i + width]) for i in range(len(tokens) - width + 1)}


def _escape(token: str) -> str:
    return token.replace(_ESCAPE, _ESCAPE + _ESCAPE).replace(_SEPARATOR, _ESCAPE + "\x02")


def _text(documents: Sequence[Sequence[str]], total: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch's text, every token followed by 0x00, and q_k, the byte where token k
    starts (k <= total; q_total is the text's length)."""
    # Encoded a document at a time: one non-ASCII page would widen a batch-wide str.
    encoded = [_SEPARATOR.join(d).encode("utf-8", "surrogatepass") for d in documents if len(d)]
    data = np.frombuffer(b"\x00".join(encoded) + b"\x00", dtype=np.uint8)
    ends = np.flatnonzero(data == 0)
    if ends.size != total or any(_ESCAPE_BYTE in e for e in encoded):
        # Some token holds a separator or the escape: the slow path, per token.
        escaped = [_escape(t).encode("utf-8", "surrogatepass") for t in chain.from_iterable(documents)]
        data = np.frombuffer(b"\x00".join(escaped) + b"\x00", dtype=np.uint8)
        ends = np.flatnonzero(data == 0)
    starts = np.empty(total + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends + 1
    return data, starts


def _start_values(data: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """V_k = P^(q_k - 2) B(q_k) at every token start, B(q) = sum_(p < q) b_p P^-p.

    Chunk by chunk, so the prefix sum's arrays stay in cache: with K = P^c0 B(c0), V at
    byte c0 + t is P^(t-2) (K + prefix[t]), prefix the chunk's own sum of b_p P^-(p - c0)."""
    values = np.empty(starts.size, dtype=np.uint64)
    scratch = np.empty(_CHUNK, dtype=np.uint64)
    prefix = np.zeros(_CHUNK + 1, dtype=np.uint64)
    chunk_starts = np.arange(0, data.size, _CHUNK)
    first = starts.searchsorted(chunk_starts).tolist() + [starts.size]
    carried = 0  # K, as a Python int
    for c, c0 in enumerate(chunk_starts.tolist()):
        n = min(_CHUNK, data.size - c0)
        np.multiply(data[c0 : c0 + n], _INVERSE_POWERS[:n], out=scratch[:n])
        np.cumsum(scratch[:n], out=prefix[1 : n + 1])
        t = starts[first[c] : first[c + 1]] - c0
        values[first[c] : first[c + 1]] = _START_POWERS[t] * (prefix[t] + np.uint64(carried))
        carried = pow(MULTIPLIER, n, _MOD) * (carried + int(prefix[n])) % _MOD
    return values


def _spans(values: np.ndarray, starts: np.ndarray, first: np.ndarray | slice, end: np.ndarray | slice) -> np.ndarray:
    """f of the text of tokens [first, end) (end > first), V_j - P^d V_i + P^(d-1),
    computed as V_j - P^d (V_i - P^-1); slices where they will do, they copy nothing."""
    d = starts[end] - starts[first]
    powers = _POWERS.up_to(int(d.max()) + 1)
    return values[end] - powers[d] * (values[first] - _INVERSE)


@dataclass(frozen=True, slots=True)
class ShingleBatch:
    """Shingle fingerprints of several documents, concatenated in document order."""

    #: f(shingle) for every shingle position of every document (duplicates kept).
    fingerprints: np.ndarray
    #: Shingle positions per document: n - w + 1, 1 if 0 < n < w, 0 if n = 0.
    counts: np.ndarray
    #: Tokens per document.
    token_counts: np.ndarray
    #: f(the document's text) per document; 0 for an empty document.
    document_fingerprints: np.ndarray


def shingle_batch(documents: Sequence[Sequence[str]], w: int = DEFAULT_W) -> ShingleBatch:
    """Fingerprint every w-shingle (and the whole sequence) of every document."""
    if w < 1:
        raise ValueError("w must be positive")
    lengths = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
    ends = lengths.cumsum()
    offsets = ends - lengths
    total = int(ends[-1]) if len(ends) else 0
    if not total:
        return ShingleBatch(np.empty(0, np.uint64), np.zeros_like(lengths), lengths, np.zeros(len(lengths), np.uint64))
    data, starts = _text(documents, total)
    values = _start_values(data, starts)

    nonempty = lengths > 0
    whole = np.zeros(len(lengths), dtype=np.uint64)
    whole[nonempty] = _spans(values, starts, offsets[nonempty], ends[nonempty])

    # Every full window of the concatenated tokens; those straddling two documents are
    # computed and dropped, cheaper than avoiding them.
    windows = max(total - w + 1, 0)
    raw = _spans(values, starts, slice(0, windows), slice(w, w + windows)) if windows else np.empty(0, np.uint64)
    tail = np.minimum(lengths, w - 1)
    straddling = (ends - tail).repeat(tail) + ramp(tail)
    keep = np.ones(windows, dtype=bool)
    keep[straddling[straddling < windows]] = False
    fingerprints = raw[keep]
    long_docs = lengths >= w
    counts = np.where(long_docs, lengths - w + 1, 0)
    short_docs = (nonempty & ~long_docs).nonzero()[0]
    if short_docs.size:
        fingerprints = np.insert(fingerprints, counts.cumsum()[short_docs], whole[short_docs])
        counts[short_docs] = 1
    return ShingleBatch(fingerprints, counts, lengths, whole)


def shingle_fingerprints(tokens: Sequence[str], w: int = DEFAULT_W) -> np.ndarray:
    """f(shingle) for every shingle position of one document, in order."""
    return shingle_batch([tokens], w).fingerprints


def resemblance(a: np.ndarray, b: np.ndarray) -> float:
    """Exact r(A, B) of two shingle fingerprint arrays (duplicates ignored); 1.0 if both empty."""
    a, b = np.unique(a), np.unique(b)
    if not a.size and not b.size:
        return 1.0
    common = np.intersect1d(a, b, assume_unique=True).size
    return common / (a.size + b.size - common)


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Exact c(A, B) = |A & B| / |A| (duplicates ignored); 1.0 if A is empty."""
    a, b = np.unique(a), np.unique(b)
    if not a.size:
        return 1.0
    return np.intersect1d(a, b, assume_unique=True).size / a.size
