"""The world's small hosts: the web directory, the archive's own pages, two hobby sites."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..markup import escape, ext, items, link, page_resource, rel, robots, text_resource
from ..model import Resource
from ..names import (
    ARCHIVE,
    ARCHIVE_PREFIX,
    BIRDERS,
    DECOY,
    DOCS,
    HOMEPAGE,
    HOSTILE,
    NEWS,
    RECIPES,
    UNIVERSITY,
)
from ..text import Prose, slug

# (category, host, title, topic of its description); the portal is the
# crawl's only seed, so it must lead (directly or not) to every host.
_LISTINGS = (
    ("Computers & Programming", DOCS, "Pyref documentation", "programming"),
    ("Computers & Programming", DECOY, "Rubicon language docs", "programming"),
    ("Food & Drink", RECIPES, "Salt & Simmer", "cooking"),
    ("Food & Drink", ARCHIVE, "Food Commons archive", "cooking"),
    ("Education", UNIVERSITY, "Northfield Computer Science", "university"),
    ("Regional", NEWS, "The Harbourtown Gazette", "travel"),
    ("Regional", BIRDERS, "Northfield Birders", "travel"),
    ("Personal pages", HOMEPAGE, "Ellis Grant's home page", "university"),
    ("Webmaster resources", HOSTILE, "Glitchworks broken-page gallery", "programming"),
)


def _paragraphs(prose: Prose, count: int) -> str:
    return "".join(f"<p>{p}</p>" for p in prose.paragraphs(count))


def portal_site(
    rng: random.Random, *, hostile: bool, extra: Sequence[tuple[str, str, str, str]] = ()
) -> dict[str, Resource]:
    """The LinkAtlas web directory: front page, one page per category.

    `extra` listings (category, host, title, description topic) follow the
    standard ones; the description topic is one of "programming", "cooking",
    "university" and "travel".
    """
    listings = [entry for entry in _LISTINGS if hostile or entry[1] != HOSTILE] + list(extra)
    writers = {topic: Prose(topic, rng) for topic in ("programming", "cooking", "university", "travel")}
    general = writers["travel"]
    categories = list(dict.fromkeys(c for c, *_ in listings))
    resources: dict[str, Resource] = {}

    def page(path: str, title: str, main: str) -> None:
        nav = " \u00b7 ".join([link("/", "LinkAtlas")] + [link(f"/category/{slug(c)}.html", c) for c in categories])
        bottom = f'<div id="bottom">LinkAtlas \u2014 a hand-edited web directory. {link("/submit.html", "Suggest a site")}</div>'
        resources[path] = page_resource(f"{title} - LinkAtlas", main, lambda m: f'<div id="top">{nav}</div>\n{m}\n{bottom}', general.paragraph)

    for category in categories:
        general.new_page()
        entries = []
        for _, host, title, topic in (e for e in listings if e[0] == category):
            writers[topic].new_page()
            entries.append(f"{link(ext(host), title)} \u2014 {escape(writers[topic].paragraph(3, 5))}")
        page(f"/category/{slug(category)}.html", category, f"<h1>{escape(category)}</h1>{_paragraphs(general, 3)}{items(entries)}")
    general.new_page()
    featured = items(f"{link(ext(host), title)} <small>in {escape(category)}</small>" for category, host, title, _ in listings)
    main = (
        "<h1>LinkAtlas web directory</h1>"
        + _paragraphs(general, 2)
        + "<h2>Categories</h2>"
        + items(link(f"category/{slug(c)}.html", c) for c in categories)
        + f"<h2>Featured sites</h2>{featured}"
    )
    page("/", "Home", main)
    general.new_page()
    page("/submit.html", "Suggest a site", f"<h1>Suggest a site</h1>{_paragraphs(general, 4)}")
    resources["/robots.txt"] = robots("/cgi-bin/")
    return resources


def archive_pages(rng: random.Random) -> dict[str, Resource]:
    """The archive host's own pages; the mirrored copy is added under ARCHIVE_PREFIX."""
    prose = Prose("cooking", rng)
    resources: dict[str, Resource] = {}

    def page(path: str, title: str, main: str) -> None:
        top = f'<h2 class="logo">{link(rel(path, "/"), "Food Commons")}</h2>'
        bottom = f'<hr><p>{link(rel(path, "/about.html"), "About the archive")}</p>'
        resources[path] = page_resource(f"{title} | Food Commons archive", main, lambda m: f"{top}\n{m}\n{bottom}", prose.paragraph)

    prose.new_page()
    page(
        "/",
        "Food Commons",
        "<h1>Food Commons archive</h1>"
        + _paragraphs(prose, 4)
        + items([link("pub/", "Browse the collections"), link(ARCHIVE_PREFIX, "Salt & Simmer (mirror)"), link("/cgi-bin/stats", "Usage statistics")]),
    )
    prose.new_page()
    collection = link(rel("/pub/", ARCHIVE_PREFIX), "saltandsimmer/")
    page("/pub/", "Collections", f"<h1>Index of /pub/</h1><p>{collection} \u2014 {escape(prose.paragraph(2, 3))}</p>{_paragraphs(prose, 4)}")
    prose.new_page()
    page("/about.html", "About", f"<h1>About the archive</h1>{_paragraphs(prose, 5)}")
    resources["/cgi-bin/stats"] = text_resource("requests served: 0\n")
    resources["/robots.txt"] = robots("/cgi-bin/")
    return resources


def birders_site(rng: random.Random) -> dict[str, Resource]:
    """A bird-watching club: three pages."""
    prose = Prose("travel", rng)
    resources: dict[str, Resource] = {}
    pages = (("/", "Northfield Birders"), ("/walks.html", "Guided walks"), ("/sightings.html", "Recent sightings"))
    for path, title in pages:
        prose.new_page()
        menu = " | ".join(link(rel(path, p), t) for p, t in pages)
        main = (
            f"<p>{menu}</p><h1>{escape(title)}</h1>"
            + _paragraphs(prose, 5)
            + f"<p>News of our walks appears in {link(ext(NEWS), 'the Gazette')}; "
            + f"photos by {link(ext(HOMEPAGE, '/photos.html'), 'Ellis Grant')}.</p>"
        )
        resources[path] = page_resource(title, main, lambda m: m, prose.paragraph)
    resources["/robots.txt"] = robots()
    return resources


def homepage_site(rng: random.Random) -> dict[str, Resource]:
    """A personal home page sharing its IP address with the birders' club."""
    prose = Prose("university", rng)
    resources: dict[str, Resource] = {}
    pages = (("/", "Ellis Grant"), ("/cv.html", "Curriculum vitae"), ("/photos.html", "Photos"))
    for path, title in pages:
        prose.new_page()
        menu = items(link(rel(path, p), t) for p, t in pages)
        main = (
            f"<div id='menu'>{menu}</div><h1>{escape(title)}</h1>"
            + _paragraphs(prose, 5)
            + f"<p>I studied at {link(ext(UNIVERSITY, '/people/index.html'), 'Northfield CS')}, "
            + f"I mostly program in {link(ext(DOCS, '/library/index.html'), 'Pyref')} "
            + f"and I walk with {link(ext(BIRDERS), 'the Birders')}.</p>"
        )
        resources[path] = page_resource(title, main, lambda m: m, prose.paragraph)
    resources["/robots.txt"] = robots()
    return resources

