"""Super-shingles: fingerprints of groups of min-hash signature positions.

Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web" (WWW6, 1997)
shingle the sketch itself: documents sharing a super-shingle very likely resemble each
other, so candidate pairs come from one sort of <super-shingle, document> pairs instead
of all pairs. Henzinger, "Finding near-duplicate web pages: a large-scale evaluation of
algorithms" (SIGIR 2006) uses 84 min-hashes in 6 super-shingles of 14 and calls two pages
near-duplicates when at least 2 of the 6 agree (the defaults here).

Super-shingle g is the Rabin fingerprint (``detectors.rabin``, with the leading 1) of the
concatenation of signature values 14g .. 14g + 13, 8 bytes each. With positions that
agree independently with probability r, a super-shingle matches with probability r^14;
two or more of six then match with probability 0.88 at r = 0.95, 0.42 at r = 0.9 and
0.026 at r = 0.8. Weak on short documents (few distinct shingles leave few distinct
positions) and blind to containment.
"""

from __future__ import annotations

import numpy as np

from mirrorscope.detectors.rabin import RABIN64

__all__ = ["DEFAULT_GROUPS", "DEFAULT_GROUP_SIZE", "NEAR_DUPLICATE_MATCHES", "matches", "super_shingles"]

#: Super-shingles per document (Henzinger: 6).
DEFAULT_GROUPS = 6
#: Signature positions per super-shingle (Henzinger: 14).
DEFAULT_GROUP_SIZE = 14
#: Agreeing super-shingles that make a near-duplicate (Henzinger: 2 of 6).
NEAR_DUPLICATE_MATCHES = 2


def super_shingles(
    signatures: np.ndarray,
    groups: int = DEFAULT_GROUPS,
    size: int = DEFAULT_GROUP_SIZE,
) -> np.ndarray:
    """(documents, groups) super-shingles of (documents, groups * size) signatures."""
    signatures = np.asarray(signatures, dtype=np.uint64)
    if signatures.ndim != 2 or signatures.shape[1] != groups * size:
        raise ValueError(f"expected signatures of shape (n, {groups * size}), got {signatures.shape}")
    rows = signatures.shape[0] * groups
    pieces = np.empty((rows, size + 1), dtype=np.uint64)
    pieces[:, 0] = 1  # f(empty string): the leading 1 alone
    pieces[:, 1:] = signatures.reshape(rows, size)
    return RABIN64.fold(pieces, 64).reshape(signatures.shape[0], groups)


def matches(a: np.ndarray, b: np.ndarray) -> int:
    """How many super-shingles two documents share, position by position."""
    if a.shape != b.shape:
        raise ValueError(f"super-shingles of different shapes: {a.shape} and {b.shape}")
    return int(np.count_nonzero(a == b))
