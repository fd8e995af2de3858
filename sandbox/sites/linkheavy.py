"""One documentation-like host whose pages carry hundreds of links each.

For the crawler's throughput benchmark: real API documentation repeats the
same menus on every page and index pages point many times at the same
targets (with different fragments), so link extraction, URL canonicalisation
and duplicate filtering dominate the crawl. Pages form a tree from "/"
(every page lists its children), so all are reachable; the remaining links
go to targets drawn from a Zipf-like distribution, as popular API entries are.
"""

from __future__ import annotations

import itertools
import random

from ..markup import document, escape, html_resource, items, link, rel, robots
from ..model import Resource
from ..text import Prose
from ..vocab import PROGRAMMING

_GROUPS = 12  # directories the pages are spread over


def _paths(rng: random.Random, count: int) -> list[str]:
    groups = rng.sample(PROGRAMMING.nouns, _GROUPS)
    names = [f"{rng.choice(PROGRAMMING.verbs)}-{rng.choice(PROGRAMMING.nouns)}-{i}" for i in range(count)]
    return ["/"] + [f"/api/{groups[i % _GROUPS]}/{names[i]}.html" for i in range(1, count)]


def linkheavy_site(rng: random.Random, pages: int, links_per_page: int) -> dict[str, Resource]:
    """`pages` HTML pages plus robots.txt, each page with about `links_per_page` links."""
    if pages < 1 or links_per_page < 1:
        raise ValueError("pages and links_per_page must be positive")
    prose = Prose("programming", rng)
    paths = _paths(rng, pages)
    labels = [p.rsplit("/", 1)[-1].removesuffix(".html") or "home" for p in paths]
    fanout = max(2, min(50, links_per_page // 3))
    menu = list(range(1, min(pages, fanout + 1)))  # the root's children, on every page
    popularity = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(pages)))
    hrefs: dict[tuple[str, int], str] = {}  # relpath is slow; 300k links reuse few (dir, target) pairs

    def href(source: str, target: int) -> str:
        key = (source.rsplit("/", 1)[0], target)
        if key not in hrefs:
            hrefs[key] = rel(source, paths[target])
        return hrefs[key]

    resources: dict[str, Resource] = {}
    for index, path in enumerate(paths):
        prose.new_page(4)
        children = list(range(index * fanout + 1, min(pages, index * fanout + fanout + 1)))
        nav = [link("/", "Home")] + [link(paths[t], labels[t]) for t in menu]
        contents = [link(href(path, t), labels[t]) for t in children]
        spare = max(0, links_per_page - len(nav) - len(contents))
        targets = rng.choices(range(pages), cum_weights=popularity, k=spare)
        index_entries = [
            link(f"{href(path, t)}#{labels[t]}.{rng.choice(PROGRAMMING.nouns)}", f"{labels[t]}.{rng.choice(PROGRAMMING.verbs)}()")
            for t in targets
        ]
        main = (
            f'<nav class="menu">{" | ".join(nav)}</nav>'
            f"<h1>{escape(labels[index])}</h1><p>{prose.paragraph(2, 4)}</p>"
            f"<h2>Contents</h2>{items(contents)}"
            f'<h2>Index</h2>{items(index_entries, cls="genindex")}'
        )
        resources[path] = html_resource(document(f"{labels[index]} \u2014 API reference", main))
    resources["/robots.txt"] = robots()
    return resources
