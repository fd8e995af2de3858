"""The sandbox's data model: responses, hosts and the world that holds them.

Pages are built before the server has chosen a port, yet links between hosts
must carry it. Bodies and headers therefore hold `PORT_MARK` right after a host
name (``http://docs.pyref.org@@PORT@@/``) and `Resource.at_port` substitutes
``:8080`` (or nothing for port 80) when the page is served or walked. Two hosts
holding the same `Resource` therefore still serve byte-identical pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from . import truth

PORT_MARK = "@@PORT@@"
_PORT_MARK_BYTES = PORT_MARK.encode("ascii")


# What makes a User-Agent a mainstream browser's, for cloaking hosts: a crawler
# that announces itself (or sends no User-Agent at all) is never one.
_BROWSER_ENGINES = ("Chrome/", "Firefox/", "Safari/")
_ROBOT_WORDS = ("bot", "crawl", "spider", "mirrorscope")


def is_browser(user_agent: str | None) -> bool:
    """True for a mainstream browser's User-Agent, False for crawlers, tools and None.

    ``Mozilla/5.0`` plus a Chrome, Firefox or Safari token, and none of
    "bot", "crawl", "spider", "mirrorscope" (any case): Googlebot's
    ``Mozilla/5.0 (compatible; Googlebot/2.1; ...)`` is therefore a crawler.
    """
    if not user_agent or "Mozilla/5.0" not in user_agent:
        return False
    lowered = user_agent.lower()
    return any(e in user_agent for e in _BROWSER_ENGINES) and not any(w in lowered for w in _ROBOT_WORDS)


# How crawlers name themselves (Googlebot, bingbot, Baiduspider, Yahoo! Slurp): what a
# cloaker looks for to show them its spam.
_CRAWLER_WORDS = ("bot", "crawler", "spider", "slurp")


def is_crawler(user_agent: str | None) -> bool:
    """True for a User-Agent that says it is a crawler (names a bot, crawler, spider or
    slurp, any case); a client that sends none, or hides what it is, is not one."""
    return bool(user_agent) and any(w in user_agent.lower() for w in _CRAWLER_WORDS)


def port_suffix(port: int) -> str:
    """The ``:port`` part of a URL authority; empty for HTTP's default port."""
    return "" if port == 80 else f":{port}"


@dataclass(frozen=True)
class Resource:
    """One response, as the server will send it."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"  # None: no Content-Type header
    headers: tuple[tuple[str, str], ...] = ()  # extra headers, e.g. Location, Content-Encoding
    delay: float = 0.0  # seconds to wait before answering (slow host)
    reset: bool = False  # close the connection without answering
    # A body made while it is sent (endless or too big to hold), instead of `body`:
    # "chunked" frames it as Transfer-Encoding chunks, "close" sends no length and
    # ends it by closing the connection.
    stream: Callable[[], Iterator[bytes]] | None = field(default=None, compare=False, repr=False)
    framing: str = "chunked"
    #: Whether the server adds a strong ``ETag`` (a hash of the body) to a 200 and answers
    #: ``If-None-Match`` with it; off for servers that send only ``Last-Modified``.
    etag: bool = True

    def at_port(self, port: int) -> Resource:
        """The resource as served on `port`: `PORT_MARK` replaced in body and headers."""
        has_mark = _PORT_MARK_BYTES in self.body or any(PORT_MARK in v for _, v in self.headers)
        if not has_mark:
            return self
        suffix = port_suffix(port)
        return replace(
            self,
            body=self.body.replace(_PORT_MARK_BYTES, suffix.encode("ascii")),
            headers=tuple((k, v.replace(PORT_MARK, suffix)) for k, v in self.headers),
        )


@dataclass
class Host:
    """A named web host: its address, its role in the world and its pages.

    Roles: "portal", "original", "mirror", "prefix-mirror", "partial-mirror",
    "decoy", "hostile", "other" (small unrelated sites), "linkheavy" and
    "unreachable" (named in the hosts file, nothing listens on its address); the
    harder worlds add the mirror roles "repackaged-mirror",
    "reserialised-mirror", "stale-mirror", "renamed-mirror" and "alias", and the spam roles
    "link-farm", "doorway", "cloaking" and "hidden-text". `of` names the
    original a mirror copies (or whose paths or name a decoy imitates) and
    `prefix` is where that copy lives on this host ("/pub/x/" for a prefix
    mirror). `dynamic`, when set, answers paths missing from `resources`, so
    generated spaces (link farms, calendar traps) need not be stored;
    `unbounded` lists the path prefixes of such spaces, which the ground-truth
    walk enters but never enumerates. `cloak`, when set, is asked first with
    the path and the request's User-Agent (None when absent): a non-None answer
    replaces the normal one. `resources` is therefore what a crawler gets.
    """

    name: str
    ip: str
    role: str
    resources: dict[str, Resource]
    of: str | None = None
    prefix: str = "/"
    dynamic: Callable[[str], Resource | None] | None = field(default=None, repr=False)
    unbounded: tuple[str, ...] = ()
    cloak: Callable[[str, str | None], Resource | None] | None = field(default=None, repr=False)
    #: A renamed mirror's paths: the original's page path -> this host's (the truth
    #: compares the two through it); empty for every other host.
    renamed: dict[str, str] = field(default_factory=dict, repr=False)

    def resolve(self, path: str, user_agent: str | None = None) -> Resource | None:
        """The response for `path` (query string included) to `user_agent`, or None for a 404.

        Only a host with `cloak` looks at the User-Agent; None (no header)
        gets what crawlers get.
        """
        if self.cloak is not None:
            cloaked = self.cloak(path, user_agent)
            if cloaked is not None:
                return cloaked
        found = self.resources.get(path)
        if found is None and self.dynamic is not None:
            return self.dynamic(path)
        return found

    def in_unbounded(self, path: str) -> bool:
        """True when `path` lies in one of the host's generated, unbounded URL spaces."""
        return bool(self.unbounded) and path != "/robots.txt" and path.startswith(self.unbounded)


@dataclass
class World:
    """A deterministic set of hosts plus the crawl's entry points.

    `features` names the optional parts a world was built with ("hard-mirrors",
    "spam"); the ground truth of a world with features carries extra keys.
    `decoy_pairs` lists (host, host, kind) pairs that must not be reported as
    mirrors beyond those the "decoy" roles imply.
    """

    seed: int
    hosts: list[Host]
    seed_paths: list[tuple[str, str]]  # (host name, path) crawl entry points
    features: tuple[str, ...] = ()
    decoy_pairs: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_name = {h.name: h for h in self.hosts}

    def host(self, name: str) -> Host:
        """The host called `name` (KeyError when the world has none)."""
        found = self.find(name)
        if found is None:
            raise KeyError(name)
        return found

    def find(self, name: str) -> Host | None:
        """The host called `name`, or None; for routing untrusted Host headers."""
        found = self._by_name.get(name)
        if found is None and len(self._by_name) != len(self.hosts):  # hosts appended since
            self._by_name = {h.name: h for h in self.hosts}
            found = self._by_name.get(name)
        return found

    def url(self, host: str, path: str, port: int) -> str:
        """Absolute URL of `path` on `host` served at `port`."""
        return f"http://{host}{port_suffix(port)}{path}"

    def seeds(self, port: int) -> list[str]:
        """The crawl's seed URLs."""
        return [self.url(h, p, port) for h, p in self.seed_paths]

    def hosts_file_text(self) -> str:
        """The world's name-to-address map in /etc/hosts format."""
        return "".join(f"{h.ip} {h.name}\n" for h in self.hosts)

    def ground_truth(self, port: int) -> dict[str, Any]:
        """What a correct crawl of this world served at `port` finds (JSON-able)."""
        return truth.ground_truth(self, port)
