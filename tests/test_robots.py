"""robots.txt in the encodings it is found in: a UTF-16 file's rules hold (Scrapy reads one
as no rules at all, and allows everything)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirrorscope.crawler.middlewares import EncodedRobotParser, robots_text
from mirrorscope.sandbox import Host, Resource, World
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world

RULES = "User-agent: *\nDisallow: /private/\n"


@pytest.mark.parametrize("encoding, bom", [
    ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00"),
    ("utf-32-be", b"\x00\x00\xfe\xff"), ("utf-16-le", b""), ("utf-16-be", b""),
])
def test_a_utf16_or_utf32_robots_txt_reads_as_its_rules(encoding: str, bom: bytes) -> None:
    body = bom + RULES.encode(encoding)
    assert robots_text(body) == RULES.encode()
    parser = EncodedRobotParser(body, None)
    assert not parser.allowed("http://a.test/private/x.html", "mirrorscope-bot")
    assert parser.allowed("http://a.test/public.html", "mirrorscope-bot")


def test_utf8_and_single_byte_robots_txt_are_left_to_scrapys_reading() -> None:
    for body in (RULES.encode(), b"\xef\xbb\xbf" + RULES.encode(), "Disallow: /priv\xe9/\n".encode("latin-1"), b""):
        assert robots_text(body) == body


def test_a_crawl_obeys_a_utf16_robots_txt(tmp_path: Path) -> None:
    page = "<html><head><title>{0}</title></head><body><p>{0} notes.</p>{1}</body></html>"
    resources = {
        "/robots.txt": Resource(body=b"\xff\xfe" + RULES.encode("utf-16-le"), content_type="text/plain"),
        "/": Resource(body=page.format("Index", '<a href="/private/a.html">a</a> <a href="/b.html">b</a>').encode()),
        "/private/a.html": Resource(body=page.format("Private", "").encode()),
        "/b.html": Resource(body=page.format("Public", "").encode()),
    }
    world = World(seed=0, hosts=[Host("www.utf16-robots.org", "127.0.1.91", "other", resources)], seed_paths=[("www.utf16-robots.org", "/")])
    database = f"sqlite:///{tmp_path / 'store.db'}"
    _, requests = crawl_world(world, tmp_path, database)
    # "/" twice: the spam monitor's cloaking check fetches a host's first page as a browser.
    assert {path for _, path in requests} == {"/", "/b.html", "/robots.txt"}, requests
    store = Store(database)
    try:
        outcomes = {p["url"].split("/", 3)[-1]: p["outcome"] for p in store.pages()}
    finally:
        store.close()
    assert outcomes == {"": "ok", "b.html": "ok", "private/a.html": "robots"}
