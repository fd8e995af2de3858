"""Replicated collections over a store, bottom-up (``detectors.collections``), and the
mirror candidates they give the top-down validator (``jobs.mirrors``).

The trivial clusters are the ``duplicates`` job's clusters (``broder`` by default, so run
that job first); the links are the store's, read as the page graph
(``jobs.linkgraph``). A collection's replicas become candidate pairs of locations: each
replica's host and the longest directory holding all its pages, with the replicas'
page-to-page correspondence, so that the validator compares a page with its copy even
where the copy's path was renamed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from itertools import combinations
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from mirrorscope.detectors.collections import DEFAULT_MIN_SIZE, find_collections
from mirrorscope.jobs.linkgraph import build_link_graph
from mirrorscope.jobs.mirrors import url_path
from mirrorscope.storage.store import Store

__all__ = ["CollectionCandidate", "collection_candidates", "detect_collections", "replica_root"]

#: (host a, prefix a, host b, prefix b, path on a -> path on b) of two replicas.
CollectionCandidate = tuple[str, str, str, str, dict[str, str]]


def detect_collections(store: Store, method: str = "broder", min_size: int = DEFAULT_MIN_SIZE) -> dict[str, Any]:
    """Find the replicated collections of ``method``'s near-duplicate clusters and store them."""
    rows = store.duplicate_cluster_pages(method)
    graph = build_link_graph(store)
    cluster = np.array([r[0] for r in rows], dtype=np.int64)
    page_ids = np.array([r[1] for r in rows], dtype=np.int64)
    urls = [r[2] for r in rows]
    _, host = np.unique(np.array([urlsplit(u).netloc for u in urls], dtype=object), return_inverse=True)
    # The graph's ids of the clustered pages; links with another end are of no use here.
    local = np.full(len(graph), -1, dtype=np.int64)
    in_graph = [(k, graph.id(u)) for k, u in enumerate(urls)]
    known = np.array([(k, g) for k, g in in_graph if g is not None], dtype=np.int64).reshape(-1, 2)
    local[known[:, 1]] = known[:, 0]
    src, dst = graph.out.edges()
    src, dst = local[src], local[dst]
    both = (src >= 0) & (dst >= 0)
    found = find_collections(cluster, host.astype(np.int64), src[both], dst[both], min_size=min_size)
    store.replace_collections([page_ids[c.pages].tolist() for c in found])
    return {
        "collections": len(found),
        "pages": int(sum(c.pages.size for c in found)),
        "largest": max((c.size for c in found), default=0),
    }


def _directory(paths: Sequence[str]) -> str:
    """The longest directory holding every path, with its trailing slash."""
    common = posixpath.commonpath([posixpath.dirname(p.split("?", 1)[0]) or "/" for p in paths])
    return common.rstrip("/") + "/"


def replica_root(urls: Sequence[str]) -> str:
    """The URL root of a replica: its host and the longest directory holding all its pages."""
    parts = urlsplit(urls[0])
    return f"{parts.scheme}://{parts.netloc}{_directory([url_path(u) for u in urls])}"


def collection_candidates(collections: Sequence[dict[str, Any]]) -> list[CollectionCandidate]:
    """Every two replicas of a stored collection on different hosts, as locations with
    their page correspondence; a pair of hosts met in several collections gets the
    correspondences of all of them, under the directory holding them all."""
    merged: dict[tuple[str, str], dict[str, str]] = {}
    for collection in collections:
        replicas = [[(urlsplit(u).netloc, url_path(u)) for u in replica] for replica in collection["replicas"]]
        for first, second in combinations(replicas, 2):
            host_a, host_b = first[0][0], second[0][0]
            if host_a == host_b:
                continue
            if host_a > host_b:
                first, second, host_a, host_b = second, first, host_b, host_a
            merged.setdefault((host_a, host_b), {}).update((pa, pb) for (_, pa), (_, pb) in zip(first, second))
    return [(a, _directory(list(m)), b, _directory(list(m.values())), m) for (a, b), m in sorted(merged.items())]
