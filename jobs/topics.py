"""Topics over a store: the co-clustering of the stored term vectors
(``detectors.cocluster``, Dhillon, Mallela and Modha 2003) and the topic terms of each
mirror cluster, near-duplicate cluster and spam host, stored for the report.

The vectors are the crawl's (``crawler.term_vectors``); they are weighted tf·idf here,
at run time, with idf over the stored vectors. A group's pages are those with a vector:
a mirror cluster's, the pages under any of its roots (URL prefix); a duplicate cluster's,
its members; a spam host's, the pages of that host. Run after the duplicate, mirror and
spam jobs (``jobs.detect``), whose groups it labels.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from mirrorscope.detectors.cocluster import (
    DEFAULT_COLUMN_CLUSTERS,
    DEFAULT_ITERATIONS,
    DEFAULT_LABEL_TERMS,
    DEFAULT_ROW_CLUSTERS,
    CoClustering,
    PageTermMatrix,
    cocluster,
    label_groups,
    page_term_matrix,
)
from mirrorscope.detectors.term_vectors import decode_many
from mirrorscope.storage.store import Store

__all__ = ["TOPIC_KINDS", "detect_topics", "mirror_cluster_pages"]

#: The kinds of page group labelled, as ``topic_labels.kind`` names them.
TOPIC_KINDS = ("mirror", "duplicate", "spam")


def mirror_cluster_pages(urls: Sequence[str], clusters: Sequence[Sequence[str]]) -> np.ndarray:
    """For each URL the index of the mirror cluster one of whose roots (URL prefixes) it
    lies under, -1 for none; a URL under two clusters' roots goes to the longer root."""
    roots: dict[str, list[tuple[str, int]]] = {}
    for number, cluster in enumerate(clusters):
        for root in cluster:
            roots.setdefault(urlsplit(root).netloc, []).append((root, number))
    for candidates in roots.values():
        candidates.sort(key=lambda rc: -len(rc[0]))
    out = np.full(len(urls), -1, dtype=np.int64)
    for i, url in enumerate(urls):
        for root, number in roots.get(urlsplit(url).netloc, ()):
            if url.startswith(root):
                out[i] = number
                break
    return out


def _read_vectors(store: Store) -> tuple[list[str], list[bytes]]:
    urls: list[str] = []
    blobs: list[bytes] = []
    for batch in store.term_vector_batches():
        urls.extend(url for _, url, _ in batch)
        blobs.extend(bytes(data) for _, _, data in batch)
    return urls, blobs


def _labels(
    result: CoClustering, matrix: PageTermMatrix, words: dict[int, str], groups: np.ndarray, n: int, top: int
) -> list[list[str]]:
    found = label_groups(result, matrix.rows, matrix.cols, matrix.values, groups, n, top)
    return [[words[int(t)] for t in matrix.terms[cols]] for cols in found]


def detect_topics(
    store: Store, k: int = DEFAULT_ROW_CLUSTERS, l: int = DEFAULT_COLUMN_CLUSTERS,
    iterations: int = DEFAULT_ITERATIONS, seed: int = 0, top: int = DEFAULT_LABEL_TERMS,
) -> dict[str, Any]:
    """Co-cluster the stored term vectors, label the page groups, store both; a summary."""
    urls, blobs = _read_vectors(store)
    vectors = decode_many(blobs)
    matrix = page_term_matrix(vectors.rows, vectors.term_ids, vectors.tf(), len(vectors))
    if not matrix.nonzeros:
        store.replace_topics(None, [])
        return {"pages": len(urls), "terms": 0, "nonzeros": 0, "labels": 0}
    words = {tid: term for tid, term, _ in store.term_dictionary()}
    started = time.perf_counter()
    result = cocluster(matrix.rows, matrix.cols, matrix.values, matrix.shape, k, l, iterations, seed)
    seconds = time.perf_counter() - started

    k_found = result.joint.shape[0]
    sizes = np.bincount(result.row_clusters[np.unique(matrix.rows)], minlength=k_found)
    cluster_terms = _labels(result, matrix, words, result.row_clusters, k_found, top)
    summary = {
        "pages": len(urls), "terms": matrix.shape[1], "nonzeros": matrix.nonzeros, "k": k, "l": l,
        "iterations": result.iterations, "seconds": round(seconds, 4),
        "mutual_information": result.mutual_information, "loss": result.loss.tolist(),
        "page_clusters": [
            {"cluster": int(c), "pages": int(sizes[c]), "terms": cluster_terms[c]}
            for c in np.argsort(-sizes, kind="stable") if sizes[c]
        ],
    }

    index = {url: i for i, url in enumerate(urls)}
    labels: list[tuple[str, str, int, list[str]]] = []

    def label(kind: str, subjects: list[str], groups: np.ndarray) -> None:
        counts = np.bincount(groups[groups >= 0], minlength=len(subjects))
        for subject, pages, terms in zip(subjects, counts.tolist(), _labels(result, matrix, words, groups, len(subjects), top)):
            if pages:
                labels.append((kind, subject, pages, terms))

    mirrors = [[m["url"] for m in cluster] for cluster in store.mirror_clusters()]
    label("mirror", [c[0] for c in mirrors], mirror_cluster_pages(urls, mirrors))
    duplicates = store.duplicate_clusters("broder")
    groups = np.full(len(urls), -1, dtype=np.int64)
    for number, cluster in enumerate(duplicates):
        for url in cluster["members"]:
            if url in index:
                groups[index[url]] = number
    label("duplicate", [c["representative"] for c in duplicates], groups)
    spam = [v["host"] for v in store.host_verdicts("spam", flagged_only=True)]
    host_number = {host: number for number, host in enumerate(spam)}
    groups = np.array([host_number.get(urlsplit(url).netloc, -1) for url in urls], dtype=np.int64)
    label("spam", spam, groups)
    store.replace_topics(summary, labels)
    return {
        "pages": len(urls), "terms": matrix.shape[1], "nonzeros": matrix.nonzeros,
        "iterations": result.iterations, "seconds": round(seconds, 4), "loss": float(result.loss[-1]),
        "labels": len(labels),
    }
