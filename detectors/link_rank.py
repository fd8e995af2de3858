"""Rank propagation on a host graph: the link-based spam features.

- PageRank (Page, Brin, Motwani and Winograd 1998) as the series of Baeza-Yates, Boldi
  and Castillo ("Generalizing PageRank: damping functions for link-based ranking
  algorithms", SIGIR 2006): ``x = Σ_t (1 − α) α^t (Pᵀ)^t v``, ``P`` the out-weight
  normalised transition matrix, ``v`` the start vector (uniform), ``α`` = 0.85.
- TrustRank (Gyöngyi, Garcia-Molina and Pedersen, "Combating web spam with TrustRank",
  VLDB 2004): the same with ``v`` uniform over trusted seed hosts — trust flows forward
  along links, and a spam host is reached from good hosts only through the few links
  spammers manage to plant.
- Anti-TrustRank / BadRank (Krishnan and Raj, "Web spam detection with Anti-TrustRank",
  AIRWeb 2006): the same on the reversed graph with ``v`` over condemned hosts — distrust
  flows backwards, to the hosts that link to spam.
- Truncated PageRank (Becchetti, Castillo, Donato, Leonardi and Baeza-Yates, "Using rank
  propagation and probabilistic counting for link-based spam detection", WebKDD 2006):
  the series without its first ``T`` + 1 terms, so the rank a host gets from supporters
  within ``T`` links is left out; a farm's target gets most of its rank from its own close
  supporters, so its truncated/full ratio is low. ``T`` = 2, below the 4 the paper
  reports best on a web-scale graph, since a crawl's host graph is a few links across.
- Supporters (the same paper): the hosts that reach a host within ``d`` links. The paper
  estimates them with probabilistic counting for a web-scale graph; here they are
  counted exactly with bit sets, a slice of the hosts at a time within
  ``SUPPORTER_MEMORY``: ``n²/8`` bytes in all, 12 MB for 10,000 hosts.

Dangling hosts (no out-links: most hosts a crawl only links to) keep their rank instead
of spreading it: the series is linear and monotone, a host's score is the sum over the
paths reaching it, so links added from a host whose score is 0 (spam, for trust) change
nobody's score, and links added to a host never raise the distrust of the host they
point at. Camouflage — spam linking to good sites — adds trust nowhere and distrust to
no good site (``tests/test_link_rank.py``).

``detectors.spam_links.link_evidence`` gathers them per host.

Each step is one ``np.bincount`` over the edges: O(E) per term, terms until the term's
mass falls below ``TOLERANCE`` (α^t: 140 terms for 1e-10).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "DAMPING", "SUPPORTER_DISTANCE", "TRUNCATE_STEPS",
    "anti_trust_rank", "pagerank", "rank_series", "supporters", "trust_rank",
]

#: The probability of following a link rather than jumping back to the start vector.
DAMPING = 0.85
#: The series stops when a term's mass falls below this.
TOLERANCE = 1e-10
#: Truncated PageRank leaves out the terms of paths of up to this many links.
TRUNCATE_STEPS = 2
#: Supporters are the hosts within this many links.
SUPPORTER_DISTANCE = 2
#: Bytes the supporter bit sets may take at once (the count is exact whatever it is).
SUPPORTER_MEMORY = 64 * 2**20


def _transitions(n: int, src: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each edge's share of its source's out-weight."""
    out = np.bincount(src, weights=weight, minlength=n)
    return weight / out[src]


def rank_series(
    n: int, src: ArrayLike, dst: ArrayLike, start: ArrayLike, *, weight: ArrayLike | None = None,
    damping: float = DAMPING, skip: int = 0,
) -> np.ndarray:
    """``Σ_{t >= skip} (1 − damping) damping^t (Pᵀ)^t start`` over the edges ``src -> dst``
    (weighted by ``weight``, 1 each if None) of ``n`` nodes."""
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    w = np.ones(s.size) if weight is None else np.asarray(weight, dtype=np.float64)
    share = _transitions(n, s, w) if s.size else w
    term = (1.0 - damping) * np.asarray(start, dtype=np.float64)
    total = np.zeros(n)
    t = 0
    while True:
        if t >= skip:
            total += term
        if term.sum() < TOLERANCE:
            return total
        term = damping * np.bincount(d, weights=term[s] * share, minlength=n)
        t += 1


def _uniform(n: int, members: ArrayLike | None = None) -> np.ndarray:
    """The uniform distribution over ``members`` (all ``n`` nodes if None)."""
    v = np.zeros(n)
    chosen = np.arange(n) if members is None else np.unique(np.asarray(members, dtype=np.int64))
    if chosen.size:
        v[chosen] = 1.0 / chosen.size
    return v


def pagerank(n: int, src: ArrayLike, dst: ArrayLike, weight: ArrayLike | None = None, skip: int = 0) -> np.ndarray:
    """PageRank from the uniform start (truncated: without the first ``skip`` terms)."""
    return rank_series(n, src, dst, _uniform(n), weight=weight, skip=skip)


def trust_rank(n: int, src: ArrayLike, dst: ArrayLike, trusted: ArrayLike, weight: ArrayLike | None = None) -> np.ndarray:
    """TrustRank from the ``trusted`` nodes."""
    return rank_series(n, src, dst, _uniform(n, trusted), weight=weight)


def anti_trust_rank(n: int, src: ArrayLike, dst: ArrayLike, condemned: ArrayLike, weight: ArrayLike | None = None) -> np.ndarray:
    """Anti-TrustRank (BadRank) from the ``condemned`` nodes, on the reversed graph."""
    return rank_series(n, dst, src, _uniform(n, condemned), weight=weight)


def supporters(
    n: int, src: ArrayLike, dst: ArrayLike, distance: int = SUPPORTER_DISTANCE, memory: int = SUPPORTER_MEMORY
) -> np.ndarray:
    """Per node, the other nodes with a path of at most ``distance`` links to it.

    Exact, with a bit per (node, possible supporter), a slice of the possible supporters
    at a time so that the bit sets of the nodes and of the edges' sources take at most
    about ``memory`` bytes: O(distance · E · n / 64) word operations in all."""
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    words = (n + 63) // 64
    step = max(1, memory // max(1, 8 * (n + s.size)))
    counts = np.zeros(n, dtype=np.int64)
    for first in range(0, words, step):
        width = min(step, words - first)
        nodes = np.arange(first * 64, min(n, (first + width) * 64))
        reach = np.zeros((n, width), dtype=np.uint64)
        reach[nodes, nodes // 64 - first] = np.uint64(1) << (nodes % 64).astype(np.uint64)
        for _ in range(distance):
            grown = reach.copy()
            np.bitwise_or.at(grown, d, reach[s])
            reach = grown
        counts += np.unpackbits(reach.view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)
    return counts - 1
