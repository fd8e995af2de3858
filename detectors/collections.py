"""Replicated web collections, found bottom-up from near-duplicate pages and their links.

Cho, Shivakumar and Garcia-Molina, "Finding replicated web collections" (SIGMOD 2000).
A *collection* is a set of pages with the links among them; two collections are
*similar* when their pages correspond one to one, corresponding pages being near
duplicates, and a link between two pages of one has a link between the corresponding
pages of the other. A *cluster* is a set of pairwise similar collections; its
*cardinality* is how many collections (replicas) it holds, its *size* how many pages
each has. The paper's cluster-growing algorithm, done here:

1. Trivial clusters: each cluster of near-duplicate pages (the ``duplicates`` job's
   clusters) is a cluster of one-page collections; its cardinality is its page count.
2. For every two trivial clusters R_i and R_j joined by links, s_ij counts the pages of
   R_i that link to some page of R_j and d_ij the pages of R_j linked from some page of
   R_i. R_i and R_j are merged when ``|R_i| = s_ij = d_ij = |R_j|``: the same number of
   copies on both sides, and every copy of one linked to a copy of the other. Merging is
   union-find over these pairs, which is the algorithm's fixpoint: the condition is on
   trivial clusters, so merging never makes another pair qualify. Merging pairs of the
   same cardinality only keeps the cardinality from decreasing, as the paper asks.
3. The replicas of a merged cluster are the connected components of its pages along the
   links that made the merges. The paper's condition is necessary, not sufficient: a
   component holding exactly one page of each trivial cluster of the merged cluster is a
   replica; the others (a copy linked into another copy) are left out, and a merged
   cluster with fewer than two replicas left is no cluster of collections.

Choices of ours, with their reasons (the paper's data was a crawl of 25 million pages;
its near-duplicate test is its own chunk fingerprints, here the crawl's sketches):

* One page per host in a trivial cluster. A static server serves ``dir/index.html`` also
  at ``dir/``; both URLs of one host in one trivial cluster would give the host two
  "copies" and break the equal cardinalities. The page with the smallest id stands for
  the host's copies, and links to the others are links to it.
* Replicas are followed along links within one host (``same_host_links``, True): a copy
  that links back to its original ("this is a mirror of ...") would otherwise join the
  two replicas into one component. A collection spread over several hosts is then
  reported as one collection per host.
* ``min_size`` (3) pages per collection. Two unrelated sites made with one template share
  two or three interlinked boilerplate pages (licence, contact, imprint); every
  collection found is still validated as a mirror candidate before any pair is reported
  (``jobs.mirrors``), so the floor only keeps the report short. The paper's own examples
  (the Java API documentation, the Linux Documentation Project) hold hundreds of pages.

Everything is numpy over page ids: no Scrapy, no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.runs import runs
from mirrorscope.detectors.unionfind import connected_components

__all__ = ["DEFAULT_MIN_SIZE", "ReplicatedCollection", "find_collections"]

#: Pages a collection needs to be reported (see the module docstring).
DEFAULT_MIN_SIZE = 3


@dataclass(frozen=True)
class ReplicatedCollection:
    """A cluster of similar collections: ``pages[r, k]`` is page k of replica r, so each
    column holds near-duplicate pages (one trivial cluster) and the rows are the
    replicas, in order of their smallest page id; each row's pages in the order of the
    first replica's page ids."""

    pages: np.ndarray

    @property
    def cardinality(self) -> int:
        return int(self.pages.shape[0])

    @property
    def size(self) -> int:
        return int(self.pages.shape[1])


def _host_representatives(cluster: np.ndarray, host: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each page's stand-in, the cluster label left on stand-ins only): one page per
    (trivial cluster, host), the smallest id."""
    n = cluster.size
    stand_in = np.arange(n)
    clustered = np.flatnonzero(cluster >= 0)
    order = clustered[np.lexsort((clustered, host[clustered], cluster[clustered]))]
    starts, lengths = runs(cluster[order] * (int(host.max(initial=0)) + 1) + host[order])
    stand_in[order] = np.repeat(order[starts], lengths)
    label = np.full(n, -1, dtype=np.int64)
    label[order[starts]] = cluster[order[starts]]
    return stand_in, label


def _distinct_pairs(a: np.ndarray, b: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    keys = np.unique(a * width + b)
    return keys // width, keys % width


def find_collections(
    cluster: ArrayLike,
    host: ArrayLike,
    src: ArrayLike,
    dst: ArrayLike,
    *,
    min_size: int = DEFAULT_MIN_SIZE,
    same_host_links: bool = True,
) -> list[ReplicatedCollection]:
    """Clusters of replicated collections over pages 0..n-1.

    ``cluster[p]``: the near-duplicate cluster of page p (any non-negative label), -1 for
    a page in none; ``host[p]``: its host's id; ``src``/``dst``: the page links. Largest
    first (pages in all replicas), then by smallest page id.
    """
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    cluster, host = np.asarray(cluster, dtype=np.int64), np.asarray(host, dtype=np.int64)
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    if cluster.shape != host.shape or src.shape != dst.shape:
        raise ValueError("cluster and host, src and dst must have the same lengths")
    n = cluster.size
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError("link ends must be page ids below len(cluster)")
    stand_in, label = _host_representatives(cluster, host)
    width = int(label.max(initial=-1)) + 1
    cardinality = np.bincount(label[label >= 0], minlength=width)
    # Only trivial clusters of two or more copies can hold replicated pages.
    stand_ins = np.flatnonzero(label >= 0)
    label[stand_ins[cardinality[label[stand_ins]] < 2]] = -1
    a, b = stand_in[src], stand_in[dst]
    keep = (label[a] >= 0) & (label[b] >= 0) & (label[a] != label[b])
    a, b = _distinct_pairs(a[keep], b[keep], n)
    ca, cb = label[a], label[b]
    # s_ij: pages of R_i linking into R_j; d_ij: pages of R_j linked from R_i.
    s_page, s_to = _distinct_pairs(a, cb, width)
    s_keys, s_counts = np.unique(label[s_page] * width + s_to, return_counts=True)
    d_from, d_page = _distinct_pairs(ca, b, n)
    d_keys, d_counts = np.unique(d_from * width + label[d_page], return_counts=True)
    pair_keys = np.unique(ca * width + cb)
    s = s_counts[np.searchsorted(s_keys, pair_keys)]
    d = d_counts[np.searchsorted(d_keys, pair_keys)]
    ci, cj = pair_keys // width, pair_keys % width
    merge = (cardinality[ci] == s) & (s == d) & (d == cardinality[cj])
    merged = connected_components(width, ci[merge], cj[merge])
    merging = np.isin(ca * width + cb, pair_keys[merge])
    if same_host_links:
        merging &= host[a] == host[b]
    return _replicas(label, merged, a[merging], b[merging], min_size)


def _replicas(label: np.ndarray, merged: np.ndarray, a: np.ndarray, b: np.ndarray, min_size: int) -> list[ReplicatedCollection]:
    """The replicas of each merged cluster: components of its pages along the merging
    links that hold exactly one page of each of its trivial clusters."""
    n = label.size
    component = connected_components(n, a, b)
    pages = np.flatnonzero(label >= 0)
    # How many trivial clusters each merged cluster holds: a replica has a page of each.
    labels_per_group = np.bincount(merged[np.unique(label[pages])], minlength=merged.size)
    order = pages[np.lexsort((label[pages], component[pages]))]
    starts, lengths = runs(component[order])
    comp_group = merged[label[order[starts]]]
    first_of_label = np.ones(order.size, dtype=np.int64)
    first_of_label[1:] = label[order][1:] != label[order][:-1]
    first_of_label[starts] = 1
    distinct = np.add.reduceat(first_of_label, starts) if order.size else starts
    whole = (lengths == labels_per_group[comp_group]) & (distinct == lengths) & (lengths >= min_size)
    found: list[ReplicatedCollection] = []
    chosen = np.flatnonzero(whole)
    for g in np.unique(comp_group[chosen]).tolist():
        rows = chosen[comp_group[chosen] == g]
        if rows.size < 2:
            continue
        # Each row's pages in label order: columns line up across replicas.
        matrix = np.stack([order[starts[r]: starts[r] + lengths[r]] for r in rows.tolist()])
        matrix = matrix[np.argsort(matrix.min(axis=1), kind="stable")]
        column_order = np.argsort(matrix[0], kind="stable")
        found.append(ReplicatedCollection(matrix[:, column_order]))
    found.sort(key=lambda c: (-c.pages.size, int(c.pages.min())))
    return found
