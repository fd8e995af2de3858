"""Edge arrays: a graph on nodes 0 .. n - 1 as two parallel arrays of endpoints.

Union-find (``detectors.unionfind``), CENTER (``detectors.center``) and link-farm
detection (``detectors.spam_links``) take their graphs in this form, numpy-native and
without a Python object per edge; ``edge_arrays`` is their one check of it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["edge_arrays"]


def edge_arrays(n: int, i: ArrayLike, j: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The endpoints ``i`` and ``j`` as flat int64 arrays; ValueError unless they have
    the same length and lie in [0, n)."""
    left = np.asarray(i, dtype=np.int64).ravel()
    right = np.asarray(j, dtype=np.int64).ravel()
    if left.shape != right.shape:
        raise ValueError(f"edge arrays differ in length: {left.size} and {right.size}")
    if left.size and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= n):
        raise ValueError(f"edge endpoints must lie in [0, {n})")
    return left, right
