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

TrustRank (Gyöngyi, Garcia-Molina and Pedersen, VLDB 2004) and Anti-TrustRank
(Krishnan and Raj 2006) are :func:`link_evidence`, beside the farms, not instead of them:
they rank by propagation from seed sets (a crawl's seeds are not TrustRank's vetted < 200
sites), and a farm hung off a trusted blog by one comment link receives trust like a
good site linked once from it (trust entering a closed group circulates there: with
damping 0.85 the group holds ~1/0.15 of its inflow). :func:`link_evidence` lets no trust
through a condemned host, so a farm's trust is what its planted links bring; the
structural test needs neither seed set and names the members.

Pure numpy over edge arrays: O(E log E) for the edge set, a few O(E) peeling rounds,
and ``detectors.unionfind`` for the components.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.edges import edge_arrays
from mirrorscope.detectors.link_rank import DAMPING, TRUNCATE_STEPS, anti_trust_rank, pagerank, supporters, trust_rank
from mirrorscope.detectors.unionfind import connected_components

__all__ = ["FarmGroup", "LinkEvidence", "link_evidence", "link_farms"]

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


@dataclass(frozen=True, slots=True)
class LinkEvidence:
    """One host's place in the host graph (``detectors.link_rank``).

    ``trust``: TrustRank from the crawl's seed hosts, condemned hosts passing none on (a
    comment link from a trusted page into a farm lets trust into the farm, not through
    it); ``trust_percentile``: for a linking host (one with out-links: a host the crawl
    fetched), the share of linking hosts with less trust; None for the others, hosts
    only linked to, which a crawl's few links to them leave with little trust. Both are
    None when no trusted host is in the graph. ``distrust``: Anti-TrustRank from the
    condemned hosts, in units of a condemned host's own start (each starts at 1, left out
    of its own distrust: what a host links to is evidence, being condemned is not
    evidence again). ``pagerank``, ``truncated_share`` (truncated PageRank over PageRank)
    and ``supporters`` are Becchetti et al.'s features, recorded with the verdict; no
    check weighs them yet (a crawl's host graph is too shallow for them to separate: most
    hosts are linked-to only, their PageRank all teleport). Nor does one weigh low trust
    alone: "trust below the 1st percentile of linking hosts" fired on one good host in
    each of the sandbox's full and real-page worlds and on no spam host (unvetted seeds;
    a good host linked from nowhere trusted), so it is kept as ``trust_percentile`` with
    the verdict.
    """

    trust: float | None
    trust_percentile: float | None
    distrust: float
    pagerank: float
    truncated_share: float
    supporters: int


def link_evidence(
    n: int, src: ArrayLike, dst: ArrayLike, weight: ArrayLike | None, trusted: ArrayLike, condemned: ArrayLike
) -> list[LinkEvidence]:
    """The :class:`LinkEvidence` of each of ``n`` hosts linked ``src -> dst`` (weighted),
    from the ``trusted`` and ``condemned`` host indices."""
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    w = np.ones(s.size) if weight is None else np.asarray(weight, dtype=np.float64)
    bad = np.zeros(n, dtype=bool)
    bad[np.asarray(condemned, dtype=np.int64)] = True
    passes = ~bad[s]
    trust = trust_rank(n, s[passes], d[passes], trusted, w[passes])
    linking = np.unique(s)
    below = np.searchsorted(np.sort(trust[linking]), trust, side="left") / max(1, linking.size)
    # A condemned host's own start (1) is left out: its distrust is what it links to.
    distrust = anti_trust_rank(n, s, d, np.flatnonzero(bad), w) * max(1, int(bad.sum())) / (1.0 - DAMPING) - bad
    rank = pagerank(n, s, d, w)
    truncated = np.divide(pagerank(n, s, d, w, skip=TRUNCATE_STEPS + 1), rank, out=np.zeros(n), where=rank > 0)
    known = np.asarray(trusted).size > 0
    trusts: list[float | None] = trust.tolist() if known else [None] * n
    percentile: list[float | None] = [None] * n
    for host in linking.tolist() if known else ():
        percentile[host] = float(below[host])
    return [
        LinkEvidence(t, p, float(b), float(r), float(x), int(k))
        for t, p, b, r, x, k in zip(trusts, percentile, distrust.tolist(), rank.tolist(),
                                    truncated.tolist(), supporters(n, s, d).tolist())
    ]
