"""The torture world: pages and hosts written to break a crawler, one case each.

Where the standard world's hostile host (`sites.hostile`) holds the everyday breakage
(bad charsets, resets, a gzip bomb), this world holds what issue 16 found taking the
machine or losing data: a page of adjacent links whose joined text lands in every
link's context window, a NUL in a header, a link to a 400-character host name,
redirects with huge ``Location`` headers, URLs with square brackets, a 100 KB link,
titles with terminal control sequences, endless and unframed bodies, a robots.txt that
is a compression bomb and a host whose port is dead.

`EXPECTED` maps each case's URL (host and path) to the outcome a correct crawler
records for it; `PAGES` names the host that serves the page cases. Nothing here is
ground-truthed by walking (the endless bodies would never end): tests compare a
crawl's pages table with `EXPECTED`.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from collections.abc import Iterator

from .markup import document, ext, link, robots
from .model import Host, Resource, World

PAGES = "pages.torture.test"
BOMB_ROBOTS = "bomb-robots.torture.test"
DEAD = "dead.torture.test"
_NET = "127.0.7."

#: A page of adjacent links (no whitespace between them), at the two sizes the issue
#: measured: 429 KB took 1.24 GB, 7.5 MB passed 3 GB in 8 s.
ANCHOR_PAGE_BYTES = 429_000
HUGE_ANCHOR_PAGE_BYTES = 7_500_000
LONG_HOST_CHARS = 400
LONG_LOCATIONS = {"/redirect-600": 600, "/redirect-10k": 10_000}
LONG_LINK_BYTES = 100_000
UNFRAMED_BODY_BYTES = 50_000_000
BOMB_ROBOTS_INFLATED_BYTES = 200_000_000
_STREAM_PART = b"<p>" + b"endless " * 8190 + b"</p>\n"  # 64 KB of body per write

#: Paths with square brackets, raw and percent-escaped: both spellings name one page.
BRACKET_PATHS = ("/list[1].html", "/list%5B2%5D.html", "/q?a[]=1&a[]=2")
CONTROL_TITLE = "Title &#27;[31mred&#27;[0m &#7;bell &#x202E;desrever"

EXPECTED = {
    f"{PAGES}/": "ok",
    f"{PAGES}/anchors.html": "ok",
    f"{PAGES}/anchors-huge.html": "ok",
    f"{PAGES}/nul-content-type.html": "ok",
    f"{PAGES}/long-host.html": "ok",
    f"{PAGES}/redirect-600": "redirect",
    f"{PAGES}/redirect-10k": "redirect",
    f"{PAGES}/brackets.html": "ok",
    f"{PAGES}/long-link.html": "ok",
    f"{PAGES}/control-title.html": "ok",
    f"{PAGES}/endless-chunked": "too-large",
    f"{PAGES}/unframed-50mb": "too-large",
    f"{BOMB_ROBOTS}/": "robots-unreachable",
    f"{DEAD}/": "connection-refused",
}


def adjacent_anchors(size: int) -> bytes:
    """A page of about `size` bytes of ``<a>`` elements with nothing between them, so
    that their texts join into one word."""
    head, tail = b"<html><head><title>Links</title></head><body><p>", b"</p></body></html>"
    parts, total = [head], len(head) + len(tail)
    for i in itertools.count():
        part = b'<a href="/t/%d.html">w%d</a>' % (i, i)
        if total + len(part) > size:
            break
        parts.append(part)
        total += len(part)
    parts.append(tail)
    return b"".join(parts)


def long_host(chars: int = LONG_HOST_CHARS) -> str:
    """A syntactically valid host name of `chars` characters (labels of 60)."""
    return (("a" * 60 + ".") * (chars // 61 + 1))[:chars].rstrip(".")


def _endless() -> Iterator[bytes]:
    while True:
        yield _STREAM_PART


def _unframed() -> Iterator[bytes]:
    for _ in range(UNFRAMED_BODY_BYTES // len(_STREAM_PART) + 1):
        yield _STREAM_PART


@functools.lru_cache(maxsize=1)
def robots_bomb() -> bytes:
    """A gzip robots.txt that starts by disallowing everything and inflates to
    BOMB_ROBOTS_INFLATED_BYTES (comment lines), compressed a megabyte at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    parts = [compressor.compress(b"User-agent: *\nDisallow: /\n")]
    filler = (b"#" * 1023 + b"\n") * 1024
    parts.extend(compressor.compress(filler) for _ in range(BOMB_ROBOTS_INFLATED_BYTES // len(filler)))
    parts.append(compressor.flush())
    return b"".join(parts)


def _page(title: str, body: str) -> Resource:
    return Resource(body=document(title, body))


def _pages_host() -> dict[str, Resource]:
    bracket_page = _page("A bracketed page", "<p>Listed with square brackets in its address.</p>")
    resources: dict[str, Resource] = {
        "/robots.txt": robots(),
        "/anchors.html": Resource(body=adjacent_anchors(ANCHOR_PAGE_BYTES)),
        "/anchors-huge.html": Resource(body=adjacent_anchors(HUGE_ANCHOR_PAGE_BYTES)),
        "/nul-content-type.html": Resource(
            body=document("NUL in a header", "<p>The Content-Type header holds a NUL byte.</p>"),
            content_type="text/html\x00; charset=utf-8",
        ),
        "/long-host.html": _page("A long host name", link(f"http://{long_host()}/", "far away")),
        "/brackets.html": _page("Brackets", "".join(link(p, p) for p in BRACKET_PATHS)),
        "/long-link.html": _page("A long link", link("/" + "x" * LONG_LINK_BYTES, "very long")),
        "/control-title.html": Resource(
            body=f"<html><head><title>{CONTROL_TITLE}</title></head><body><p>{CONTROL_TITLE}</p></body></html>".encode()
        ),
        "/endless-chunked": Resource(stream=_endless, framing="chunked"),
        "/unframed-50mb": Resource(stream=_unframed, framing="close"),
    }
    for path, chars in LONG_LOCATIONS.items():
        resources[path] = Resource(status=301, headers=(("Location", "/r/" + "a" * chars),))
    for path in BRACKET_PATHS:
        resources[path] = bracket_page
        resources[path.replace("[", "%5B").replace("]", "%5D")] = bracket_page
    gallery = "".join(f"<li>{link(p, p)}</li>" for p in resources if p not in ("/robots.txt", *BRACKET_PATHS))
    others = link(ext(BOMB_ROBOTS), "bomb robots") + link(ext(DEAD), "dead port")
    resources["/"] = _page("The torture gallery", f"<h1>Torture</h1><ul>{gallery}</ul>{others}")
    return resources


def build_torture_world() -> World:
    """The torture world: the page cases on `PAGES`, a robots.txt bomb on
    `BOMB_ROBOTS`, and `DEAD`, named in the hosts file with nothing listening."""
    bomb = {
        "/robots.txt": Resource(body=robots_bomb(), content_type="text/plain", headers=(("Content-Encoding", "gzip"),)),
        "/": _page("Behind a robots bomb", "<p>Never to be fetched.</p>"),
    }
    hosts = [
        Host(name=PAGES, ip=f"{_NET}1", role="hostile", resources=_pages_host()),
        Host(name=BOMB_ROBOTS, ip=f"{_NET}2", role="hostile", resources=bomb),
        Host(name=DEAD, ip=f"{_NET}3", role="unreachable", resources={}),
    ]
    return World(seed=0, hosts=hosts, seed_paths=[(PAGES, "/")])
