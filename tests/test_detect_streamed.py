"""``mirror-report detect`` reads the store's sketches a batch at a time into arrays: its
clusters, pairs, containments and mirror view equal those of decoding every sketch into
an object first (the job before it streamed), on SQLite and PostgreSQL, with batches far
smaller than the store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pytest

from mirrorscope.crawler.pipelines import sketch_record
from mirrorscope.detectors.clustering import cluster_sketches, cluster_super_shingles, containment_pairs, sketch_arrays
from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch, SketchParams, sketch_many
from mirrorscope.jobs.detect import detect
from mirrorscope.jobs.mirrors import HostView
from mirrorscope.storage.records import PageRecord, SketchRecord
from mirrorscope.storage.store import Store

PAGES_PER_HOST = 97


def planted_documents(seed: int = 5) -> list[list[str]]:
    """Near-duplicate groups (2-6 variants replacing up to 8% of the words, some exact
    copies), decoys replacing half, pages holding another page inside, and unrelated pages."""
    rng = np.random.default_rng(seed)

    def text(size: int) -> np.ndarray:
        return rng.integers(0, 3000, size)

    docs: list[np.ndarray] = []
    for _ in range(220):
        base = text(int(rng.integers(150, 400)))
        docs.append(base)
        for _ in range(int(rng.integers(1, 6))):
            variant = base.copy()
            if rng.random() > 0.15:
                changed = rng.random(base.size) < rng.uniform(0, 0.08)
                variant[changed] = text(int(changed.sum()))
            docs.append(variant)
        if rng.random() < 0.2:
            decoy = base.copy()
            changed = rng.random(base.size) < 0.5
            decoy[changed] = text(int(changed.sum()))
            docs.append(decoy)
        if rng.random() < 0.1:
            docs.append(np.concatenate((text(300), base, text(300))))
    docs += [text(int(rng.integers(0, 400))) for _ in range(400)]
    order = rng.permutation(len(docs))
    return [[f"w{t}" for t in docs[k]] for k in order]


def _record(n: int, sketch: SketchRecord) -> PageRecord:
    host = f"h{n // PAGES_PER_HOST}.test"
    return PageRecord(
        url=f"http://{host}/p{n}.html", host=host, hostname=host, port=None, path=f"/p{n}.html", depth=1,
        outcome="ok", fetched_at=datetime.now(timezone.utc), status=200, title=f"page {n % 50}", fingerprint=None,
        sketch=sketch,
    )


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    sketches = [sketch_record(k) for k in sketch_many(planted_documents())]
    # One sketch of other parameters (not comparable: left out) and one unreadable.
    sketches[10] = sketch_record(sketch_many([["other", "seed"] * 20], SketchParams(seed=7))[0])
    sketches[20] = replace(sketches[20], data=b"MSKT\x01broken")
    opened = Store(db_url)
    opened.insert_new_pages([_record(n, k) for n, k in enumerate(sketches)])
    opened.stream_batch, opened.write_batch = 333, 97
    yield opened
    opened.close()


def reference_results(store: Store) -> dict[str, tuple[Any, ...]]:
    """What the job wrote before it streamed: every sketch decoded into an object."""
    ids, objects = [], []
    for row in store.sketches(DEFAULT_PARAMS.scheme):
        try:
            sketch = DocumentSketch.from_bytes(row["sketch"].data)
        except ValueError:
            continue
        if sketch.params == DEFAULT_PARAMS:
            ids.append(row["page_id"])
            objects.append(sketch)
    page_ids = np.asarray(ids, dtype=np.int64)
    arrays = sketch_arrays(objects)
    whole = arrays.fingerprints
    results = {
        "broder": cluster_sketches(page_ids, arrays.offsets, arrays.min_s, document_fingerprints=whole),
        "center": cluster_sketches(page_ids, arrays.offsets, arrays.min_s, document_fingerprints=whole, method="center"),
        "super-shingles": cluster_super_shingles(page_ids, arrays.super_shingles, document_fingerprints=whole),
    }
    a, b, c = containment_pairs(arrays.mod_offsets, arrays.mod_m)
    contained = [(int(page_ids[x]), int(page_ids[y]), round(float(z), 4)) for x, y, z in zip(a, b, c) if whole[x] != whole[y]]
    written = {}
    for method, clusters in results.items():
        groups = []
        for members in clusters.groups(min_size=2):
            positions = np.searchsorted(page_ids, members)
            identical = bool((whole[positions] == whole[positions[0]]).all())
            groups.append((int(page_ids[clusters.labels[positions[0]]]), [int(m) for m in members], identical))
        pairs = [(int(page_ids[x]), int(page_ids[y]), round(float(r), 4)) for x, y, r in zip(clusters.i, clusters.j, clusters.similarity)]
        written[method] = (groups, pairs, contained if method == "broder" else [])
    return written


def test_streamed_detection_writes_what_object_decoding_did(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = reference_results(store)
    written: dict[str, tuple[Any, ...]] = {}
    write = store.replace_duplicate_clusters

    def recorded(method: str, clusters: Any, pairs: Any, containments: Any) -> None:
        written[method] = (list(clusters), list(pairs), list(containments))
        write(method, clusters, pairs, containments)

    monkeypatch.setattr(store, "replace_duplicate_clusters", recorded)
    summary = detect(store)["duplicates"]
    assert written == expected
    broder_groups, broder_pairs, contained = expected["broder"]
    # The data can fail: planted groups, pairs and containments are there.
    assert len(broder_groups) > 150 and len(broder_pairs) > 300 and contained
    assert summary["unreadable_sketches"] == 1
    assert summary["pages"] == len(store.sketches()) - 2
    # Written in batches of 97 rows and read back whole.
    urls = {p["id"]: p["url"] for p in store.pages()}
    stored = store.duplicate_clusters("broder")
    assert sorted(sorted(c["members"]) for c in stored) == sorted(sorted(urls[m] for m in g[1]) for g in broder_groups)
    assert len(store.containment_pairs()) == len(contained)


def test_mirror_view_decodes_batches_as_objects(store: Store) -> None:
    view = HostView.from_store(store)
    expected = HostView()
    for row in store.sketches():
        try:
            sketch = DocumentSketch.from_bytes(row["sketch"].data)
        except ValueError:
            sketch = None
        expected.add_page(row["url"], row["host"], None, "ok", sketch)
    assert view.content == expected.content
    assert sum(len(paths) for paths in view.content.values()) == len(store.sketches()) - 1
