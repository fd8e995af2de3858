"""Link farms in a host graph: dense groups of hosts that vote for each other.

A link farm is a set of hosts built to manufacture in-links their members cannot earn:
every member links to every other, and few hosts outside the group link in (Gyöngyi and
Garcia-Molina, "Link spam alliances", VLDB 2005; the CS276 notes' "mutual admiration
societies"). So a group is reported when

1. every member links to and is linked from at least ``min_size - 1`` other members
   (the ``min_size - 1``-core of the graph of reciprocal host links; a farm of k hosts
   is a k-clique of them);
2. the group is dense: of the s(s − 1) possible directed links between its s members, at
   least ``min_density`` (0.5) exist — legitimate communities whose members interlink
   (a university's departments, a company's country sites) are sparser than a farm as
   soon as they grow, and small ones still have to pass 3;
3. few hosts outside the group link into it: at most ``max_outside_per_member`` (0.5)
   distinct outside hosts per member. A group dense enough to pass 2 that is legitimate
   is linked from more outside hosts than it has members; a farm lives on a handful of
   comment-spam links and its own votes;
4. with ``domains`` given, the members span at least ``min_size`` registrable domains:
   one organisation's subdomains interlinking is a site, not a farm (domain flooding under
   one name is bounded by the crawl budget of ``detectors.budget`` instead).

Groups are the connected components of the core's reciprocal links, each judged whole.
That finds farms whose reciprocal links stay among themselves; a farm merged with good
hosts would need good hosts to link back to it. ``min_size`` is 4 (a 4-clique): three
hosts that link each other with one outside in-link are too common among small related
sites early in a crawl to be called a farm.

Why not TrustRank (Gyöngyi, Garcia-Molina and Pedersen, VLDB 2004) or truncated
PageRank (Becchetti et al. 2006)? Both rank by propagation and need a vetted seed set
(TrustRank's < 200 good sites) or a graph large enough for link statistics; a crawl's
own seeds are not vetted, and a farm hung off one trusted blog by a comment link
receives as much trust as a good site linked once from it (trust that enters a closed
group circulates there: with damping 0.85 the group holds ~1/0.15 of its inflow). The
structural test needs neither and names the members.

Pure numpy over edge arrays: O(E log E) for the edge set, a few O(E) peeling rounds,
and ``detectors.unionfind`` for the components.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.edges import edge_arrays
from mirrorscope.detectors.unionfind import connected_components

__all__ = ["FarmGroup", "link_farms"]

#: Smallest group reported (a 4-clique of reciprocal links).
MIN_SIZE = 4
#: Share of the s(s − 1) possible directed links between members that must exist.
MIN_DENSITY = 0.5
#: Distinct outside hosts linking in, per member, at most.
MAX_OUTSIDE_PER_MEMBER = 0.5


@dataclass(frozen=True, slots=True)
class FarmGroup:
    """A suspected link farm: member host indices and the measurements that judged it."""

    members: tuple[int, ...]
    density: float
    internal_links: int
    outside_sources: int


def _edge_keys(n: int, src: ArrayLike, dst: ArrayLike) -> np.ndarray:
    """Sorted distinct ``src * n + dst`` of the edges without self-links."""
    s, d = edge_arrays(n, src, dst)
    keep = s != d
    return np.unique(s[keep] * n + d[keep])


def _core(n: int, u: np.ndarray, v: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The undirected edges (u, v) of the k-core: peel nodes of degree < k until none is left."""
    while u.size:
        degree = np.bincount(u, minlength=n) + np.bincount(v, minlength=n)
        keep = (degree[u] >= k) & (degree[v] >= k)
        if keep.all():
            break
        u, v = u[keep], v[keep]
    return u, v


def link_farms(
    n: int,
    src: ArrayLike,
    dst: ArrayLike,
    *,
    domains: Sequence[str] | None = None,
    min_size: int = MIN_SIZE,
    min_density: float = MIN_DENSITY,
    max_outside_per_member: float = MAX_OUTSIDE_PER_MEMBER,
) -> list[FarmGroup]:
    """Link farms among ``n`` hosts linked by ``src[i] -> dst[i]`` (see the module docstring).

    Edges are host indices; repeated edges and self-links are ignored. ``domains[i]`` is
    host i's registrable domain, when known. Groups come largest first.
    """
    if min_size < 2:
        raise ValueError(f"min_size must be at least 2, not {min_size}")
    keys = _edge_keys(n, src, dst)
    if not keys.size:
        return []
    s, d = keys // n, keys % n
    reverse = d * n + s
    at = np.minimum(np.searchsorted(keys, reverse), keys.size - 1)
    mutual = (keys[at] == reverse) & (s < d)
    u, v = _core(n, s[mutual], d[mutual], min_size - 1)
    if not u.size:
        return []
    labels = connected_components(n, u, v)
    in_core = np.zeros(n, dtype=bool)
    in_core[u] = in_core[v] = True
    group = np.where(in_core, labels, -1)
    sizes = np.bincount(group[in_core], minlength=n)
    gs, gd = group[s], group[d]
    internal = np.bincount(gs[(gs == gd) & (gs >= 0)], minlength=n)
    # Distinct (group, outside source) pairs of links into a group.
    entering = (gd >= 0) & (gs != gd)
    pairs = np.unique(gd[entering] * n + s[entering])
    outside = np.bincount(pairs // n, minlength=n)
    farms: list[FarmGroup] = []
    for label in np.flatnonzero(sizes >= min_size).tolist():
        size = int(sizes[label])
        density = internal[label] / (size * (size - 1))
        members = np.flatnonzero(group == label)
        if density < min_density or outside[label] > max_outside_per_member * size:
            continue
        if domains is not None and len({domains[m] for m in members.tolist()}) < min_size:
            continue
        farms.append(FarmGroup(tuple(members.tolist()), float(density), int(internal[label]), int(outside[label])))
    farms.sort(key=lambda f: (-len(f.members), f.members))
    return farms
