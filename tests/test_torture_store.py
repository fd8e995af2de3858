"""The torture pages that lost data, crawled into the store on SQLite and on the real
PostgreSQL: a NUL in a header and a link to a 400-character host name are stored
cleaned with the ordinary pages of their batch, URLs with square brackets have one form
as links and as pages (so a resume does not fetch them again), a 100 KB link is recorded
(cut) and not fetched, and a crawl that could not store a page does not end clean."""

from __future__ import annotations

from pathlib import Path

from mirrorscope.sandbox import Host, Resource, World, build_torture_world
from mirrorscope.sandbox.markup import document, link
from mirrorscope.sandbox.torture import BRACKET_PATHS, LONG_LINK_BYTES, PAGES, long_host
from mirrorscope.storage.models import Host as HostRow
from mirrorscope.storage.storable import is_cut
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world, refuse_pages

CASES = ("/nul-content-type.html", "/long-host.html", "/brackets.html", "/long-link.html")
PLAIN = tuple(f"/plain-{i}.html" for i in range(3))
BRACKET_PAGES = tuple(p.replace("[", "%5B").replace("]", "%5D") for p in BRACKET_PATHS)
# Only loopback: the long host name is never asked of a DNS server.
LOOPBACK_ONLY = ("-s", "RESOLVE_ONLY_HOSTS_FILE=True")


def small_world(paths: tuple[str, ...]) -> World:
    """``PAGES`` with the torture cases among ``paths`` (the rest plain pages), one index
    page linking to them all; the bracketed pages under both spellings."""
    torture = build_torture_world().host(PAGES).resources
    resources = {p: torture.get(p) or Resource(body=document(p, f"<p>Plain page {p}.</p>")) for p in paths}
    resources.update({p: torture[p] for p in BRACKET_PATHS + BRACKET_PAGES})
    resources["/robots.txt"] = torture["/robots.txt"]
    resources["/"] = Resource(body=document("Index", "".join(link(p, p) for p in paths)))
    return World(seed=0, hosts=[Host(PAGES, "127.0.7.1", "hostile", resources)], seed_paths=[(PAGES, "/")])


def _run(store: Store) -> dict:
    (run,) = store.runs()
    return run


def test_torture_pages_are_stored_with_their_batch_and_the_run_finishes(tmp_path: Path, db_url: str) -> None:
    crawl_world(small_world(CASES + PLAIN), tmp_path, db_url, *LOOPBACK_ONLY)
    store = Store(db_url)
    pages = {p["url"].split("/", 3)[-1]: p for p in store.pages() if p["host"].startswith(PAGES)}
    outcomes = {path: p["outcome"] for path, p in pages.items()}
    assert outcomes == {"": "ok"} | {p[1:]: "ok" for p in CASES + PLAIN + BRACKET_PAGES} | {
        next(p for p in pages if p.startswith("x" * 100)): "url-too-long"
    }
    assert pages["nul-content-type.html"]["content_type"] == "text/html\ufffd; charset=utf-8"
    # The link to the long host name is stored, and the host it names too (cut to its column).
    far = next(p for p in store.pages() if p["url"] == f"http://{long_host()}/")
    assert far["outcome"] == "dns-error" and is_cut(far["host"])
    assert len(far["host"]) == HostRow.__table__.c.name.type.length
    links = store.links()
    assert [l["target_host"] for l in links if l["source_url"].endswith("/long-host.html")] == [far["host"]]
    # Brackets: the links name the pages as they were stored, so nothing is left to resume.
    bracket_targets = [l["target_url"].split("/", 3)[-1] for l in links if l["source_url"].endswith("/brackets.html")]
    assert bracket_targets == [p[1:] for p in BRACKET_PAGES]
    assert store.unfetched_targets(_run(store)["id"]) == []
    # The 100 KB link is recorded in its cut form, and only that form is stored.
    (long_link,) = [l for l in links if l["source_url"].endswith("/long-link.html")]
    assert is_cut(long_link["target_url"]) and len(long_link["target_url"]) < LONG_LINK_BYTES
    assert _run(store)["status"] == "finished"
    store.close()


def test_a_crawl_that_could_not_store_a_page_exits_1_and_its_run_says_so(tmp_path: Path, db_url: str) -> None:
    store = Store(db_url)
    refuse_pages(store.engine, "NEW.url LIKE '%poison%'")
    result, _ = crawl_world(small_world(("/poison.html",) + PLAIN), tmp_path, db_url, *LOOPBACK_ONLY, returncode=1)
    assert result.stderr.strip().splitlines()[-1] == (
        "error: 0 pages were stored as store-error rows and 1 not at all (the run's status is lost-writes; the log says why)"
    )
    assert _run(store)["status"] == "lost-writes" and _run(store)["stats"]["mirrorscope/pages_lost"] == 1
    stored = {p["url"].split("/", 3)[-1] for p in store.pages()}
    assert stored >= {"", *(p[1:] for p in PLAIN)} and "poison.html" not in stored
    store.close()
