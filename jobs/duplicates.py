"""Near-duplicate pages over a store, offline: the first job of ``mirror-report detect``.

Reads the stored sketches, clusters them three ways (Broder, Glassman, Manasse and
Zweig's union-find and Haveliwala, Gionis and Indyk's CENTER over MIN_s estimates;
Henzinger's super-shingles: ``detectors.clustering``), finds contained pages from the
MOD_m samples, and writes clusters, pairs and containments back. Computes nothing itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mirrorscope.detectors.clustering import cluster_sketches, cluster_super_shingles, containment_pairs, sketch_arrays
from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch
from mirrorscope.storage.store import Store

#: Broder's experiment clustered at 50% resemblance; pages this close share most text.
DEFAULT_THRESHOLD = 0.5
METHODS = ("broder", "center", "super-shingles")


def _load(store: Store) -> tuple[np.ndarray, list[DocumentSketch]]:
    ids, blobs = store.sketch_blobs(DEFAULT_PARAMS.scheme)
    sketches = [DocumentSketch.from_bytes(b) for b in blobs]
    same = [k.params == DEFAULT_PARAMS for k in sketches]
    return np.asarray([i for i, ok in zip(ids, same) if ok], dtype=np.int64), [k for k, ok in zip(sketches, same) if ok]


def detect_duplicates(store: Store, threshold: float = DEFAULT_THRESHOLD, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Cluster the store's pages three ways and persist clusters, pairs and containments."""
    say = progress or (lambda _: None)
    page_ids, sketches = _load(store)
    say(f"{len(sketches)} sketches loaded")
    arrays = sketch_arrays(sketches)
    offsets, values, whole = arrays.offsets, arrays.min_s, arrays.fingerprints
    results = {
        "broder": cluster_sketches(page_ids, offsets, values, document_fingerprints=whole, threshold=threshold),
        "center": cluster_sketches(page_ids, offsets, values, document_fingerprints=whole, threshold=threshold, method="center"),
    }
    if sketches:
        results["super-shingles"] = cluster_super_shingles(page_ids, arrays.super_shingles, document_fingerprints=whole)
    a, b, c = containment_pairs(arrays.mod_offsets, arrays.mod_m) if sketches else (np.empty(0, int),) * 3
    contained = [(int(page_ids[x]), int(page_ids[y]), round(float(z), 4)) for x, y, z in zip(a, b, c) if whole[x] != whole[y]]
    summary: dict[str, Any] = {"pages": len(sketches), "threshold": threshold}
    for method, clusters in results.items():
        groups = []
        for members in clusters.groups(min_size=2):
            positions = np.searchsorted(page_ids, members)
            identical = bool((whole[positions] == whole[positions[0]]).all())
            representative = int(page_ids[clusters.labels[positions[0]]])
            groups.append((representative, [int(m) for m in members], identical))
        pairs = [(int(page_ids[x]), int(page_ids[y]), round(float(r), 4)) for x, y, r in zip(clusters.i, clusters.j, clusters.similarity)]
        store.replace_duplicate_clusters(method, groups, pairs, contained if method == "broder" else [])
        summary[method] = {"clusters": len(groups), "pages_in_clusters": sum(len(g[1]) for g in groups), "pairs": len(pairs)}
        say(f"{method}: {len(groups)} clusters")
    summary["containment_pairs"] = len(contained)
    return summary
