"""Near-duplicate pages over a store, offline: the first job of ``mirror-report detect``.

Reads the stored sketches a batch at a time straight into arrays
(``detectors.sketch_columns``: no object per page, so a million pages load in about their
arrays' size), clusters them three ways (Broder, Glassman, Manasse and
Zweig's union-find and Haveliwala, Gionis and Indyk's CENTER over MIN_s estimates;
Henzinger's super-shingles: ``detectors.clustering``), finds contained pages from the
MOD_m samples (``duplicate_results``), and writes clusters, pairs and containments back
(``write_duplicates``, which the Spark engine, ``jobs.spark_detect``, writes through too).
Computes nothing itself."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mirrorscope.detectors.clustering import (
    DEFAULT_MAX_DOCS_PER_FINGERPRINT,
    SketchArrays,
    cluster_sketches,
    cluster_super_shingles,
    containment_pairs,
)
from mirrorscope.detectors.runs import ramp, runs
from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch
from mirrorscope.detectors.sketch_columns import SketchArraysBuilder, decode_sketches
from mirrorscope.storage.store import Store

logger = logging.getLogger(__name__)

#: Broder's experiment clustered at 50% resemblance; pages this close share most text.
DEFAULT_THRESHOLD = 0.5
METHODS = ("broder", "center", "super-shingles")


def unreadable_count(blobs: list[bytes]) -> int:
    """Of sketches the batch decoder refused: those that are no sketch at all (those
    made with other parameters are left out as not comparable, as before)."""
    count = 0
    for blob in blobs:
        try:
            DocumentSketch.from_bytes(blob)
        except ValueError:
            count += 1
    return count


def load_sketches(store: Store) -> tuple[np.ndarray, SketchArrays, int]:
    """Page ids and arrays of every stored sketch made with the default parameters,
    streamed from the store a batch at a time into arrays sized once; and the number of
    stored sketches that could not be read (left out)."""
    documents, size = store.sketch_totals(DEFAULT_PARAMS.scheme)
    builder = SketchArraysBuilder(documents, size // 8)
    page_ids, unreadable = [], 0
    for ids, blobs in store.sketch_blob_batches(DEFAULT_PARAMS.scheme):
        decoded = decode_sketches(blobs)
        builder.add(decoded)
        page_ids.append(np.asarray(ids, dtype=np.int64)[decoded.accepted])
        if not decoded.accepted.all():
            unreadable += unreadable_count([b for b, ok in zip(blobs, decoded.accepted.tolist()) if not ok])
    if unreadable:
        logger.warning("%d stored sketches are unreadable and were left out of the clustering", unreadable)
    ids = np.concatenate(page_ids) if page_ids else np.empty(0, dtype=np.int64)
    return ids, builder.finish(), unreadable


@dataclass(frozen=True, slots=True)
class DuplicateResults:
    """What one engine found, as the store rows ``write_duplicates`` writes: per method
    its clusters (representative page id, member page ids, identical) largest first and
    its pairs (page a, page b, similarity rounded to 4 places) by (a, b); the
    containments (page, container, containment) by (page, container)."""

    pages: int
    unreadable: int
    threshold: float
    methods: dict[str, tuple[list[tuple[int, list[int], bool]], list[tuple[int, int, float]]]]
    contained: list[tuple[int, int, float]]


def cluster_rows(labels: np.ndarray, page_ids: np.ndarray, whole: np.ndarray) -> list[tuple[int, list[int], bool]]:
    """(representative page id, member page ids, identical) of each cluster of two or
    more pages, largest first (``Clusters.groups``' order), from each page's cluster
    label (an index into ``page_ids``)."""
    order = np.argsort(labels, kind="stable")
    starts, sizes = runs(labels[order])
    big = np.flatnonzero(sizes >= 2)
    big = big[np.argsort(-sizes[big], kind="stable")]
    sizes = sizes[big]
    positions = order[np.repeat(starts[big], sizes) + ramp(sizes)]
    group_starts = np.cumsum(sizes) - sizes
    first = positions[group_starts]
    same = whole[positions] == np.repeat(whole[first], sizes)
    identical = np.logical_and.reduceat(same, group_starts).tolist() if sizes.size else []
    representatives = page_ids[labels[first]].tolist()
    members = page_ids[positions].tolist()
    bounds = np.append(group_starts, positions.size).tolist()
    return [(r, members[a:b], i) for r, a, b, i in zip(representatives, bounds[:-1], bounds[1:], identical)]


def scored(page_ids: np.ndarray, a: np.ndarray, b: np.ndarray, score: np.ndarray) -> list[tuple[int, int, float]]:
    """(page a, page b, score rounded to 4 places) rows from index arrays."""
    return [(x, y, round(z, 4)) for x, y, z in zip(page_ids[a].tolist(), page_ids[b].tolist(), score.tolist())]


def duplicate_results(page_ids: np.ndarray, arrays: SketchArrays, unreadable: int = 0,
                      threshold: float = DEFAULT_THRESHOLD, limit: int = DEFAULT_MAX_DOCS_PER_FINGERPRINT) -> DuplicateResults:
    """The numpy path: cluster the pages three ways and find the containments, in memory
    (fingerprints in more than ``limit`` sketches dropped as boilerplate)."""
    n = page_ids.size
    offsets, values, whole = arrays.offsets, arrays.min_s, arrays.fingerprints
    options = {"document_fingerprints": whole, "threshold": threshold, "max_docs_per_fingerprint": limit}
    results = {
        "broder": cluster_sketches(page_ids, offsets, values, **options),
        "center": cluster_sketches(page_ids, offsets, values, method="center", **options),
    }
    if n:
        results["super-shingles"] = cluster_super_shingles(page_ids, arrays.super_shingles, document_fingerprints=whole)
    a, b, c = containment_pairs(arrays.mod_offsets, arrays.mod_m, max_docs_per_fingerprint=limit) if n else (np.empty(0, int),) * 3
    differ = whole[a] != whole[b]
    methods = {
        method: (cluster_rows(clusters.labels, page_ids, whole), scored(page_ids, clusters.i, clusters.j, clusters.similarity))
        for method, clusters in results.items()
    }
    return DuplicateResults(n, unreadable, threshold, methods, scored(page_ids, a[differ], b[differ], c[differ]))


def write_duplicates(store: Store, found: DuplicateResults, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Replace each method's clusters, pairs and (with Broder's) the containments in the
    store, whichever engine found them; the summary ``mirror-report detect`` prints."""
    say = progress or (lambda _: None)
    summary: dict[str, Any] = {"pages": found.pages, "threshold": found.threshold, "unreadable_sketches": found.unreadable}
    for method, (groups, pairs) in found.methods.items():
        store.replace_duplicate_clusters(method, groups, pairs, found.contained if method == "broder" else [])
        summary[method] = {"clusters": len(groups), "pages_in_clusters": sum(len(g[1]) for g in groups), "pairs": len(pairs)}
        say(f"{method}: {len(groups)} clusters")
    summary["containment_pairs"] = len(found.contained)
    return summary


def detect_duplicates(store: Store, threshold: float = DEFAULT_THRESHOLD, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Cluster the store's pages three ways and persist clusters, pairs and containments."""
    say = progress or (lambda _: None)
    page_ids, arrays, unreadable = load_sketches(store)
    say(f"{page_ids.size} sketches loaded" + (f" ({unreadable} unreadable left out)" if unreadable else ""))
    return write_duplicates(store, duplicate_results(page_ids, arrays, unreadable, threshold), say)
