"""CENTER clustering over similar pairs (Haveliwala, Gionis and Indyk, WebDB 2000).

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000)
scan the similar pairs in order of decreasing similarity (ties here by ascending
``(i, j)``, so the result is deterministic):

* an unassigned node meeting an unassigned node: the first, ``i``, becomes a centre and
  the other, ``j``, its member;
* an unassigned node meeting a centre joins that centre;
* anything else (a member on either side, or two centres) is skipped.

Every member is similar to its own centre, so a cluster's diameter is at most two
similarity steps; union-find (``detectors.unionfind``) instead follows chains of pairs
a ~ b ~ c ~ ... and can join documents that share nothing, because resemblance is not
transitive.

The scan is sequential, but a pair's outcome depends only on the earlier pairs at its
unassigned ends (centres and members never change again). So it runs in rounds: every
pair that is the earliest remaining pair at each of its unassigned ends is decided at
once, and pairs made moot (a member end, or two centres) are dropped; this reproduces the
sequential scan exactly. Rounds cost O(remaining pairs) each and are few on
near-duplicate graphs (one per step of the longest chain of dependent pairs); when a round
decides less than an eighth of what remains, the rest is finished by the plain sequential
scan, O(remaining pairs) Python steps. Sorting costs O(k log k) for k pairs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.edges import edge_arrays

__all__ = ["center_clusters"]

_UNASSIGNED, _CENTER, _MEMBER = 0, 1, 2
# Below this many pairs the sequential scan is cheaper than numpy's per-call overhead.
_SEQUENTIAL_BELOW = 256


def center_clusters(n: int, i: ArrayLike, j: ArrayLike, similarity: ArrayLike) -> np.ndarray:
    """Centre of each of ``n`` nodes' clusters (a node's own index if it is a centre or in
    no cluster), from the pairs ``(i[k], j[k])`` with ``similarity[k]``."""
    first, second = edge_arrays(n, i, j)
    weight = np.asarray(similarity, dtype=np.float64).ravel()
    if weight.shape != first.shape:
        raise ValueError("i, j and similarity must have the same length")
    if np.isnan(weight).any():
        raise ValueError("similarity must not be nan")
    distinct = first != second
    first, second, weight = first[distinct], second[distinct], weight[distinct]
    order = np.lexsort((second, first, -weight))
    first, second = first[order], second[order]
    state = np.zeros(n, dtype=np.int8)
    centre = np.arange(n, dtype=np.int64)
    rank = np.arange(first.size, dtype=np.int64)
    earliest = np.empty(n, dtype=np.int64)
    beyond = first.size  # later than every pair
    while first.size >= _SEQUENTIAL_BELOW:
        state_first, state_second = state[first], state[second]
        live = (state_first != _MEMBER) & (state_second != _MEMBER)
        live &= (state_first == _UNASSIGNED) | (state_second == _UNASSIGNED)
        first, second, rank = first[live], second[live], rank[live]
        state_first, state_second = state_first[live], state_second[live]
        free_first = state_first == _UNASSIGNED
        free_second = state_second == _UNASSIGNED
        earliest[first] = beyond
        earliest[second] = beyond
        np.minimum.at(earliest, first[free_first], rank[free_first])
        np.minimum.at(earliest, second[free_second], rank[free_second])
        ready = (~free_first | (earliest[first] == rank)) & (~free_second | (earliest[second] == rank))
        # Both unassigned: the first end becomes the centre, the second its member.
        # One end a centre: the other, unassigned, joins it.
        new_centre = ready & free_first & free_second
        state[first[new_centre]] = _CENTER
        joins_first = ready & free_second
        state[second[joins_first]] = _MEMBER
        centre[second[joins_first]] = first[joins_first]
        joins_second = ready & free_first & ~free_second
        state[first[joins_second]] = _MEMBER
        centre[first[joins_second]] = second[joins_second]
        decided = int(np.count_nonzero(ready))
        first, second, rank = first[~ready], second[~ready], rank[~ready]
        if decided * 8 < first.size + decided:
            break
    _scan(first.tolist(), second.tolist(), state, centre)
    return centre


def _scan(first: list[int], second: list[int], state_array: np.ndarray, centre_array: np.ndarray) -> None:
    """The sequential CENTER scan over pairs already in order, continuing from ``state``."""
    state = bytearray(state_array.tobytes())
    centre: dict[int, int] = {}
    for u, v in zip(first, second):
        su, sv = state[u], state[v]
        if su == _UNASSIGNED:
            if sv == _UNASSIGNED:
                state[u], state[v] = _CENTER, _MEMBER
                centre[v] = u
            elif sv == _CENTER:
                state[u] = _MEMBER
                centre[u] = v
        elif su == _CENTER and sv == _UNASSIGNED:
            state[v] = _MEMBER
            centre[v] = u
    state_array[:] = np.frombuffer(bytes(state), dtype=np.int8)
    if centre:
        centre_array[np.fromiter(centre.keys(), dtype=np.int64, count=len(centre))] = np.fromiter(
            centre.values(), dtype=np.int64, count=len(centre)
        )
