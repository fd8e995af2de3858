"""Ground truth for a sandbox world, found by crawling it in memory.

The truth is computed from what the hosts actually serve, walked the way a
crawler walks the web (lxml parse, urljoin, fragments dropped, robots.txt
obeyed, redirects followed, only the world's hosts visited), never from what
the builders meant to build, so it cannot drift from the content.

Outcomes name what a correct crawler should conclude about each URL:
``ok`` (an HTML page to index), ``empty`` (200 with no document), ``garbage``
(200 text/html that is mostly control bytes: fetch it without crashing, index
nothing), ``non-html``, ``too-large`` (body, or gzip-inflated body, over
`MAX_BODY_BYTES`), ``reset`` (connection closed without an answer),
``redirect``, ``redirect-loop`` and ``http-<status>`` for other statuses.
"""

from __future__ import annotations

import re
import zlib
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import lxml.html
from lxml.etree import ParserError

if TYPE_CHECKING:
    from .model import Host, Resource, World

# The download cap the crawler is expected to apply; the hostile host's huge
# page and gzip bomb both exceed it, every other page is far below.
MAX_BODY_BYTES = 10 * 2**20
MAX_REDIRECTS = 10
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MIRROR_ROLES = frozenset({"mirror", "prefix-mirror", "partial-mirror"})
USER_AGENT = "mirrorscope"

# Bytes that never occur in text; a page made mostly of them is noise.
_NOISE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")


def ground_truth(world: World, port: int) -> dict[str, Any]:
    """The JSON-able ground truth of `world` served at `port`."""
    walk = _Walk(world, port)
    walk.run()
    return walk.report()


def classify(resource: Resource | None) -> str:
    """The outcome of fetching `resource` (redirects are resolved by the walk)."""
    if resource is None:
        return "http-404"
    if resource.reset:
        return "reset"
    if resource.status != 200:
        return f"http-{resource.status}"
    if not (resource.content_type or "").startswith("text/html"):
        return "non-html"
    body = _inflated(resource)
    if body is None:
        return "too-large"
    if not body.strip():
        return "empty"
    text = body.decode("utf-8", errors="replace")
    if len(_NOISE.findall(text)) > 0.05 * len(text):
        return "garbage"
    return "ok"


def _inflated(resource: Resource) -> bytes | None:
    """The decoded body, or None when it would exceed MAX_BODY_BYTES."""
    encodings = {v.strip().lower() for k, v in resource.headers if k.lower() == "content-encoding"}
    body = resource.body
    if "gzip" in encodings:
        inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header
        body = inflater.decompress(body, MAX_BODY_BYTES + 1)
    return None if len(body) > MAX_BODY_BYTES else body


def _location(resource: Resource) -> str | None:
    return next((v for k, v in resource.headers if k.lower() == "location"), None)


class _Walk:
    """Breadth-first, robots-aware traversal of a world from its seeds."""

    def __init__(self, world: World, port: int) -> None:
        self.world = world
        self.port = port
        self.outcomes: dict[str, str] = {}
        self.edges: set[tuple[str, str]] = set()
        self.link_count = 0
        self.disallowed: set[str] = set()
        self._robots: dict[str, RobotFileParser] = {}
        self._queue: deque[str] = deque()
        self._seen: set[str] = set()
        # urljoin dominates big walks; relative links repeat per directory.
        self._joined: dict[tuple[str, str], str | None] = {}

    def run(self) -> None:
        for url in self.world.seeds(self.port):
            self._enqueue(url)
        while self._queue:
            self._visit(self._queue.popleft())

    def _locate(self, url: str) -> tuple[Host, str] | None:
        """The world's host and request path for `url`, or None if off-world."""
        try:
            parts = urlsplit(url)
            port = parts.port or 80
        except ValueError:
            return None
        host = self.world.find(parts.hostname or "")
        if parts.scheme != "http" or host is None or port != self.port:
            return None
        path = parts.path or "/"
        return host, path + ("?" + parts.query if parts.query else "")

    def _fetch(self, url: str) -> Resource | None:
        located = self._locate(url)
        found = located[0].resolve(located[1]) if located else None
        return found.at_port(self.port) if found else None

    def _allowed(self, host: Host, url: str) -> bool:
        if host.name not in self._robots:
            parser = RobotFileParser()
            found = host.resolve("/robots.txt")
            lines = found.body.decode("utf-8", "replace").splitlines() if found and found.status == 200 else []
            parser.parse(lines)
            self._robots[host.name] = parser
        return self._robots[host.name].can_fetch(USER_AGENT, url)

    def _enqueue(self, url: str) -> None:
        if url in self._seen or url in self.disallowed:
            return
        located = self._locate(url)
        if located is None:
            return
        if not self._allowed(located[0], url):
            self.disallowed.add(url)
            return
        self._seen.add(url)
        self._queue.append(url)

    def _visit(self, url: str) -> None:
        resource = self._fetch(url)
        if resource is not None and resource.status in REDIRECT_STATUSES and not resource.reset:
            self.outcomes[url] = self._redirect_outcome(url)
            target = _location(resource)
            if target:
                self._enqueue(urldefrag(urljoin(url, target)).url)
            return
        self.outcomes[url] = classify(resource)
        if self.outcomes[url] == "ok":
            assert resource is not None
            self._follow_links(url, resource.body)

    def _redirect_outcome(self, url: str) -> str:
        """``redirect`` if the chain from `url` ends, ``redirect-loop`` if it cycles."""
        chain = [url]
        for _ in range(MAX_REDIRECTS):
            resource = self._fetch(chain[-1])
            target = _location(resource) if resource and resource.status in REDIRECT_STATUSES else None
            if target is None:
                return "redirect"
            following = urldefrag(urljoin(chain[-1], target)).url
            if following in chain:
                return "redirect-loop"
            chain.append(following)
        return "redirect-loop"

    def _follow_links(self, url: str, body: bytes) -> None:
        try:
            document = lxml.html.document_fromstring(body)
        except ParserError:
            return
        for anchor in document.iter("a"):
            href = anchor.get("href")
            target = None if href is None else self._resolve(url, href.strip())
            if target is not None:
                self.link_count += 1
                self.edges.add((url, target))
                self._enqueue(target)

    def _resolve(self, url: str, href: str) -> str | None:
        """The absolute http(s) URL `href` on page `url` points to, fragment dropped."""
        href = href.split("#", 1)[0]  # dropping it first gives the same URL and more cache hits
        base = url
        if href and href[0] != "?":
            # Only the base's directory matters then, which makes results shareable.
            path_end = url.split("?", 1)[0]
            base = path_end[: path_end.rfind("/") + 1]
        key = (base, href)
        if key not in self._joined:
            try:
                target = urldefrag(urljoin(base, href)).url
            except ValueError:  # e.g. a malformed IPv6 literal on a hostile page
                target = ""
            self._joined[key] = target if target.startswith(("http://", "https://")) else None
        return self._joined[key]

    def _html_paths(self, host: str, prefix: str) -> set[str]:
        """Paths (relative to `prefix`) of the ok pages found on `host`."""
        start = self.world.url(host, prefix, self.port)
        return {u[len(start):] for u, o in self.outcomes.items() if o == "ok" and u.startswith(start)}

    def _mirrors(self) -> list[dict[str, Any]]:
        found = []
        for host in self.world.hosts:
            if host.role not in MIRROR_ROLES or host.of is None:
                continue
            original = self._html_paths(host.of, "/")
            copy = self._html_paths(host.name, host.prefix)
            found.append(
                {
                    "a": self.world.url(host.of, "/", self.port),
                    "b": self.world.url(host.name, host.prefix, self.port),
                    "level": "full" if original <= copy else "partial",
                    "a_pages": len(original),
                    "b_pages": len(copy),
                    "shared": len(original & copy),
                }
            )
        return found

    def _decoys(self) -> list[list[str]]:
        pairs: list[list[str]] = []
        for decoy in self.world.hosts:
            if decoy.role != "decoy" or decoy.of is None:
                continue
            copies = [h.name for h in self.world.hosts if h.of == decoy.of and h.role in MIRROR_ROLES]
            lookalikes = [decoy.of, *copies]
            pairs.extend([name, decoy.name] for name in lookalikes)
        return pairs

    def report(self) -> dict[str, Any]:
        pages = sorted(self.outcomes)
        html_pages = [u for u in pages if self.outcomes[u] == "ok"]
        hostile = {h.name for h in self.world.hosts if h.role == "hostile"}
        return {
            "seeds": self.world.seeds(self.port),
            "hosts": {
                h.name: {"ip": h.ip, "role": h.role, "of": h.of, "prefix": h.prefix} for h in self.world.hosts
            },
            "pages": pages,
            "html_pages": html_pages,
            "outcomes": {u: self.outcomes[u] for u in pages},
            "links": self.link_count,
            "edges": [list(e) for e in sorted(self.edges)],
            "robots_disallowed": sorted(self.disallowed),
            "mirrors": self._mirrors(),
            "decoys": self._decoys(),
            "hostile": {u: self.outcomes[u] for u in pages if urlsplit(u).hostname in hostile},
            "counts": {
                "hosts": len(self.world.hosts),
                "pages": len(pages),
                "html_pages": len(html_pages),
                "links": self.link_count,
                "edges": len(self.edges),
            },
        }
