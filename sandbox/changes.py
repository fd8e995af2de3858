"""A changing world: one world served as it is at three crawls, with the truth of what
changed between them (``detectors.page_change``, ``crawler.recrawl``).

`changing_world(world)` takes any world (the generated ones or the real-page world) as it
is at the first crawl and makes the two versions after it:

- version 1 (second crawl): on the stale pair's original, half of the HTML pages change a
  little (a sentence inserted) while its mirror keeps serving the old copies (a stale
  mirror); on a second host two pages vanish (404) and two move (to ``NAME-moved.EXT`` in
  the same directory, linked from the host's front page, which so changes a little); on a
  third, two pages change completely (new text, the same links) and one a little; one
  host (the rewriter: Fetterly et al.'s rapid complete change) rewrites every HTML page
  completely;
- version 2 (third crawl): the stale mirror catches up, serving the original's version-1
  pages, a week after the original changed; the rewriter rewrites everything again;
  nothing else changes.

Every 200 carries a ``Last-Modified`` (the version's date: 1, 15 and 22 November 2026);
every other host (in world order) sends no ``ETag``, so a re-crawl's conditional requests
use ``If-None-Match`` on some hosts and ``If-Modified-Since`` on the others.

``truth[k]`` is, for the re-crawl that makes crawl k + 2, every changed (host, path): its
kind and, for a move, the path it moved to; every other page is unchanged. Which stored
pages a re-crawl sees depends on what the crawls stored: :meth:`ChangingWorld.expected`
gives each stored URL's kind.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .model import Host, Resource, World
from .text import Prose
from .truth import is_html_type

#: The versions' dates, as ``Last-Modified`` sends them.
DATES = ("Sun, 01 Nov 2026 00:00:00 GMT", "Sun, 15 Nov 2026 00:00:00 GMT", "Sun, 22 Nov 2026 00:00:00 GMT")
#: Days between the original's change (version 1) and its stale mirror's (version 2).
LAG_DAYS = 7.0
_BODY = re.compile(rb"<body[^>]*>", re.IGNORECASE)
_HREF = re.compile(rb"""href\s*=\s*["']([^"'<>]+)["']""", re.IGNORECASE)
#: (host, path) -> (kind, the path it moved to or None).
Changes = dict[tuple[str, str], tuple[str, str | None]]


@dataclass
class ChangingWorld:
    """The world at each crawl (``versions``) and what changed between them (``truth``)."""

    versions: list[World]
    truth: list[Changes]
    #: The host that rewrites all its pages at every crawl.
    rewriter: str
    #: (original, mirror): the mirror follows the original's version-1 changes one crawl late.
    stale_pair: tuple[str, str]
    #: The host whose pages vanish and move, and the one with complete and small changes.
    moving: str
    editing: str
    #: Hosts that send no ETag (only Last-Modified).
    without_etag: list[str] = field(default_factory=list)

    def expected(self, recrawl: int, stored: Iterable[str], port: int) -> dict[str, tuple[str, str | None]]:
        """For re-crawl ``recrawl`` (0: the second crawl), each stored URL's kind and, for a
        move, the URL it moved to."""
        world = self.versions[0]
        changes = self.truth[recrawl]
        result = {}
        for url in stored:
            host, path = _split(url)
            kind, moved = changes.get((host, path), ("unchanged", None))
            result[url] = (kind, world.url(host, moved, port) if moved else None)
        return result

    def lagging_paths(self) -> list[str]:
        """The paths the stale mirror changes one crawl after its original."""
        original, _ = self.stale_pair
        return sorted(path for (host, path), (kind, _) in self.truth[0].items() if host == original and kind == "changed")


def _split(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[1]
    authority, _, path = rest.partition("/")
    return authority.split(":", 1)[0], "/" + path


def _html_paths(host: Host) -> list[str]:
    """The host's HTML 200 pages but its front page, sorted."""
    return sorted(
        p for p, r in host.resources.items()
        if p != "/" and r.status == 200 and r.stream is None and is_html_type(r.content_type) and not p.startswith("/robots")
    )


def _dated(resource: Resource, date: str, etag: bool) -> Resource:
    if resource.status != 200 or resource.stream is not None:
        return resource
    headers = tuple((k, v) for k, v in resource.headers if k.lower() != "last-modified") + (("Last-Modified", date),)
    return replace(resource, headers=headers, etag=etag)


def _insert(body: bytes, fragment: str) -> bytes:
    """``fragment`` right after the ``<body>`` tag (at the end when there is none)."""
    data = fragment.encode("ascii", "xmlcharrefreplace")
    found = _BODY.search(body)
    return body[: found.end()] + data + body[found.end():] if found else body + data


def _little(resource: Resource, prose: Prose) -> Resource:
    """A sentence inserted: the page changes a little."""
    return replace(resource, body=_insert(resource.body, f"<p>{html.escape(prose.sentence())}</p>\n"))


def _rewritten(resource: Resource, prose: Prose) -> Resource:
    """New text, new anchor words, the same link targets: the page changes completely."""
    prose.new_page()
    hrefs = list(dict.fromkeys(h.decode("utf-8", "replace") for h in _HREF.findall(resource.body)))
    links = "".join(f'<li><a href="{h}">{html.escape(prose.phrase(3))}</a></li>' for h in hrefs)
    paragraphs = "".join(f"<p>{html.escape(p)}</p>\n" for p in prose.paragraphs(6))
    title = html.escape(prose.title())
    body = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n</head>\n'
        f"<body>\n<h1>{title}</h1>\n{paragraphs}<ul>{links}</ul>\n</body>\n</html>\n"
    )
    return replace(resource, body=body.encode("utf-8"), content_type="text/html; charset=utf-8")


def _moved_path(path: str) -> str:
    stem, dot, ext = path.rpartition(".")
    return f"{stem}-moved.{ext}" if dot and "/" not in ext else path.rstrip("/") + "-moved"


def _pick_hosts(world: World) -> tuple[tuple[str, str], str, str, str]:
    """(stale original, its mirror), the rewriter, the moving host and the editing host."""
    hosts = [h for h in world.hosts if h.dynamic is None and h.cloak is None]
    by_name = {h.name: h for h in hosts}
    pair = next(
        (h.of, h.name) for h in hosts
        if h.role == "mirror" and h.prefix == "/" and h.of in by_name and len(_html_paths(by_name[h.of])) >= 10
    )
    copied = {h.of for h in world.hosts if h.of}
    others = [h for h in hosts if h.role == "other" and len(_html_paths(h)) >= 5]
    lone = [h for h in hosts if h.role == "original" and h.name not in copied and len(_html_paths(h)) >= 5]
    rewriter = min(others or lone, key=lambda h: (len(_html_paths(h)), h.name)).name
    used = {pair[0], pair[1], rewriter}
    originals = [
        h.name for h in hosts
        if h.role == "original" and h.name not in used and len(_html_paths(h)) >= 8
        and (root := h.resources.get("/")) is not None and root.status == 200 and is_html_type(root.content_type)
    ]
    return pair, rewriter, originals[0], originals[1]


def changing_world(world: World, seed: int = 0) -> ChangingWorld:
    """The three versions of ``world`` and their truth (module docstring)."""
    rng = random.Random(f"{seed}:changes")
    (original, mirror), rewriter, moving, editing = _pick_hosts(world)
    without_etag = [h.name for i, h in enumerate(world.hosts) if i % 2]

    def dated(host: Host, resources: dict[str, Resource], dates: dict[str, str], default: str) -> Host:
        etag = host.name not in without_etag
        return replace(host, resources={p: _dated(r, dates.get(p, default), etag) for p, r in resources.items()})

    prose = Prose("travel", rng)
    v1: dict[str, dict[str, Resource]] = {h.name: dict(h.resources) for h in world.hosts}
    changed1: dict[str, dict[str, str]] = {h.name: {} for h in world.hosts}
    truth1: Changes = {}

    def change(host: str, path: str, resource: Resource, kind: str = "changed", moved: str | None = None) -> None:
        v1[host][path] = resource
        changed1[host][path] = DATES[1]
        truth1[(host, path)] = (kind, moved)

    # The stale pair: half the original's pages change a little; the mirror keeps the old.
    pages = _html_paths(world.host(original))
    for path in sorted(rng.sample(pages, len(pages) // 2)):
        change(original, path, _little(v1[original][path], prose))
    # Vanished and moved pages; the front page links to the new places.
    candidates = [p for p in _html_paths(world.host(moving)) if "." in p.rsplit("/", 1)[-1]]
    gone, moves = rng.sample(candidates, 2), []
    for path in gone:
        del v1[moving][path]
        truth1[(moving, path)] = ("gone", None)
    for path in rng.sample([p for p in candidates if p not in gone], 2):
        target = _moved_path(path)
        moves.append(target)
        v1[moving][target] = v1[moving].pop(path)
        changed1[moving][target] = DATES[1]
        truth1[(moving, path)] = ("moved", target)
    front = "".join(f'<p><a href="{t}">{html.escape(prose.phrase(2))}</a></p>' for t in moves)
    change(moving, "/", replace(v1[moving]["/"], body=_insert(v1[moving]["/"].body, front)))
    # Complete and small changes on one host.
    complete, little = rng.sample(_html_paths(world.host(editing)), 2), None
    for path in complete:
        change(editing, path, _rewritten(v1[editing][path], prose))
    little = rng.choice([p for p in _html_paths(world.host(editing)) if p not in complete])
    change(editing, little, _little(v1[editing][little], prose))
    # The rewriter: every HTML page, front page included, rewritten.
    rewritten = ["/", *_html_paths(world.host(rewriter))]
    for path in rewritten:
        change(rewriter, path, _rewritten(v1[rewriter][path], prose))

    # Version 2: the mirror catches up a week later; the rewriter rewrites again.
    v2 = {name: dict(resources) for name, resources in v1.items()}
    changed2: dict[str, dict[str, str]] = {h.name: {} for h in world.hosts}
    truth2: Changes = {}
    for path in sorted(changed1[original]):
        v2[mirror][path] = v1[original][path]
        changed2[mirror][path] = DATES[2]
        truth2[(mirror, path)] = ("changed", None)
    for path in rewritten:
        v2[rewriter][path] = _rewritten(v1[rewriter][path], prose)
        changed2[rewriter][path] = DATES[2]
        truth2[(rewriter, path)] = ("changed", None)

    versions = [
        replace(world, hosts=[dated(h, h.resources, {}, DATES[0]) for h in world.hosts]),
        replace(world, hosts=[dated(h, v1[h.name], changed1[h.name], DATES[0]) for h in world.hosts]),
        replace(world, hosts=[dated(h, v2[h.name], changed1[h.name] | changed2[h.name], DATES[0]) for h in world.hosts]),
    ]
    return ChangingWorld(
        versions=versions, truth=[truth1, truth2], rewriter=rewriter, stale_pair=(original, mirror),
        moving=moving, editing=editing, without_etag=without_etag,
    )
