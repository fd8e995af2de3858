"""One sketch per document: everything the near-duplicate detectors compare.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997) and
Henzinger, "Finding near-duplicate web pages" (SIGIR 2006). From a document's canonical
tokens (``detectors.canonical.canonical_tokens``) ``sketch_tokens`` computes, in one
pass shared by a whole batch (``sketch_many``):

* the w-shingles (w = 10) and their 64-bit polynomial fingerprints (``detectors.shingles``),
  composed with a fixed seeded bijection pi (``detectors.minhash.Permutation64``);
* MIN_s (s = 200) and MOD_m (m = 25) of the permuted shingle set (``detectors.minhash``);
* an 84-value densified one-permutation min-hash signature and its 6 super-shingles of
  14 values (``detectors.supershingles``);
* the fingerprint of the whole token sequence, for exact duplicates.

Sketches are comparable only when made with equal ``SketchParams`` (scheme and version,
seed, w, s, m, signature and super-shingle sizes). Every sketch carries its parameters,
in memory and in ``to_bytes()``, and the estimators refuse a mixed pair with
``IncompatibleSketchError``: after a change of scheme or seed sketches would otherwise
stop matching silently.

Edge cases: an empty document has no shingles, an all-``EMPTY`` signature and
fingerprint 0; documents of fewer than w tokens have one shingle and
``too_short`` set (see ``detectors.shingles``). Two empty documents resemble each other
fully (1.0), and an empty document is contained in any other (1.0). A MOD_m estimator
whose sample is empty although the documents are not returns nan: with fewer than about
m shingles the sample is usually empty, so prefer MIN_s for short documents.

Serialised form (``to_bytes``), little-endian: b"MSKT", format version (u8), scheme
length (u8) and ASCII scheme, seed (u64), w, s, m, signature size (u16 each), groups,
group size, flags (u8 each; bit 0 = too_short), token count, shingle count, fingerprint
(u64 each), |MIN_s| (u16), |MOD_m| (u32), then the raw u64 arrays MIN_s, MOD_m, signature
and super-shingles. About 2.9 KB for a typical page.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mirrorscope.detectors import minhash, supershingles
from mirrorscope.detectors.minhash import (
    DEFAULT_M,
    DEFAULT_S,
    DEFAULT_SIGNATURE_SIZE,
    Permutation64,
    bin_bounds,
    distinct_segments,
    min_s,
    mod_m,
    probe_order,
    signatures,
    sort_segments,
)
from mirrorscope.detectors.shingles import DEFAULT_W, shingle_batch
from mirrorscope.detectors.supershingles import DEFAULT_GROUP_SIZE, DEFAULT_GROUPS, NEAR_DUPLICATE_MATCHES, super_shingles

__all__ = [
    "DEFAULT_PARAMS",
    "SCHEME",
    "SCHEMES",
    "DocumentSketch",
    "IncompatibleSketchError",
    "SketchParams",
    "containment_mod_m",
    "is_near_duplicate",
    "resemblance_min_s",
    "resemblance_mod_m",
    "signature_agreement",
    "sketch_many",
    "sketch_tokens",
    "super_shingle_matches",
]

#: The scheme ``sketch_many`` makes: Karp-Rabin polynomial fingerprints mod 2^64 of the
#: shingles' text (``detectors.shingles``), xorshift-multiply permutation, densified
#: one-permutation signature. A change to any of them needs a new name.
SCHEME = "poly64-xsm-v1"
#: Schemes a sketch may carry: the current one, and "rabin64-xsm-v1" (64-bit Rabin
#: fingerprints of the tokens' fingerprints, until 2026-12), which stores still hold:
#: such sketches are read and compared with each other, never made.
SCHEMES = frozenset({SCHEME, "rabin64-xsm-v1"})

_MAGIC = b"MSKT"
_FORMAT = 1
_PREFIX = struct.Struct("<4sBB")
_FIELDS = struct.Struct("<QHHHHBBBQQQHI")
_U16 = 0xFFFF
_U8 = 0xFF
# Tokens per numpy pass: bounds the memory of a batch (tens of bytes per token); 2^18
# keeps its arrays nearer the cache than 2^20 did (6% faster on the real pages).
_BATCH_TOKENS = 1 << 18


@dataclass(frozen=True, slots=True)
class SketchParams:
    """Everything that must be equal for two sketches to be comparable."""

    scheme: str = SCHEME
    seed: int = 0x6D6972726F727363  # b"mirrorsc"
    w: int = DEFAULT_W
    s: int = DEFAULT_S
    m: int = DEFAULT_M
    signature_size: int = DEFAULT_SIGNATURE_SIZE
    super_groups: int = DEFAULT_GROUPS
    super_size: int = DEFAULT_GROUP_SIZE

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"unknown sketch scheme {self.scheme!r}; known: {sorted(SCHEMES)}")
        if not 0 <= self.seed < 2**64:
            raise ValueError("seed must fit in 64 bits")
        for name in ("w", "s", "m", "signature_size"):
            if not 1 <= getattr(self, name) <= _U16:
                raise ValueError(f"{name} must be between 1 and {_U16}")
        if not (1 <= self.super_groups <= _U8 and 1 <= self.super_size <= _U8):
            raise ValueError(f"super_groups and super_size must be between 1 and {_U8}")
        if self.super_groups * self.super_size != self.signature_size:
            raise ValueError("signature_size must equal super_groups * super_size")


DEFAULT_PARAMS = SketchParams()


class IncompatibleSketchError(ValueError):
    """Two sketches made with different parameters were compared."""


@dataclass(frozen=True, slots=True, eq=False)
class DocumentSketch:
    """The sketch of one document. Arrays are read-only uint64; MIN_s and MOD_m sorted."""

    params: SketchParams
    token_count: int
    #: Distinct shingles |S(D, w)|.
    shingle_count: int
    #: Fewer than w tokens: one shingle, the whole document.
    too_short: bool
    #: Rabin fingerprint of the whole canonical token sequence (exact duplicates).
    fingerprint: int
    min_s: np.ndarray
    mod_m: np.ndarray
    signature: np.ndarray
    super_shingles: np.ndarray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DocumentSketch) and self.to_bytes() == other.to_bytes()

    def to_bytes(self) -> bytes:
        p = self.params
        scheme = p.scheme.encode("ascii")
        header = _PREFIX.pack(_MAGIC, _FORMAT, len(scheme)) + scheme
        fields = _FIELDS.pack(
            p.seed, p.w, p.s, p.m, p.signature_size, p.super_groups, p.super_size, int(self.too_short),
            self.token_count, self.shingle_count, self.fingerprint, self.min_s.size, self.mod_m.size,
        )  # fmt: skip
        arrays = np.concatenate((self.min_s, self.mod_m, self.signature, self.super_shingles))
        return header + fields + arrays.astype("<u8", copy=False).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> DocumentSketch:
        """Inverse of ``to_bytes``; ValueError on anything else."""
        data = bytes(data)
        if len(data) < _PREFIX.size:
            raise ValueError("truncated sketch")
        magic, version, scheme_length = _PREFIX.unpack_from(data)
        if magic != _MAGIC or version != _FORMAT:
            raise ValueError("not a mirrorscope sketch (format 1)")
        offset = _PREFIX.size + scheme_length
        if len(data) < offset + _FIELDS.size:
            raise ValueError("truncated sketch")
        scheme = data[_PREFIX.size : offset].decode("ascii", errors="replace")
        (seed, w, s, m, size, groups, group_size, flags, tokens, shingles, fingerprint, n_min, n_mod) = (
            _FIELDS.unpack_from(data, offset)
        )
        params = SketchParams(scheme, seed, w, s, m, size, groups, group_size)
        counts = (n_min, n_mod, size, groups)
        offset += _FIELDS.size
        if len(data) != offset + 8 * sum(counts):
            raise ValueError("sketch length does not match its header")
        arrays = np.frombuffer(data, dtype="<u8", offset=offset).astype(np.uint64)
        arrays.setflags(write=False)
        bounds = np.cumsum(counts)
        smallest, divisible, signature, supers = np.split(arrays, bounds[:-1])
        return cls(params, tokens, shingles, bool(flags & 1), fingerprint, smallest, divisible, signature, supers)


@lru_cache(maxsize=None)
def _permutation(seed: int) -> Permutation64:
    return Permutation64(seed)


def sketch_many(documents: Iterable[Sequence[str]], params: SketchParams = DEFAULT_PARAMS) -> list[DocumentSketch]:
    """Sketch each token sequence, many documents per numpy pass (results in order)."""
    if params.scheme != SCHEME:
        raise ValueError(f"sketches of scheme {params.scheme!r} are read, no longer made (now {SCHEME!r})")
    sketches: list[DocumentSketch] = []
    batch: list[Sequence[str]] = []
    batch_tokens = 0
    for tokens in documents:
        if isinstance(tokens, str | bytes):
            raise TypeError("a document is a sequence of tokens, not a string")
        if batch and batch_tokens + len(tokens) > _BATCH_TOKENS:
            sketches += _sketch_batch(batch, params)
            batch, batch_tokens = [], 0
        batch.append(tokens)
        batch_tokens += len(tokens)
    if batch:
        sketches += _sketch_batch(batch, params)
    return sketches


def sketch_tokens(tokens: Sequence[str], params: SketchParams = DEFAULT_PARAMS) -> DocumentSketch:
    """The sketch of one canonical token sequence."""
    return sketch_many([tokens], params)[0]


def _sketch_batch(documents: list[Sequence[str]], params: SketchParams) -> list[DocumentSketch]:
    shingled = shingle_batch(documents, params.w)
    values = _permutation(params.seed)(shingled.fingerprints)
    counts = shingled.counts
    first = sort_segments(values, counts, bin_bounds(params.signature_size))
    distinct, distinct_counts = distinct_segments(values, counts)
    smallest, smallest_counts = min_s(distinct, distinct_counts, params.s)
    divisible, divisible_counts = mod_m(distinct, distinct_counts, params.m)
    signature = signatures(values, counts, first, probe_order(params.signature_size, params.seed))
    supers = super_shingles(signature, params.super_groups, params.super_size)
    for array in (smallest, divisible, signature, supers):
        array.setflags(write=False)
    smallest_ends = smallest_counts.cumsum().tolist()
    divisible_ends = divisible_counts.cumsum().tolist()
    return [
        DocumentSketch(params, n, c, n < params.w, fp, smallest[a - na : a], divisible[b - nb : b], sig, sup)
        for n, c, fp, a, na, b, nb, sig, sup in zip(
            shingled.token_counts.tolist(),
            distinct_counts.tolist(),
            shingled.document_fingerprints.tolist(),
            smallest_ends,
            smallest_counts.tolist(),
            divisible_ends,
            divisible_counts.tolist(),
            signature,
            supers,
        )
    ]


def _check(a: DocumentSketch, b: DocumentSketch) -> None:
    if a.params != b.params:
        raise IncompatibleSketchError(f"sketches made with different parameters: {a.params} and {b.params}")


def resemblance_min_s(a: DocumentSketch, b: DocumentSketch) -> float:
    """MIN_s estimate of the resemblance r(A, B)."""
    _check(a, b)
    if not a.shingle_count and not b.shingle_count:
        return 1.0
    return minhash.resemblance_min_s(a.min_s, b.min_s, a.params.s)


def resemblance_mod_m(a: DocumentSketch, b: DocumentSketch) -> float:
    """MOD_m estimate of r(A, B); nan when neither sample holds anything."""
    _check(a, b)
    if not a.shingle_count and not b.shingle_count:
        return 1.0
    return minhash.resemblance_mod_m(a.mod_m, b.mod_m)


def containment_mod_m(a: DocumentSketch, b: DocumentSketch) -> float:
    """MOD_m estimate of the containment c(A, B) of A in B; nan when A's sample is empty."""
    _check(a, b)
    if not a.shingle_count:
        return 1.0
    return minhash.containment_mod_m(a.mod_m, b.mod_m)


def signature_agreement(a: DocumentSketch, b: DocumentSketch) -> float:
    """Fraction of equal signature positions: an estimate of r(A, B)."""
    _check(a, b)
    return minhash.signature_agreement(a.signature, b.signature)


def super_shingle_matches(a: DocumentSketch, b: DocumentSketch) -> int:
    """How many of the super-shingles agree (0 .. super_groups)."""
    _check(a, b)
    return supershingles.matches(a.super_shingles, b.super_shingles)


def is_near_duplicate(a: DocumentSketch, b: DocumentSketch, min_matches: int = NEAR_DUPLICATE_MATCHES) -> bool:
    """Henzinger's rule: at least ``min_matches`` (2) super-shingles agree."""
    return super_shingle_matches(a, b) >= min_matches
