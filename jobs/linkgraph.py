"""The page and host link graph of a store, built in full offline (``detectors.linkgraph``).

The links are read in chunks (``Store.link_chunks``); each chunk's URLs get temporary
ids in order of first sight, so that what is held while reading is the distinct URLs and
two int64 arrays, never the rows; the ids are reassigned in URL order at the end. The
graph is built from the store's links only: building it during the crawl, page by page,
is not done (a crawl's pages are in the store as soon as they are written, so the offline
build is as current as the store).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mirrorscope.detectors.linkgraph import LinkGraph
from mirrorscope.storage.sql import STREAM_BATCH

__all__ = ["build_link_graph"]


def build_link_graph(store: Any, chunk: int = STREAM_BATCH) -> LinkGraph:
    """The link graph of every link ``store`` holds."""
    ids: dict[str, int] = {}
    sources: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    for source_urls, target_urls in store.link_chunks(chunk):
        # Converting the rows' strings to ids is the one step per link in Python.
        sources.append(np.fromiter((ids.setdefault(u, len(ids)) for u in source_urls), np.int64, len(source_urls)))
        targets.append(np.fromiter((ids.setdefault(u, len(ids)) for u in target_urls), np.int64, len(target_urls)))
    empty = np.zeros(0, dtype=np.int64)
    return LinkGraph.from_ids(list(ids), np.concatenate(sources or [empty]), np.concatenate(targets or [empty]))
