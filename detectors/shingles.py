"""w-shingling of canonical token sequences, fingerprinted with Rabin's method.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997): a
document is its canonical token sequence (``detectors.canonical.canonical_tokens``); a
shingle is a contiguous run of w tokens; the w-shingling S(D, w) is the *set* of a
document's shingles. Resemblance r(A, B) = |S(A) & S(B)| / |S(A) | S(B)|, containment
c(A, B) = |S(A) & S(B)| / |S(A)|. Default w = 10 (Broder et al.).

Short documents: a document of n < w tokens (n >= 1) has one shingle, the whole document
(w' = n), and is flagged ``too_short``: its sketch is exact but says little, and it shares
no shingle with a longer document that contains it. An empty document has no shingles.

Fingerprints (``detectors.rabin``, degree k = 64 by default): a token's fingerprint is
f(utf-8 bytes); a shingle's is f of the concatenation of its tokens' k-bit fingerprints,
and the document fingerprint (exact duplicates) is f of the concatenation of all its
tokens' fingerprints. By linearity a window t_0 .. t_(w-1) has

    f = x^(kw) XOR sum_c f(t_c) * x^(k(w-1-c))  mod P,

so with the rows f(t) * x^(kc) mod P, c < w, kept per distinct token (``TokenTable``, a
bounded memo of a pure function: results never depend on what it holds) every shingle
of every document in a batch is w XORs of gathered rows. A token's w rows lie together
(token-major), so a block of positions gathers each token's rows once, in one random
access, and the XORs run over that block while it is in cache (w gathers over the whole
batch, one random access each, were a third slower). The memo costs w * 8 bytes of rows
per distinct token plus its dict entry, and starts afresh past 2^18 tokens (about 50 MB
at w = 10).
"""

from __future__ import annotations

import operator
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, count, islice

import numpy as np

from mirrorscope.detectors.rabin import RABIN64, Rabin
from mirrorscope.detectors.runs import ramp

__all__ = [
    "DEFAULT_W",
    "ShingleBatch",
    "TokenTable",
    "containment",
    "default_table",
    "resemblance",
    "shingle_batch",
    "shingle_fingerprints",
    "shingle_set",
]

#: Tokens per shingle (Broder et al.: 10 words).
DEFAULT_W = 10
#: Distinct tokens a ``TokenTable`` memoises before it starts afresh.
DEFAULT_TABLE_SIZE = 1 << 18
# Token positions per block when summing windows: w rows of 8 bytes each, ~0.6 MB at w = 10.
_BLOCK = 1 << 13

# Lone surrogates cannot be encoded strictly; surrogatepass keeps every str hashable to
# bytes, deterministically.
_ENCODE = operator.methodcaller("encode", "utf-8", "surrogatepass")


def shingle_set(tokens: Sequence[str], w: int = DEFAULT_W) -> set[tuple[str, ...]]:
    """S(D, w) as tuples of tokens, for inspection and tests (not the fast path)."""
    if not tokens:
        return set()
    width = min(w, len(tokens))
    return {tuple(tokens[i : i + width]) for i in range(len(tokens) - width + 1)}


class TokenTable:
    """Bounded memo of token -> rows[token, c] = f(token) * x^(kc) mod P, c < w.

    One pass over the tokens both finds known ones and numbers new ones (a defaultdict
    whose default is the next column), so a cold table costs little more than a warm
    one. When it holds more than ``max_size`` tokens it starts afresh at the next call.
    Thread-safe: lookups hold a lock (they hold the GIL anyway), and the rows returned
    stay valid for the ids returned with them, whatever later calls do.
    """

    def __init__(self, rabin: Rabin = RABIN64, w: int = DEFAULT_W, max_size: int = DEFAULT_TABLE_SIZE) -> None:
        if w < 1 or max_size < 1:
            raise ValueError("w and max_size must be positive")
        self.rabin = rabin
        self.w = w
        self.max_size = max_size
        #: leading[i] = f(empty string) * x^(ki) = x^(ki) mod P: the leading 1 of i tokens.
        self.leading = np.array([rabin.xpow(rabin.degree * i) for i in range(w + 1)], dtype=np.uint64)
        self._lock = threading.Lock()
        self._reset()

    def __len__(self) -> int:
        return len(self._ids)

    def clear(self) -> None:
        """Forget every token (results do not change, only their cost)."""
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._ids: defaultdict[str, int] = defaultdict(count().__next__)
        self._rows = np.empty((0, self.w), dtype=np.uint64)

    def lookup(self, documents: Sequence[Sequence[str]], total: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the ``total`` tokens of ``documents``, in order, and the rows they index:
        rows[ids[i], c] = f(token i) * x^(kc) mod P."""
        with self._lock:
            if len(self._ids) > self.max_size:
                self._reset()
            known = len(self._ids)
            try:
                ids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(documents)), np.intp, total)
                if len(self._ids) > known:
                    self._add(known)
            except BaseException:
                self._reset()  # some tokens were numbered but have no rows: forget them all
                raise
            return ids, self._rows

    def _add(self, known: int) -> None:
        """Fill the rows of the tokens numbered from ``known`` on."""
        total = len(self._ids)
        # Dicts keep insertion order: the newest keys are the tokens just numbered.
        fresh = list(islice(reversed(self._ids), total - known))
        fresh.reverse()
        if total > self._rows.shape[0]:
            capacity = max(total, min(2 * self._rows.shape[0], self.max_size))
            rows = np.empty((capacity, self.w), dtype=np.uint64)
            rows[:known] = self._rows[:known]
            self._rows = rows
        rows = self._rows
        rows[known:total, 0] = self.rabin.fingerprint_many(list(map(_ENCODE, fresh)))
        for c in range(1, self.w):
            rows[known:total, c] = self.rabin.mul_xpow(rows[known:total, c - 1], self.rabin.degree)


_DEFAULT_TABLES: dict[tuple[Rabin, int], TokenTable] = {}


def default_table(w: int = DEFAULT_W, rabin: Rabin = RABIN64) -> TokenTable:
    """The process-wide TokenTable for (rabin, w)."""
    table = _DEFAULT_TABLES.get((rabin, w))
    if table is None:
        table = _DEFAULT_TABLES.setdefault((rabin, w), TokenTable(rabin, w))
    return table


@dataclass(frozen=True, slots=True)
class ShingleBatch:
    """Shingle fingerprints of several documents, concatenated in document order."""

    #: f(shingle) for every shingle position of every document (duplicates kept).
    fingerprints: np.ndarray
    #: Shingle positions per document: n - w + 1, 1 if 0 < n < w, 0 if n = 0.
    counts: np.ndarray
    #: Tokens per document.
    token_counts: np.ndarray
    #: f(concatenation of the document's token fingerprints) per document.
    document_fingerprints: np.ndarray


def shingle_batch(
    documents: Sequence[Sequence[str]], w: int = DEFAULT_W, table: TokenTable | None = None
) -> ShingleBatch:
    """Fingerprint every w-shingle (and the whole sequence) of every document."""
    table = table if table is not None else default_table(w)
    if table.w != w:
        raise ValueError(f"table built for w={table.w}, not w={w}")
    rabin, k = table.rabin, table.rabin.degree
    lengths = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
    ends = lengths.cumsum()
    offsets = ends - lengths
    total = int(ends[-1]) if len(ends) else 0
    ids, rows = table.lookup(documents, total)
    leading = table.leading

    # Raw sums of every full window of the concatenated stream; those straddling two
    # documents are computed and dropped, cheaper than avoiding them.
    windows = max(total - w + 1, 0)
    raw = _window_sums(ids, rows, windows, w)

    # f(1 || first h tokens), h = n mod w: the head of the document fingerprint, and the
    # single shingle of a short document (h = n there).
    head_len = lengths % w
    heads = leading[head_len]
    owner = np.arange(len(lengths)).repeat(head_len)
    position = ramp(head_len)
    np.bitwise_xor.at(heads, owner, rows[ids[offsets[owner] + position], head_len[owner] - 1 - position])

    # Windows starting in a document's last w - 1 tokens straddle or overrun its end.
    tail = np.minimum(lengths, w - 1)
    straddling = (ends - tail).repeat(tail) + ramp(tail)
    keep = np.ones(windows, dtype=bool)
    keep[straddling[straddling < windows]] = False
    fingerprints = raw[keep]
    fingerprints ^= leading[w]
    long_docs = lengths >= w
    counts = np.where(long_docs, lengths - w + 1, 0)
    short_docs = ((lengths > 0) & ~long_docs).nonzero()[0]
    if short_docs.size:
        fingerprints = np.insert(fingerprints, counts.cumsum()[short_docs], heads[short_docs])
        counts[short_docs] = 1

    # Document fingerprint: the head, then the disjoint full windows that tile the rest.
    blocks = lengths // w
    pieces = np.empty(int(blocks.sum()) + len(lengths), dtype=np.uint64)
    piece_starts = (blocks + 1).cumsum() - (blocks + 1)
    pieces[piece_starts] = heads
    step = ramp(blocks)
    pieces[(piece_starts + 1).repeat(blocks) + step] = raw[(offsets + head_len).repeat(blocks) + w * step]
    document_fingerprints = rabin.concat(pieces, blocks + 1, k * w)

    return ShingleBatch(fingerprints, counts, lengths, document_fingerprints)


def _window_sums(ids: np.ndarray, rows: np.ndarray, windows: int, w: int) -> np.ndarray:
    """XOR over c < w of rows[ids[i + c], w - 1 - c] for every window start i < ``windows``,
    block by block: each block gathers its tokens' rows once, then sums in cache."""
    raw = np.empty(windows, dtype=np.uint64)
    for start in range(0, windows, _BLOCK):
        end = min(start + _BLOCK, windows)
        block = rows.take(ids[start : end + w - 1], axis=0)
        out = raw[start:end]
        np.copyto(out, block[: end - start, w - 1])
        for c in range(1, w):
            out ^= block[c : c + end - start, w - 1 - c]
    return raw


def shingle_fingerprints(tokens: Sequence[str], w: int = DEFAULT_W, table: TokenTable | None = None) -> np.ndarray:
    """f(shingle) for every shingle position of one document, in order."""
    return shingle_batch([tokens], w, table).fingerprints


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
