"""Re-crawls on loopback: the changing world (``sandbox.changes``) crawled, then re-crawled
twice with conditional requests, on SQLite and PostgreSQL; the recorded changes against
the world's truth, the 304s counted at the server, the stale mirror's lag, and the rapid
complete change reason on the rewriting host only."""

from __future__ import annotations

import http.client
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
from rich.console import Console

from mirrorscope.detectors.sketch import SCHEME
from mirrorscope.jobs.spam import rejudge_spam
from mirrorscope.report.document import report_schema
from mirrorscope.report.render import render_changes_csv, render_changes_table
from mirrorscope.sandbox import SandboxServer, build_real_world, build_world
from mirrorscope.sandbox.changes import LAG_DAYS, changing_world
from mirrorscope.storage.store import Store
from tests.helpers import crawl_arguments, mirror_report, requires_real_pages, scrapy_crawl

_RAPID = "share of pages changed completely between crawls"


def _recorded(store: Store, run_id: int) -> dict[str, tuple[str, str | None]]:
    return {row["url"]: (row["kind"], row["moved_to"]) for row in store.page_changes(run_id)}


def test_recrawls_record_the_worlds_changes(db_url: str, tmp_path: Path) -> None:
    changing = changing_world(build_world(0, hostile=False))
    with SandboxServer(changing.versions[0]) as server:
        args = crawl_arguments(changing.versions[0], server.port, tmp_path, db_url)
        first = scrapy_crawl(*args)
        assert first.returncode == 0, first.stderr[-3000:]
        hosts_file = tmp_path / "hosts"
        for k in (1, 2):
            store = Store(db_url)
            stored = [row["url"] for row in store.stored_versions(SCHEME)]
            store.close()
            server.world = changing.versions[k]
            server.reset_stats()
            if k == 1:
                result = scrapy_crawl(*args, "-a", "recrawl=1")
            else:
                result = mirror_report("crawl", "--recrawl", "--db", db_url, "--hosts-file", str(hosts_file), "--allow-private",
                                       "--log-level", "WARNING")
            assert result.returncode == 0, result.stderr[-3000:]
            expected = changing.expected(k - 1, stored, server.port)
            store = Store(db_url)
            run_id = store.runs()[-1]["id"]
            recorded = _recorded(store, run_id)
            store.close()
            # Every stored page classified as the world changed it, moves with their target.
            assert recorded == expected
            kinds = Counter(kind for kind, _ in expected.values())
            if k == 1:
                assert kinds["gone"] == 2 and kinds["moved"] == 2 and kinds["changed"] > 0
            # Every unchanged page was a 304 without a body: no full fetch of an unchanged page.
            assert sum(server.not_modified_by_host().values()) == kinds["unchanged"]
            # Hosts without an ETag were asked If-Modified-Since and answered 304 too.
            assert set(changing.without_etag) & set(server.not_modified_by_host())

    store = Store(db_url)
    try:
        rejudge_spam(store, link_features=False)
        rapid = {v["host"].split(":")[0] for v in store.host_verdicts("spam") if any(_RAPID in r for r in v["reasons"])}
        assert rapid == {changing.rewriter}
    finally:
        store.close()

    report = mirror_report("changes", "--db", db_url, "--format", "json")
    assert report.returncode == 0, report.stderr[-2000:]
    document = json.loads(report.stdout)
    jsonschema.validate(document, {"$defs": report_schema()["$defs"], "$ref": "#/$defs/changes_report"})
    assert [h["host"].split(":")[0] for h in document["hosts"] if h["rapid_change"]] == [changing.rewriter]
    original, mirror = changing.stale_pair
    lags = [lag for lag in document["mirror_lags"] if original in lag["original"] and mirror in lag["mirror"]]
    assert len(lags) == 1
    lag = lags[0]
    # The mirror's sampled pages whose original changed followed one crawl and a week later.
    assert lag["caught_up"] > 0 and lag["behind"] == 0 and lag["in_step"] == 0
    assert lag["lag_crawls"] == 1 and lag["lag_days"] == LAG_DAYS
    # No lag is reported the other way round: the mirror's change followed the original's.
    assert not [lag for lag in document["mirror_lags"] if mirror in lag["original"] and original in lag["mirror"]]


def test_server_answers_conditional_requests() -> None:
    changing = changing_world(build_world(0, hostile=False))
    world = changing.versions[0]
    with_etag = next(h.name for h in world.hosts if h.name not in changing.without_etag)
    without = changing.without_etag[0]
    with SandboxServer(world) as server:
        def get(host: str, **headers: str) -> http.client.HTTPResponse:
            conn = http.client.HTTPConnection(server.ip_of(host), server.port, timeout=10)
            conn.request("GET", "/", headers={"Host": host, **headers})
            return conn.getresponse()

        full = get(with_etag)
        etag, body = full.getheader("ETag"), full.read()
        assert full.status == 200 and etag and body
        same = get(with_etag, **{"If-None-Match": etag})
        assert same.status == 304 and same.read() == b"" and same.getheader("ETag") == etag
        assert get(with_etag, **{"If-None-Match": '"other"'}).status == 200
        plain = get(without)
        modified = plain.getheader("Last-Modified")
        assert plain.status == 200 and plain.getheader("ETag") is None and modified == "Sun, 01 Nov 2026 00:00:00 GMT"
        assert get(without, **{"If-Modified-Since": modified}).status == 304
        assert get(without, **{"If-Modified-Since": "Sat, 31 Oct 2026 00:00:00 GMT"}).status == 200
        assert get(without, **{"If-Modified-Since": "not a date"}).status == 200
        assert server.not_modified_by_host() == {with_etag: 1, without: 1}


def test_changes_report_escapes_crawled_strings() -> None:
    hostile = "http://evil.org/\x1b[31mred\u202e.html"
    report = {
        "runs": [{"id": 2, "started_at": "2026-12-06T00:00:00", "unchanged": 0, "changed": 1, "gone": 0, "moved": 1}],
        "hosts": [{"host": "evil.org\x07", "pages": 2, "unchanged": 0, "changed": 1, "gone": 0, "moved": 1, "change_rate": 1.0,
                   "complete_changes": 0, "complete_share": 0.0, "rapid_change": False}],
        "pages": [{"run": 2, "url": hostile, "kind": "moved", "resemblance": 0.9, "moved_to": "=cmd|' /C calc'!A0"}],
        "mirror_lags": [],
    }
    console = Console(file=io.StringIO(), width=300)
    render_changes_table(report, console)
    text = console.file.getvalue()
    assert "\x1b" not in text and "\\x1b[31mred\\u202e.html" in text and "evil.org\\x07" in text
    csv_text = render_changes_csv(report)
    assert "\x1b" not in csv_text and "'=cmd" in csv_text


def test_recrawl_of_an_empty_store_is_a_one_line_error(tmp_path: Path) -> None:
    result = mirror_report("crawl", "--recrawl", "--db", f"sqlite:///{tmp_path / 'empty.db'}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "mirror-report: error: nothing to re-crawl: the store holds no HTML page (crawl from seeds first, or give seeds)"
    ]
    bad = mirror_report("crawl", "http://a.example/", "--db", f"sqlite:///{tmp_path / 'empty.db'}", "-s", "RECRAWL_CONDITIONAL=maybe")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "RECRAWL_CONDITIONAL" in lines[0]


def _versions_agree_with_truth(changing: Any) -> None:
    """Each version serves what the truth says: changed pages differ, others keep their
    bytes; moved pages are served at their target; the stale mirror follows one version late."""
    v0, v1, v2 = changing.versions
    for k, (old, new) in enumerate(((v0, v1), (v1, v2))):
        truth = changing.truth[k]
        for host in old.hosts:
            fresh = new.host(host.name)
            for path, resource in host.resources.items():
                kind, moved = truth.get((host.name, path), ("unchanged", None))
                now = fresh.resources.get(path)
                if kind == "unchanged":
                    assert now is not None and now.body == resource.body, (host.name, path)
                elif kind == "changed":
                    assert now is not None and now.body != resource.body, (host.name, path)
                elif kind == "gone":
                    assert now is None
                else:
                    assert now is None and fresh.resources[moved].body == resource.body
    original, mirror = changing.stale_pair
    lagging = changing.lagging_paths()
    assert lagging
    for path in lagging:
        assert v1.host(mirror).resources[path].body == v0.host(original).resources[path].body
        assert v2.host(mirror).resources[path].body == v1.host(original).resources[path].body
    kinds = Counter(kind for kind, _ in changing.truth[0].values())
    assert kinds["gone"] == 2 and kinds["moved"] == 2
    rewriter = v0.host(changing.rewriter)
    rewritten = [p for (h, p), (kind, _) in changing.truth[0].items() if h == changing.rewriter]
    assert len(rewritten) >= 5 and all((changing.rewriter, p) in changing.truth[1] for p in rewritten)
    assert rewriter.resources["/"].body != v1.host(changing.rewriter).resources["/"].body


def test_the_changing_world_serves_its_truth() -> None:
    _versions_agree_with_truth(changing_world(build_world(0, hostile=False)))


@requires_real_pages
def test_the_changing_real_page_world_serves_its_truth() -> None:
    _versions_agree_with_truth(changing_world(build_real_world(0, small=True)))
