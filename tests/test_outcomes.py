"""The torture world's hostile answers end as the outcomes ``sandbox.torture.EXPECTED``
states (issue 16, items 3, 7 and 8): every URL the crawl decided about gets its row.

Each crawl is seeded with the cases it checks only (the world's other pages are other
tests' business), at ``DEPTH_LIMIT`` 1: every case here is a seed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mirrorscope.sandbox import build_torture_world
from mirrorscope.sandbox.torture import BOMB_ROBOTS, DEAD, EXPECTED, LONG_LOCATIONS, PAGES
from mirrorscope.storage.storable import CUT_MARK
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world

#: Peak resident memory of the crawl of the endless body, the 50 MB unframed body, the
#: robots.txt bomb and the dead port together: measured at 146-156 MB, as a crawl of one
#: small page (140-156 MB; DOWNLOAD_MAXSIZE is 8 MiB). With DOWNLOAD_MAXSIZE past 50 MB
#: the unframed body alone took the crawl to 1,066 MB.
PEAK_RSS_BOUND_KB = 256 * 1024

HEAVY_CASES = ((PAGES, "/endless-chunked"), (PAGES, "/unframed-50mb"), (BOMB_ROBOTS, "/"), (DEAD, "/"))


def _crawl(tmp_path: Path, db_url: str, seeds: tuple[tuple[str, str], ...]) -> tuple[Any, dict[str, dict], list[tuple[str, str]]]:
    """(the finished crawl, its pages by host name and path, the server's requests)."""
    world = dataclasses.replace(build_torture_world(), seed_paths=list(seeds))
    result, requests = crawl_world(world, tmp_path, db_url, "-s", "DEPTH_LIMIT=1")
    store = Store(db_url)
    try:
        pages = {f"{urlsplit(p['url']).hostname}{urlsplit(p['url']).path}": p for p in store.pages()}
    finally:
        store.close()
    return result, pages, requests


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, dict], list[tuple[str, str]]]:
    """One crawl of the cases that end in a limit or an unreachable host (SQLite: what they
    store is an outcome and an error, as any other page's)."""
    tmp_path = tmp_path_factory.mktemp("heavy")
    return _crawl(tmp_path, f"sqlite:///{tmp_path / 'store.db'}", HEAVY_CASES)


def test_a_redirect_to_a_url_the_frontier_refuses_records_its_source(tmp_path: Path, db_url: str) -> None:
    """The frontier refuses the long targets (traps by their length); the URLs that
    redirected to them are still recorded, with the target they named."""
    seeds = tuple((PAGES, path) for path in LONG_LOCATIONS)
    result, pages, requests = _crawl(tmp_path, db_url, seeds)
    for path, chars in LONG_LOCATIONS.items():
        page = pages.get(PAGES + path)
        assert page is not None, f"{path} has no row"
        assert page["outcome"] == EXPECTED[PAGES + path] == "redirect"
        assert page["status"] == 301
        # A target over URL_MAX_LENGTH is kept in the store's cut form (start, CUT_MARK, hash).
        named, _, digest = page["redirect_to"].partition(CUT_MARK)
        assert urlsplit(named).path == "/r/" + "a" * chars if not digest else ("/r/" + "a" * chars).startswith(urlsplit(named).path)
        assert bool(digest) == (chars > 2048) and len(named) > min(chars, 1000)
        assert "trap-url-length" in page["error"]
    assert not any(path.startswith("/r/") for _, path in requests)
    assert "Traceback" not in result.stderr


def test_endless_and_unframed_bodies_are_too_large(heavy: tuple[Any, dict[str, dict], list[tuple[str, str]]]) -> None:
    _, pages, _ = heavy
    for key in (f"{PAGES}/endless-chunked", f"{PAGES}/unframed-50mb"):
        assert pages[key]["outcome"] == EXPECTED[key] == "too-large", pages[key]
        assert "DOWNLOAD_MAXSIZE" in pages[key]["error"]


def test_a_robots_txt_bomb_keeps_its_host_out_of_the_crawl(heavy: tuple[Any, dict[str, dict], list[tuple[str, str]]]) -> None:
    """The bomb starts with ``Disallow: /`` and inflates past DOWNLOAD_MAXSIZE: it cannot
    be read, so nothing of the host is fetched (RFC 9309), and the page says why."""
    _, pages, requests = heavy
    page = pages[f"{BOMB_ROBOTS}/"]
    assert page["outcome"] == EXPECTED[f"{BOMB_ROBOTS}/"] == "robots-unreachable"
    assert "DOWNLOAD_MAXSIZE" in page["error"]
    assert sorted(path for host, path in requests if host == BOMB_ROBOTS) == ["/robots.txt"]


def test_a_dead_port_is_connection_refused_with_robots_txt_as_the_reason(heavy: tuple[Any, dict[str, dict], list[tuple[str, str]]]) -> None:
    _, pages, _ = heavy
    page = pages[f"{DEAD}/"]
    assert page["outcome"] == EXPECTED[f"{DEAD}/"] == "connection-refused"
    assert page["error"].startswith("robots.txt unreachable: ") and "refused" in page["error"][len("robots.txt unreachable: "):]


def test_hostile_bodies_keep_the_crawl_small(heavy: tuple[Any, dict[str, dict], list[tuple[str, str]]]) -> None:
    result, _, _ = heavy
    assert 0 < result.peak_rss_kb <= PEAK_RSS_BOUND_KB, f"peak RSS {result.peak_rss_kb // 1024} MB"
