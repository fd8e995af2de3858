"""Kill and resume (issue 16, items 5 and 6), on SQLite and PostgreSQL: every request obeys
robots.txt, however many waited for it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from mirrorscope.sandbox import Host, World
from mirrorscope.sandbox.markup import document, html_resource, robots
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world


def test_every_request_that_waited_for_robots_txt_obeys_it(db_url: str, tmp_path: Path) -> None:
    """Requests of a host that arrive while its robots.txt is being fetched all wait for
    it; only the first of them used to get its rules (the others: none, so allowed), which
    is how a resumed crawl, queuing many URLs of a host at once, fetched disallowed ones."""
    private = [f"/private/{n}.html" for n in range(6)]
    pages = {path: html_resource(document("Members only", "<p>not for crawlers</p>")) for path in ["/", *private]}
    pages["/robots.txt"] = replace(robots("/private/"), delay=0.5)  # every seed waits for it
    host = Host("www.members-club.org", "127.0.1.70", "other", pages)
    world = World(seed=0, hosts=[host], seed_paths=[(host.name, path) for path in ["/", *private]])
    _, requests = crawl_world(world, tmp_path, db_url)
    assert [path for _, path in requests if path.startswith("/private/")] == []
    store = Store(db_url)
    try:
        outcomes = {urlsplit(p["url"]).path: p["outcome"] for p in store.pages()}
    finally:
        store.close()
    assert {path: outcomes.get(path) for path in private} == dict.fromkeys(private, "robots")
