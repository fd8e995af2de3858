"""What the crawl covers does not depend on which copy of a mirrored page it met first.

A page of a mirror's canonical side recorded as a duplicate of its copy on the mirror side
had its links left to the copy's, which the crawl refuses once the mirror is known: the
canonical side's pages reachable only through such pages were never recorded (seen as
lost pages after a kill and resume, when the order of fetches changed)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from mirrorscope.jobs.mirrors import canonical_counterpart, supersedes
from mirrorscope.sandbox import Host, Resource, World
from mirrorscope.sandbox.markup import document, ext, html_resource, robots
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world, page, prose

ORIGINAL, MIRROR, PORTAL = "docs.keeper-original.org", "docs.copy-mirror.net", "www.portal-links.org"
NOTES = 12

MIRRORED = {"copy.net:80/pub/": "keep.org:80/", "other.net:80/": "keep.org:80/docs/"}


def test_a_url_on_a_mirror_side_has_its_counterpart_on_the_canonical_side() -> None:
    assert canonical_counterpart(MIRRORED, "http://copy.net:80/pub/a/b.html?q=1") == ("keep.org:80/", "keep.org:80", "/a/b.html?q=1")
    assert canonical_counterpart(MIRRORED, "http://other.net:80/x.html") == ("keep.org:80/docs/", "keep.org:80", "/docs/x.html")
    assert canonical_counterpart(MIRRORED, "http://copy.net:80/private/a.html") is None
    assert canonical_counterpart(MIRRORED, "http://keep.org:80/a.html") is None


def test_a_duplicate_supersedes_its_original_only_from_the_canonical_location() -> None:
    assert supersedes(MIRRORED, "http://keep.org:80/a.html", "http://copy.net:80/pub/a.html")
    assert supersedes(MIRRORED, "http://keep.org:80/docs/x.html", "http://other.net:80/x.html")
    # Outside the canonical location of the original's mirror, or an original on no mirror side.
    assert not supersedes(MIRRORED, "http://keep.org:80/x.html", "http://other.net:80/x.html")
    assert not supersedes(MIRRORED, "http://third.org:80/a.html", "http://copy.net:80/pub/a.html")
    assert not supersedes(MIRRORED, "http://copy.net:80/pub/a.html", "http://keep.org:80/a.html")


def test_the_store_gives_the_unfollowed_links_of_duplicates_on_given_hosts(db_url: str) -> None:
    store = Store(db_url)
    try:
        run = store.start_run([], {})
        store.write_pages([page("http://copy.net/a.html", links=("http://copy.net/b.html",))], run)
        duplicate = page("http://keep.org/a.html", depth=1, links=("http://keep.org/b.html", "http://keep.org/c.html"),
                         duplicate_of="http://copy.net/a.html", duplicate_kind="identical", duplicate_score=1.0)
        store.write_pages([duplicate, page("http://keep.org/c.html", depth=2)], run)
        assert store.duplicate_outlinks(run, ["keep.org"]) == [
            ("http://keep.org/a.html", "http://copy.net/a.html", "http://keep.org/b.html", 2)
        ]
        assert store.duplicate_outlinks(run, ["copy.net"]) == []
    finally:
        store.close()


def _docs() -> dict[str, Resource]:
    """Notes, each the only way to its extra page; the same bytes on both hosts."""
    resources = {"/robots.txt": robots()}
    for n in range(NOTES):
        body = f"<p>{' '.join(prose(n, 400))}</p><a href=\"/extra/{n}.html\">more</a>"
        resources[f"/notes/{n}.html"] = html_resource(document(f"Note {n}", body))
        resources[f"/extra/{n}.html"] = html_resource(document(f"Extra {n}", f"<p>{' '.join(prose(100 + n, 300))}</p>"))
    links = " ".join(f'<a href="/notes/{n}.html">note {n}</a>' for n in range(NOTES))
    resources["/"] = html_resource(document("Notes", f"<p>{' '.join(prose(99, 200))}</p>{links}"))
    return resources


def test_the_canonical_side_is_covered_when_its_copies_were_met_first(db_url: str, tmp_path: Path) -> None:
    original = Host(ORIGINAL, "127.0.1.81", "original", _docs())
    mirror = Host(MIRROR, "127.0.1.82", "mirror", _docs(), of=ORIGINAL)
    links = " ".join(f'<a href="{ext(ORIGINAL, "/")}">the notes {n}</a>' for n in range(3))
    portal = Host(PORTAL, "127.0.1.83", "other", {
        "/": html_resource(document("Portal", f"<p>{' '.join(prose(7, 300))}</p>{links}")), "/robots.txt": robots(),
    })
    # The mirror's notes are seeds: they are fetched before the original's (two hops from
    # the portal), which are then recorded as their duplicates. The portal's links make
    # the original the canonical side.
    seeds = [(MIRROR, f"/notes/{n}.html") for n in range(NOTES)] + [(PORTAL, "/")]
    world = World(seed=0, hosts=[original, mirror, portal], seed_paths=seeds)
    crawl_world(world, tmp_path, db_url)
    store = Store(db_url)
    try:
        pages = {p["url"]: p for p in store.pages()}
        pairs = store.mirror_pairs()
    finally:
        store.close()
    on_original = {urlsplit(url).path: page for url, page in pages.items() if urlsplit(url).hostname == ORIGINAL}
    assert [p["level"] for p in pairs if p["level"] != "none"] == ["full"]
    assert sum(page["duplicate_of_id"] is not None for page in on_original.values()) >= NOTES // 2
    assert sorted(path for path in on_original if path.startswith("/extra/")) == sorted(f"/extra/{n}.html" for n in range(NOTES))
