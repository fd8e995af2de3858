"""The sandbox worlds: a standard small web with mirrors, and a link-heavy host.

`build_world` optionally adds harder mirrors and decoys, and spam and traps
(`harder.py`); `build_full_world` adds both.

Everything is a pure function of the seed. Each site draws from its own
`random.Random` seeded with the world seed and the site's name, so adding a
page to one site never changes the bytes of another.
"""

from __future__ import annotations

import random

from .harder import hard_mirror_part, spam_part
from .markup import under_prefix
from .model import Host, Resource, World
from .names import (
    ALUMNI,
    ARCHIVE,
    ARCHIVE_PREFIX,
    BIRDERS,
    DECOY,
    DOCS,
    DOCS_MIRROR,
    HOMEPAGE,
    HOSTILE,
    NEWS,
    PORTAL,
    RECIPES,
    UNIVERSITY,
)
from .sites.docs import DocsSite, docs_layout, docs_site
from .sites.hostile import hostile_site
from .sites.linkheavy import linkheavy_site
from .sites.news import news_site
from .sites.recipes import recipes_site
from .sites.small import archive_pages, birders_site, homepage_site, portal_site
from .sites.university import university_site

__all__ = ["Resource", "Host", "World", "build_world", "build_full_world", "build_linkheavy_world"]

# 127.0.0.0/24 is left alone: 127.0.0.1 is where everything else on a machine
# listens, and a sandbox bug must not be able to reach it.
_SUBNET = "127.0.1."


def _rng(seed: int, name: str) -> random.Random:
    # String seeds are hashed with SHA-512 by random.Random, independent of PYTHONHASHSEED.
    return random.Random(f"{seed}:{name}")


def _partial_copy(resources: dict[str, Resource], rng: random.Random, fraction: float) -> dict[str, Resource]:
    """About `fraction` of a site's pages at the same paths.

    The front page, index pages and robots.txt are always kept so the copy
    stays navigable; links to the pages left out simply 404 there.
    """
    always = {"/", "/robots.txt"}
    return {
        path: res
        for path, res in sorted(resources.items())
        if path in always or path.endswith("/index.html") or rng.random() < fraction
    }


def build_world(seed: int = 0, *, hostile: bool = True, hard_mirrors: bool = False, spam: bool = False) -> World:
    """The standard sandbox: a portal, four originals, three kinds of mirror, a decoy, small sites.

    `hostile=False` leaves out the host of broken pages. `hard_mirrors=True`
    adds repackaged, re-serialised, stale, alias and deep-link mirrors with
    five kinds of decoy; `spam=True` adds a link farm, doorway, cloaking and
    hidden-text hosts, an infinite calendar and good link-rich hosts (see
    `harder`). With both False (the default) the world is exactly the
    standard one; otherwise the standard hosts keep their bytes, except that
    the portal lists some of the new hosts, and the new hosts follow them.
    """
    layout = docs_layout(_rng(seed, "docs-layout"))
    docs = docs_site(
        layout,
        DocsSite("Pyref", "3.12", mirrors=(DOCS_MIRROR,), friends=((UNIVERSITY, "Northfield CS"), (PORTAL, "LinkAtlas"))),
        _rng(seed, DOCS),
    )
    decoy = docs_site(layout, DocsSite("Rubicon", "0.9", mirrors=(), friends=((PORTAL, "LinkAtlas"),)), _rng(seed, DECOY))
    recipes = recipes_site(_rng(seed, RECIPES))
    university = university_site(_rng(seed, UNIVERSITY))
    mirrored_recipes = {p: r for p, r in recipes.items() if p != "/robots.txt"}
    archive = archive_pages(_rng(seed, ARCHIVE)) | under_prefix(mirrored_recipes, ARCHIVE_PREFIX)
    news = news_site(_rng(seed, NEWS))
    parts = []
    if hard_mirrors:
        parts.append(hard_mirror_part(seed, news, recipes))
    if spam:
        parts.append(spam_part(seed))
    listings = [listing for part in parts for listing in part.listings]

    # (name, role, resources, of, prefix, address index); the two hobby sites
    # share an address, as small sites on one shared-hosting server do.
    plan = [
        (PORTAL, "portal", portal_site(_rng(seed, PORTAL), hostile=hostile, extra=listings), None, "/", 1),
        (DOCS, "original", docs, None, "/", 2),
        (RECIPES, "original", recipes, None, "/", 3),
        (UNIVERSITY, "original", university, None, "/", 4),
        (NEWS, "original", news, None, "/", 5),
        (DOCS_MIRROR, "mirror", dict(docs), DOCS, "/", 6),
        (ARCHIVE, "prefix-mirror", archive, RECIPES, ARCHIVE_PREFIX, 7),
        (ALUMNI, "partial-mirror", _partial_copy(university, _rng(seed, ALUMNI), 0.5), UNIVERSITY, "/", 8),
        (DECOY, "decoy", decoy, DOCS, "/", 9),
        (BIRDERS, "other", birders_site(_rng(seed, BIRDERS)), None, "/", 10),
        (HOMEPAGE, "other", homepage_site(_rng(seed, HOMEPAGE)), None, "/", 10),
    ]
    if hostile:
        plan.append((HOSTILE, "hostile", hostile_site(_rng(seed, HOSTILE)), None, "/", 11))
    hosts = [
        Host(name=name, ip=f"{_SUBNET}{octet}", role=role, resources=resources, of=of, prefix=prefix)
        for name, role, resources, of, prefix, octet in plan
    ]
    for part in parts:
        hosts.extend(part.hosts)
    features = tuple(f for f, on in (("hard-mirrors", hard_mirrors), ("spam", spam)) if on)
    decoy_pairs = [pair for part in parts for pair in part.decoy_pairs]
    return World(seed=seed, hosts=hosts, seed_paths=[(PORTAL, "/")], features=features, decoy_pairs=decoy_pairs)


def build_full_world(seed: int = 0, *, hostile: bool = True) -> World:
    """The standard world plus the harder mirrors, their decoys, spam and traps."""
    return build_world(seed, hostile=hostile, hard_mirrors=True, spam=True)


def build_linkheavy_world(seed: int = 0, pages: int = 1000, links_per_page: int = 300) -> World:
    """One documentation-like host of `pages` pages with ~`links_per_page` links each, all reachable from "/"."""
    name = "api.linkheavy-docs.org"
    site = linkheavy_site(_rng(seed, name), pages, links_per_page)
    host = Host(name=name, ip=f"{_SUBNET}1", role="linkheavy", resources=site)
    return World(seed=seed, hosts=[host], seed_paths=[(name, "/")])
