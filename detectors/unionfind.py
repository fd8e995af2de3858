"""Connected components of a graph given as arrays of node pairs, vectorised with numpy.

The last phase of Broder, Glassman, Manasse and Zweig, "Syntactic clustering of the Web"
(WWW6, 1997) joins every pair of documents above the resemblance threshold with
union-find and outputs the connected components as clusters. Here the union-find is
done a whole edge array at a time (the hooking and pointer-jumping scheme of Shiloach
and Vishkin, "An O(log n) parallel connectivity algorithm", J. Algorithms 1982):

1. every edge whose endpoints have different roots hooks the larger root under the
   smaller one (``np.minimum.at``: each root keeps the smallest offer);
2. pointer jumping (``parent = parent[parent]``) until every node points at its root;
3. edges inside one component are dropped, and the rounds repeat until none is left.

Roots only ever move to smaller indices, so the result is the same whatever the order of
the edges or how they were split into batches: each node is labelled with the smallest
node index of its component. Cost: a few rounds in practice (each round at least hooks
every root that is the larger end of an edge), each O(edges + nodes).

Resemblance is not transitive: a chain a ~ b ~ c joins a and c even when they share
nothing. ``detectors.center`` offers Haveliwala's CENTER clustering, which does not chain.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.edges import edge_arrays

__all__ = ["connected_components"]


def connected_components(n: int, i: ArrayLike, j: ArrayLike, labels: np.ndarray | None = None) -> np.ndarray:
    """Component label of each of ``n`` nodes joined by the edges ``(i[k], j[k])``.

    The label is the smallest node index in the component, so isolated nodes are labelled
    with themselves. ``labels`` continues from an earlier result (for instance of a
    previous batch of edges): components are merged as if all edges had come at once.
    """
    left, right = edge_arrays(n, i, j)
    if labels is None:
        parent = np.arange(n, dtype=np.int64)
    else:
        parent = np.array(labels, dtype=np.int64)
        if parent.shape != (n,) or np.any(parent > np.arange(n)) or np.any(parent[parent] != parent):
            raise ValueError("labels must be a result of connected_components over the same nodes")
    while left.size:
        roots_left, roots_right = parent[left], parent[right]
        apart = roots_left != roots_right
        if not apart.all():
            left, right = left[apart], right[apart]
            roots_left, roots_right = roots_left[apart], roots_right[apart]
            if not left.size:
                break
        np.minimum.at(parent, np.maximum(roots_left, roots_right), np.minimum(roots_left, roots_right))
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent
