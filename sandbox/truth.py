"""Ground truth for a sandbox world, found by crawling it in memory.

The truth is computed from what the hosts actually serve, walked the way a
crawler walks the web (lxml parse, urljoin, fragments dropped, robots.txt
obeyed, redirects followed, only the world's hosts visited), never from what
the builders meant to build, so it cannot drift from the content.

Outcomes name what a correct crawler should conclude about each URL:
``ok`` (an HTML or XHTML page to index), ``empty`` (200 with no document), ``garbage``
(200 text/html that is mostly control bytes: fetch it without crashing, index
nothing), ``non-html``, ``too-large`` (body, or gzip-inflated body, over
`MAX_BODY_BYTES`), ``reset`` (connection closed without an answer),
``redirect``, ``redirect-loop`` and ``http-<status>`` for other statuses.

Unbounded URL spaces (a link farm's hosts, a calendar trap's prefix:
`Host.unbounded`) are entered but never enumerated: a URL in such a space is
walked when a page outside every such space links to it (an *entry*), and the
links found on it are recorded as edges, but of their targets only those
outside every unbounded space are walked. ``pages`` is therefore the bounded
set a crawler with trap and spam defences should fetch: every bounded page
reachable from the seeds plus the entries.

Worlds built with optional parts (`World.features`) get extra keys; the
standard world's truth is exactly what it always was.
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
MIRROR_ROLES = frozenset(
    {"mirror", "prefix-mirror", "partial-mirror", "repackaged-mirror", "reserialised-mirror", "stale-mirror", "alias", "renamed-mirror"}
)
MIRROR_KINDS = {
    "mirror": "exact",
    "prefix-mirror": "prefix",
    "partial-mirror": "partial",
    "repackaged-mirror": "repackaged",
    "reserialised-mirror": "reserialised",
    "stale-mirror": "stale",
    "renamed-mirror": "renamed",
    "alias": "alias",
}
SPAM_ROLES = frozenset({"link-farm", "doorway", "cloaking", "hidden-text"})
# The walk's User-Agent: a crawler that says so, as mirrorscope's does, so that cloaking
# hosts serve it their spam.
USER_AGENT = "Mozilla/5.0 (compatible; mirrorscope-bot/truth)"
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)

# Bytes that never occur in text; a page made mostly of them is noise.
_NOISE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
# The media types a browser renders as a web page (XHTML served as XML included).
HTML_TYPES = ("text/html", "application/xhtml+xml")
_HEADER_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.I)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", re.I)


def ground_truth(world: World, port: int) -> dict[str, Any]:
    """The JSON-able ground truth of `world` served at `port`."""
    walk = _Walk(world, port)
    walk.run()
    return walk.report()


def is_copied(url: str, hosts: dict[str, Any]) -> bool:
    """True for a URL whose content the sandbox copies from another host (a mirror side),
    given the ground truth's ``"hosts"``."""
    _, _, netloc, path = (url.split("/", 3) + [""])[:4]
    info = hosts.get(netloc.split(":")[0], {})
    return info.get("of") is not None and info.get("role") != "decoy" and ("/" + path).startswith(info.get("prefix", "/"))


def classify(resource: Resource | None) -> str:
    """The outcome of fetching `resource` (redirects are resolved by the walk)."""
    if resource is None:
        return "http-404"
    if resource.reset:
        return "reset"
    if resource.status != 200:
        return f"http-{resource.status}"
    if not is_html_type(resource.content_type):
        return "non-html"
    body = _inflated(resource)
    if body is None:
        return "too-large"
    if not body.strip():
        return "empty"
    text = decoded(body, resource.content_type)
    if len(_NOISE.findall(text)) > 0.05 * len(text):
        return "garbage"
    return "ok"


def is_html_type(content_type: str | None) -> bool:
    """True for a Content-Type of HTML or XHTML (parameters ignored)."""
    return (content_type or "").lower().startswith(HTML_TYPES)


def decoded(body: bytes, content_type: str | None) -> str:
    """A page's text as a browser decodes it: the header's charset, else a ``<meta>`` one, else UTF-8.

    Undecodable bytes become U+FFFD; an unknown charset name counts as UTF-8.
    (vim's pages say ISO-8859-1 in a meta element only.)
    """
    header = _HEADER_CHARSET.search(content_type or "")
    meta = None if header else _META_CHARSET.search(body[:1024])
    charset = header.group(1) if header else meta.group(1).decode("ascii") if meta else "utf-8"
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _inflated(resource: Resource) -> bytes | None:
    """The decoded body, or None when it would exceed MAX_BODY_BYTES."""
    encodings = {v.strip().lower() for k, v in resource.headers if k.lower() == "content-encoding"}
    body = resource.body
    if "gzip" in encodings:
        inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header
        body = inflater.decompress(body, MAX_BODY_BYTES + 1)
    return None if len(body) > MAX_BODY_BYTES else body


def visible_words(body: bytes) -> list[str]:
    """The words of a page's body text, lower-cased; scripts, styles and comments left out.

    Every element boundary separates words, so re-indenting a page (which
    only adds whitespace between elements) leaves its words unchanged.
    """
    try:
        document = lxml.html.document_fromstring(body)
    except ParserError:
        return []
    for junk in document.xpath("//script|//style|//noscript"):
        junk.drop_tree()
    page = document.find("body")
    if page is None:
        return []
    return re.findall(r"\w+", " ".join(page.itertext()).lower())


def _contains(outer: list[str], inner: list[str]) -> bool:
    """True when `inner` occurs as a contiguous run of `outer`."""
    return f" {' '.join(inner)} " in f" {' '.join(outer)} "


def _same_24(a: str, b: str) -> bool:
    return a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]


def _location(resource: Resource) -> str | None:
    return next((v for k, v in resource.headers if k.lower() == "location"), None)


class _Walk:
    """Breadth-first, robots-aware traversal of a world from its seeds."""

    def __init__(self, world: World, port: int) -> None:
        self.world = world
        self.port = port
        self.outcomes: dict[str, str] = {}
        self.depth: dict[str, int] = {}  # links from the nearest seed
        self.frontier: set[str] = set()  # unbounded URLs linked from unbounded pages, never walked
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
            self._enqueue(url, 0)
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

    def _fetch(self, url: str, user_agent: str = USER_AGENT) -> Resource | None:
        located = self._locate(url)
        found = located[0].resolve(located[1], user_agent) if located else None
        return found.at_port(self.port) if found else None

    def _unbounded(self, url: str) -> bool:
        """True when `url` lies in a host's unbounded (generated) URL space."""
        located = self._locate(url)
        return located is not None and located[0].in_unbounded(located[1])

    def _allowed(self, host: Host, url: str) -> bool:
        if host.name not in self._robots:
            parser = RobotFileParser()
            found = host.resolve("/robots.txt")
            lines = found.body.decode("utf-8", "replace").splitlines() if found and found.status == 200 else []
            parser.parse(lines)
            self._robots[host.name] = parser
        return self._robots[host.name].can_fetch(USER_AGENT, url)

    def _enqueue(self, url: str, depth: int) -> None:
        if url in self._seen or url in self.disallowed:
            return
        located = self._locate(url)
        if located is None:
            return
        if not self._allowed(located[0], url):
            self.disallowed.add(url)
            return
        self._seen.add(url)
        self.depth[url] = depth
        self._queue.append(url)

    def _visit(self, url: str) -> None:
        resource = self._fetch(url)
        if resource is not None and resource.status in REDIRECT_STATUSES and not resource.reset:
            self.outcomes[url] = self._redirect_outcome(url)
            target = _location(resource)
            if target:
                self._enqueue(urldefrag(urljoin(url, target)).url, self.depth[url] + 1)
            return
        self.outcomes[url] = classify(resource)
        if self.outcomes[url] == "ok":
            assert resource is not None
            self._follow_links(url, resource.body, inside=self._unbounded(url))

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

    def _follow_links(self, url: str, body: bytes, inside: bool = False) -> None:
        """Record the page's links and walk their targets; from an unbounded page (`inside`), bounded targets only."""
        try:
            document = lxml.html.document_fromstring(body)
        except ParserError:
            return
        depth = self.depth[url] + 1
        for anchor in document.iter("a"):
            href = anchor.get("href")
            target = None if href is None else self._resolve(url, href.strip())
            if target is not None:
                self.link_count += 1
                self.edges.add((url, target))
                if inside and self._unbounded(target):
                    self.frontier.add(target)
                else:
                    self._enqueue(target, depth)

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
            if host.renamed:  # compare a renamed copy's pages with their originals' paths
                # The copy's entry page stands for the original's root.
                back = {"": ""} | {new.removeprefix(host.prefix): old[1:] for old, new in host.renamed.items()}
                copy = {back[p] for p in copy if p in back}
            entry = {
                "a": self.world.url(host.of, "/", self.port),
                "b": self.world.url(host.name, host.prefix, self.port),
                "level": "full" if original <= copy else "partial",
                "a_pages": len(original),
                "b_pages": len(copy),
                "shared": len(original & copy),
            }
            if self.world.features:
                entry |= self._compare(host, sorted(original & copy))
            found.append(entry)
        return found

    def _compare(self, copy: Host, shared: list[str]) -> dict[str, Any]:
        """How a copy's shared pages relate to the original's: bytes, text, addresses."""
        assert copy.of is not None
        original = self.world.host(copy.of)
        root_a, root_b = self.world.url(original.name, "/", self.port), self.world.url(copy.name, copy.prefix, self.port)
        identical = kept = 0
        moved = {old[1:]: new.removeprefix(copy.prefix) for old, new in copy.renamed.items()}
        for path in shared:
            a, b = self._fetch(root_a + path), self._fetch(root_b + moved.get(path, path))
            assert a is not None and b is not None
            same = a.body == b.body
            identical += same
            kept += same or _contains(visible_words(b.body), visible_words(a.body))
        return {
            "kind": MIRROR_KINDS[copy.role],
            "identical": identical,  # shared pages byte for byte the same
            "text_kept": kept,  # shared pages whose copy contains the original's body text
            "a_ip": original.ip,
            "b_ip": copy.ip,
            "same_ip": original.ip == copy.ip,
            "same_24": _same_24(original.ip, copy.ip),
        }

    def _decoys(self) -> list[list[str]]:
        pairs: list[list[str]] = []
        for decoy in self.world.hosts:
            if decoy.role != "decoy" or decoy.of is None:
                continue
            copies = [h.name for h in self.world.hosts if h.of == decoy.of and h.role in MIRROR_ROLES]
            lookalikes = [decoy.of, *copies]
            pairs.extend([name, decoy.name] for name in lookalikes)
        return pairs

    def _decoy_kinds(self) -> list[dict[str, str]]:
        """Every decoy pair with what makes it look like a mirror; explicit pairs name their kind."""
        kinds: dict[tuple[str, str], str] = {(a, b): "same-paths" for a, b in self._decoys()}
        for a, b, kind in self.world.decoy_pairs:
            kinds[(a, b)] = kind
        return [{"a": a, "b": b, "kind": kind} for (a, b), kind in kinds.items()]

    def _extended(self, pages: list[str]) -> dict[str, Any]:
        """The keys only worlds with optional parts have."""
        hosts = self.world.hosts
        frontier = self.frontier - self._seen
        spam = {h.name: h.role for h in hosts if h.role in SPAM_ROLES}
        by_host: dict[str, list[str]] = {}
        for url in pages:
            by_host.setdefault(urlsplit(url).hostname or "", []).append(url)
        unbounded = {}
        for h in hosts:
            if not h.unbounded:
                continue
            root = self.world.url(h.name, "", self.port)
            inside = [u for u in by_host.get(h.name, []) if self._unbounded(u)]
            unbounded[h.name] = {
                "kind": "link-farm" if h.role == "link-farm" else "trap",
                "prefixes": list(h.unbounded),
                "entries": inside,
                "frontier": sum(1 for u in frontier if u.startswith(root + "/")),
            }
        cloaked = []
        for h in hosts:
            if h.cloak is None:
                continue
            for url in by_host.get(h.name, []):
                crawler, browser = self._fetch(url), self._fetch(url, BROWSER_USER_AGENT)
                if crawler is not None and browser is not None and crawler.body != browser.body:
                    cloaked.append(url)
        depth: dict[str, int] = {}
        for url in pages:
            name = urlsplit(url).hostname or ""
            depth[name] = min(depth.get(name, self.depth[url]), self.depth[url])
        return {
            "features": list(self.world.features),
            "decoy_kinds": self._decoy_kinds(),
            "spam_hosts": sorted(spam),
            "spam": spam,
            "trap_hosts": {h.name: list(h.unbounded) for h in hosts if h.unbounded},
            "good_hosts": sorted(h.name for h in hosts if h.role not in SPAM_ROLES and h.role != "hostile"),
            "unbounded": unbounded,
            "cloaked": cloaked,
            "host_depth": {h.name: depth[h.name] for h in hosts if h.name in depth},
        }

    def report(self) -> dict[str, Any]:
        pages = sorted(self.outcomes)
        html_pages = [u for u in pages if self.outcomes[u] == "ok"]
        hostile = {h.name for h in self.world.hosts if h.role == "hostile"}
        report = {
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
            "decoys": [[d["a"], d["b"]] for d in self._decoy_kinds()] if self.world.features else self._decoys(),
            "hostile": {u: self.outcomes[u] for u in pages if urlsplit(u).hostname in hostile},
            "counts": {
                "hosts": len(self.world.hosts),
                "pages": len(pages),
                "html_pages": len(html_pages),
                "links": self.link_count,
                "edges": len(self.edges),
            },
        }
        if self.world.features:
            report |= self._extended(pages)
            report["counts"]["unbounded_entries"] = sum(len(u["entries"]) for u in report["unbounded"].values())
            report["counts"]["frontier"] = len(self.frontier - self._seen)
        return report
