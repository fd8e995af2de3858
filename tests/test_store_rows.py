"""The store's reads return rows with exactly the keys their declared row types name."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from mirrorscope.storage import rows
from mirrorscope.storage.records import LinkRecord, PageRecord, SketchRecord
from mirrorscope.storage.store import Store

#: Seed and fingerprint above 2**63: stored signed, read back unsigned.
SKETCH = SketchRecord("scheme", (1 << 64) - 1, 8, 4, 16, 64, 6, 14, 30, 23, False, (1 << 63) + 5, b"\x01\x02")


def _page(url: str, links: tuple[str, ...] = (), **fields: Any) -> PageRecord:
    host = url.split("/")[2]
    return PageRecord(
        url=url, host=host, hostname=host, port=None, path="/", depth=0, outcome="ok",
        fetched_at=datetime.now(timezone.utc), status=200, title="a title",
        links=[LinkRecord(t, t.split("/")[2], "anchor", "before", "after") for t in links],
        **fields,
    )


def _filled_store(db_url: str) -> Store:
    store = Store(db_url)
    run = store.start_run(["http://a.test/"], {})
    store.write_pages([_page("http://a.test/", ("http://b.test/",), sketch=SKETCH)], run)
    store.write_pages([_page("http://b.test/", duplicate_of="http://a.test/", contained_in=[("http://a.test/", 0.9)])], run)
    store.finish_run(run, "finished", {})
    ids = {p["url"]: p["id"] for p in store.pages()}
    store.replace_duplicate_clusters("offline", [(ids["http://a.test/"], list(ids.values()), True)], [], [])
    store.replace_mirrors(
        [{"url_a": "http://a.test/", "url_b": "http://b.test/", "level": "full", "score": 1.0, "paths_checked": 2,
          "paths_matched": 2, "fraction_ab": 1.0, "fraction_ba": 1.0, "inferred": False, "features": {}, "reasons": []}],
        [[("http://a.test/", True), ("http://b.test/", False)]],
    )
    store.replace_host_verdicts([{"host": "a.test", "kind": "spam", "flagged": False, "score": 0.1, "pages": 1, "reasons": [], "features": {}}])
    store.write_anchor_signatures([{"url": "http://a.test/", "m": 4, "seed": 1, "window": 2, "scale": 1.0, "cap": 3, "idf_bags": 5, "terms": 6, "data": b"\x00" * 16}])
    store.replace_anchor_clusters([("http://a.test/", "http://b.test/", 0.9)], [("http://a.test/", 1, True), ("http://b.test/", 1, False)])
    return store


def _keys(row_type: type) -> set[str]:
    return set(row_type.__annotations__)


def test_every_read_returns_its_declared_row_type(db_url: str) -> None:
    store = _filled_store(db_url)
    reads = [
        (store.runs(), rows.CrawlRunRow),
        (store.pages(), rows.PageRow),
        (store.hosts(), rows.HostRow),
        (store.links(), rows.LinkRow),
        ([store.summary()], rows.CrawlSummary),
        (store.sketches(), rows.SketchRow),
        (store.duplicate_clusters("offline"), rows.DuplicateClusterRow),
        (store.containment_pairs(), rows.ContainmentRow),
        (store.mirror_pairs(), rows.MirrorPairRow),
        (store.mirror_clusters()[0], rows.MirrorClusterMember),
        ([row for batch in store.page_fact_batches() for row in batch], rows.PageFacts),
        (store.host_verdicts(), rows.HostVerdictRow),
        ([store.anchor_signature("http://a.test/")], rows.AnchorSignatureRow),
        (store.anchor_pairs(), rows.AnchorPairRow),
        (store.anchor_clusters()[0], rows.AnchorClusterMember),
    ]
    for found, row_type in reads:
        assert found, row_type.__name__
        assert all(set(row) == _keys(row_type) for row in found), row_type.__name__
    (row,) = store.sketches()
    assert row["sketch"] == SKETCH
    store.close()
