"""The real-pages world: Debian's documentation served as web sites, with planted mirrors, decoys, spam and a trap.

`build_real_world` serves the sites of `realpages.CORPUS` (Sphinx, LaTeX2HTML,
texinfo, DocBook XHTML, vim2html; seven languages) byte for byte, each on a
host of its own, as a static server does: every file at its path,
``dir/index.html`` also at ``dir/``, the start page at ``/``, an Apache-style
index where a site has none. Around them it plants every kind of mirror the
synthetic harder world has, made from these pages (exact, prefix, partial,
stale, repackaged, re-serialised, alias, deep, renamed), decoys that look like mirrors
without being any (translations with identical paths, one address for
unrelated sites, one generator's byte-identical static files, reposted pages,
a look-alike name), spam whose text is real paragraphs stuffed with keywords,
and a calendar trap. Generated are only the portal (the one seed), the
archives' own pages, two blogs, the events site and the chrome of the copies
and of the spam.

The real pages link off-world (docs.python.org, github.com, debian.org): a
crawl of this world must stay on its hosts (``-a allowed_hosts=`` with
`World.hosts`' names), or it resolves and fetches the real web. The ground
truth never leaves the world.

Addresses: 127.0.20.x for the originals and most hosts, 127.0.21.x for
copies in another network, 127.0.25.x for spam; none shared with the
synthetic worlds (127.0.1.x, 127.0.5.x, 127.0.9.x), 127.0.0.x never.
Everything is a pure function of the seed and the installed files; each
site draws from its own `random.Random`.
"""

from __future__ import annotations

import functools
import posixpath
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import lxml.html

from . import realnames as n
from .markup import escape, ext, items, link, page_resource, rel, robots, text_resource, under_prefix
from .model import Host, Resource, World
from .names import FARM_PREFIX
from .realpages import CONTENT_TYPES, CORPUS, SITES, is_page, require, site_files
from .sites.blog import blog_site
from .sites.copies import is_html, renamed_copy, repackage, reserialise, stale_copy
from .sites.events import CALENDAR, events_site
from .sites.generic import CARD, PLAIN, PROVIDER_FOOTER, SmallSite, SmallSiteWriter, provider_pages
from .sites.realspam import (
    CLOAKING_FOCUS,
    KeywordStuffer,
    copied_footer,
    doorway_site,
    hidden_text_site,
    passages,
    tutorial_site,
)
from .sites.spam import LinkFarm, cloak_for_crawlers, cloaked_site
from .text import Prose, slug

__all__ = ["build_real_world", "served", "FEATURES", "SMALL_SITES", "FULL_SITES"]

NET = "127.0.20."
OTHER_NET = "127.0.21."
SPAM_NET = "127.0.25."
FEATURES = ("real", "hard-mirrors", "spam")

# The corpus sites each world reads (python3-doc is left out: 530 pages more than it needs).
SMALL_SITES = (
    "werkzeug", "jinja2", "debian-faq-de", "maint-guide-fr", "debian-reference-zh-tw",
    "developers-reference-fr", "developers-reference-de",
    "policy",  # the spam's paragraphs
    "gnuplot",  # the hidden-text host's pages
)
FULL_SITES = tuple(s.key for s in CORPUS if s.key != "python3")

HIDDEN_PAGES = 10  # gnuplot pages the hidden-text host copies
REPOSTS = 3  # Django pages the reposting blog copies
DOORWAY_PRODUCTS = ("Django", "Vim", "Gnuplot", "Maxima", "Jinja", "Werkzeug", "Click", "Debian")

# Apache's "Index of" page (mod_autoindex without FancyIndexing).
_AUTOINDEX_TYPE = "text/html;charset=UTF-8"


# -- real sites as a static server serves them ---------------------------------------------


def served(*keys: str, disallow: Sequence[str] = ()) -> dict[str, Resource]:
    """The sites `keys` on one host: every file at ``/<path>``, ``dir/index.html`` also at ``dir/``.

    "/" is the first site's start page, or Apache-style "Index of" pages
    (for "/" and each directory below it without an index.html) when it has
    none. Pages get their site's Content-Type, other files their type's;
    robots.txt disallows `disallow`.
    """
    resources: dict[str, Resource] = {}
    for key in keys:
        site = SITES[key]
        for path, body in site_files(key).items():
            kind = site.html_type if is_page(path) else CONTENT_TYPES[posixpath.splitext(path)[1].lower()]
            resources["/" + path] = Resource(body=body, content_type=kind)
    for path in [p for p in resources if p.endswith("/index.html")]:
        resources[path.removesuffix("index.html")] = resources[path]
    start = SITES[keys[0]].start
    if start is None:
        resources |= _autoindex(resources)
    else:
        resources["/"] = resources["/" + start]
    resources["/robots.txt"] = robots(*disallow)
    return resources


def _autoindex(resources: dict[str, Resource]) -> dict[str, Resource]:
    """"Index of" pages for "/" and, below it, every directory without an index.html."""
    pages: dict[str, Resource] = {}
    todo = ["/"]
    while todo:
        directory = todo.pop()
        found = set()
        for path in resources:
            if path.startswith(directory) and path != directory:
                head, slash, _ = path[len(directory) :].partition("/")
                found.add(head + slash)
        children = sorted(found)
        todo += [directory + c for c in children if c.endswith("/") and directory + c + "index.html" not in resources]
        name = directory.rstrip("/") or "/"
        entries = [f'<li><a href="{escape(c)}"> {escape(c)}</a></li>' for c in children]
        if directory != "/":
            entries.insert(0, f'<li><a href="{escape(posixpath.dirname(name).rstrip("/") + "/")}"> Parent Directory</a></li>')
        listing = "\n".join(entries)
        body = (
            '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html>\n <head>\n'
            f"  <title>Index of {escape(name)}</title>\n </head>\n <body>\n<h1>Index of {escape(name)}</h1>\n"
            f"<ul>{listing}\n</ul>\n</body></html>\n"
        )
        pages[directory] = Resource(body=body.encode(), content_type=_AUTOINDEX_TYPE)
    return pages


def _half(resources: dict[str, Resource], rng: random.Random, *always: str) -> dict[str, Resource]:
    """Half of a site's pages, drawn by `rng`, at the same paths; "/", `always` and every file that is not a page kept."""
    pages = sorted(p for p, r in resources.items() if is_html(r) and p != "/" and p not in always)
    kept = {"/", *always, *rng.sample(pages, len(pages) // 2)}
    return {path: r for path, r in resources.items() if path in kept or not is_html(r)}


# -- the world being built -------------------------------------------------------------------


@dataclass
class _Builder:
    """Hosts in order, what the portal lists (category, host, title, description), decoy pairs."""

    seed: int
    hosts: list[Host] = field(default_factory=list)
    listings: list[tuple[str, str, str, str]] = field(default_factory=list)
    decoys: list[tuple[str, str, str]] = field(default_factory=list)

    def rng(self, name: str) -> random.Random:
        return random.Random(f"{self.seed}:{name}")

    def add(self, name: str, ip: str, role: str, resources: dict[str, Resource], of: str | None = None, **extra: object) -> None:
        self.hosts.append(Host(name=name, ip=ip, role=role, resources=resources, of=of, **extra))  # type: ignore[arg-type]

    def listing(self, category: str, host: str, title: str, description: str) -> None:
        self.listings.append((category, host, title, description))

    def decoy(self, kind: str, *names: str) -> None:
        """Every pair of `names` is a decoy of `kind`."""
        self.decoys += [(a, b, kind) for i, a in enumerate(names) for b in names[i + 1 :]]


def _site_pages(rng: random.Random, brand: str, pages: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> dict[str, Resource]:
    """Generated pages of a small host: each (path, title, links as (href, label)) with some paragraphs around its links."""
    prose = Prose("programming", rng)
    resources: dict[str, Resource] = {}
    for path, title, links in pages:
        prose.new_page()
        main = f"<h1>{escape(title)}</h1><p>{prose.paragraph()}</p>{items(link(h, label) for h, label in links)}<p>{prose.paragraph()}</p>"
        top = f'<p class="brand">{link(rel(path, "/"), brand)}</p>'
        resources[path] = page_resource(f"{title} | {brand}", main, lambda m, top=top: f"{top}\n{m}", prose.paragraph)
    resources["/robots.txt"] = robots()
    return resources


def _portal(rng: random.Random, listings: Sequence[tuple[str, str, str, str]]) -> dict[str, Resource]:
    """The OpenDocs directory: a front page listing every site, one page per category."""
    prose = Prose("programming", rng)
    categories = list(dict.fromkeys(c for c, *_ in listings))
    nav = " \u00b7 ".join([link("/", "OpenDocs")] + [link(f"/category/{slug(c)}.html", c) for c in categories])
    resources: dict[str, Resource] = {}

    def frame(main: str) -> str:
        return f'<div id="top">{nav}</div>\n{main}\n<div id="bottom">OpenDocs: free documentation, hand-picked.</div>'

    def page(path: str, title: str, main: str) -> None:
        resources[path] = page_resource(f"{title} - OpenDocs directory", main, frame, prose.paragraph)

    for category in categories:
        prose.new_page()
        entries = [f"{link(ext(host), title)} \u2014 {escape(about)}" for c, host, title, about in listings if c == category]
        page(f"/category/{slug(category)}.html", category, f"<h1>{escape(category)}</h1><p>{prose.paragraph()}</p>{items(entries)}")
    prose.new_page()
    every = items(f"{link(ext(host), title)} <small>in {escape(c)}</small>" for c, host, title, _ in listings)
    sections = items(link(f"category/{slug(c)}.html", c) for c in categories)
    page("/", "Home", f"<h1>OpenDocs directory</h1><p>{prose.paragraph()}</p><h2>Categories</h2>{sections}<h2>All sites</h2>{every}")
    resources["/robots.txt"] = robots("/cgi-bin/")
    return resources


# -- the parts ---------------------------------------------------------------------------------


def _originals(b: _Builder, small: bool) -> dict[str, dict[str, Resource]]:
    """Each real site on a host of its own; returns host name -> resources."""
    plan = [
        # (host, corpus keys, octet, category, title, description, robots.txt Disallow)
        (n.WERKZEUG, ("werkzeug",), 15, "Python", "Werkzeug", "the WSGI toolkit's documentation (Sphinx)", ()),
        (n.JINJA, ("jinja2",), 16, "Python", "Jinja", "template engine documentation (Sphinx)", ()),
        (n.DEBREF_ZH, ("debian-reference-zh-tw",), 19, "Debian", "Debian \u53c3\u8003\u624b\u518a", "the Debian Reference in Chinese (DocBook XHTML)", ()),
        (n.DEVREF_FR, ("developers-reference-fr",), 20, "Debian", "R\u00e9f\u00e9rence du d\u00e9veloppeur Debian", "in French (Sphinx)", ()),
        (n.MAINT_FR, ("maint-guide-fr",), 22, "Debian", "Guide du nouveau responsable Debian", "XHTML, in French", ()),
        (n.FAQ_DE, ("debian-faq-de",), 25, "Debian", "Die Debian-FAQ", "in German (DocBook)", ()),
    ]
    if not small:
        plan += [
            (n.DJANGO, ("django",), 10, "Python", "Django documentation", "tutorials, topic guides, reference, release notes (Sphinx)", ("/_modules/",)),
            (n.VIM, ("vim",), 30, "Tools", "Vim help files", "every help file of Vim 9.0 as HTML (vim2html, Latin-1)", ()),
            (n.GNUPLOT, ("gnuplot",), 12, "Tools", "gnuplot manual", "the plotting program's manual (LaTeX2HTML)", ()),
            (n.MAXIMA, ("maxima",), 30, "Tools", "Maxima manual", "the computer algebra system's manual (texinfo)", ()),
            (n.POLICY, ("policy",), 14, "Debian", "Debian Policy", "the policy manual and its companions", ()),
            (n.CLICK, ("click",), 17, "Python", "Click", "command line interfaces in Python (Sphinx)", ()),
            (n.DEBREF, ("debian-reference-de", "debian-reference-es", "debian-reference-pt"), 18, "Debian", "Debian Reference", "in German, Spanish and Portuguese (DocBook XHTML)", ()),
            (n.MAINT_ES, ("maint-guide-es",), 23, "Debian", "Gu\u00eda del nuevo desarrollador de Debian", "in Spanish (DocBook XHTML)", ()),
            (n.FAQ_FR, ("debian-faq-fr",), 24, "Debian", "La FAQ Debian", "in French (DocBook XHTML)", ()),
        ]
    sites = {}
    for host, keys, octet, category, title, about, disallow in plan:
        sites[host] = served(*keys, disallow=disallow)
        b.add(host, f"{NET}{octet}", "original", sites[host])
        b.listing(category, host, title, about)
    # The same paths in another language: a decoy, not a mirror.
    b.add(n.DEVREF_DE, f"{NET}21", "decoy", served("developers-reference-de"), n.DEVREF_FR)
    b.listing("Debian", n.DEVREF_DE, "Debian-Entwicklerreferenz", "in German (Sphinx)")
    return sites


def _mirrors(b: _Builder, sites: dict[str, dict[str, Resource]], small: bool) -> None:
    """One copy of every kind (the small world: of the main kinds); only the deep copy is not listed by the portal."""
    _main_mirrors(b, sites)
    if not small:
        _more_mirrors(b, sites)


def _main_mirrors(b: _Builder, sites: dict[str, dict[str, Resource]]) -> None:
    """Exact copies (of an XHTML and of a Chinese site), a partial copy, a prefix copy and, through it, a deep one."""
    b.add(n.WERKZEUG_MIRROR, f"{OTHER_NET}15", "mirror", dict(sites[n.WERKZEUG]), n.WERKZEUG)
    b.listing("Mirrors", n.WERKZEUG_MIRROR, "Werkzeug (mirror)", "a full copy of the Werkzeug documentation")
    b.add(n.MAINT_FR_MIRROR, f"{OTHER_NET}22", "mirror", dict(sites[n.MAINT_FR]), n.MAINT_FR)
    b.listing("Mirrors", n.MAINT_FR_MIRROR, "Miroir : guide du nouveau responsable", "copie du site officiel")
    b.add(n.DEBREF_ZH_MIRROR, f"{OTHER_NET}19", "mirror", dict(sites[n.DEBREF_ZH]), n.DEBREF_ZH)

    # A partial copy whose "/" is the original's, linked from elsewhere only at "/".
    faq = sites[n.FAQ_DE]
    b.add(n.FAQ_DE_PARTIAL, f"{NET}45", "partial-mirror", _half(faq, b.rng(n.FAQ_DE_PARTIAL), "/index.de.html"), n.FAQ_DE)
    b.listing("Mirrors", n.FAQ_DE_PARTIAL, "Debian-FAQ (Teilspiegel)", "ein Teil der FAQ")

    # A prefix copy whose /pub/jinja2/ is the original's "/", linked only there; the
    # archive's own pages also hold the one link to the deep copy, three below the portal.
    archive = _site_pages(
        b.rng(n.ARCHIVE),
        "Open Docs Library",
        [
            ("/", "Open Docs Library archive", [("pub/", "Browse /pub/"), ("mirrors/", "Mirror sites"), ("about.html", "About the archive")]),
            ("/pub/", "Index of /pub/", [("jinja2/", "jinja2/")]),
            ("/about.html", "About the archive", [("/", "Home")]),
            ("/mirrors/", "Mirror sites", [("europe.html", "Europe"), ("asia.html", "Asia")]),
            ("/mirrors/europe.html", "Mirrors in Europe", [(ext(n.WERKZEUG_MIRROR), "Werkzeug"), (ext(n.MAINT_FR_MIRROR), "maint-guide (fr)")]),
            ("/mirrors/asia.html", "Mirrors in Asia", [(ext(n.DEBREF_ZH_MIRROR), "Debian \u53c3\u8003\u624b\u518a (Taipei)")]),
        ],
    )
    jinja = {p: r for p, r in sites[n.JINJA].items() if p != "/robots.txt"}
    b.add(n.ARCHIVE, f"{NET}40", "prefix-mirror", archive | under_prefix(jinja, n.ARCHIVE_PREFIX), n.JINJA, prefix=n.ARCHIVE_PREFIX)
    b.listing("Mirrors", n.ARCHIVE, "Open Docs Library archive", "old releases and mirrored documentation")


def _more_mirrors(b: _Builder, sites: dict[str, dict[str, Resource]]) -> None:
    """The full world's other copies: partial, under /pub/vim/, stale, repackaged, re-serialised, an alias, renamed."""
    b.add(n.GNUPLOT_PARTIAL, f"{OTHER_NET}12", "partial-mirror", _half(sites[n.GNUPLOT], b.rng(n.GNUPLOT_PARTIAL)), n.GNUPLOT)
    b.listing("Mirrors", n.GNUPLOT_PARTIAL, "gnuplot manual (partial mirror)", "the pages we had room for")

    vim = {p: r for p, r in sites[n.VIM].items() if p != "/robots.txt"}
    ftp = _site_pages(
        b.rng(n.VIM_ARCHIVE),
        "Northvale University FTP",
        [
            ("/", "Northvale University FTP archive", [("pub/", "/pub/"), ("pub/vim/quickref.html", "Vim quick reference"), ("about.html", "About")]),
            ("/pub/", "Index of /pub/", [("vim/", "vim/")]),
            ("/about.html", "About this archive", [("/", "Home")]),
        ],
    )
    b.add(n.VIM_ARCHIVE, f"{OTHER_NET}41", "prefix-mirror", ftp | under_prefix(vim, n.VIM_ARCHIVE_PREFIX), n.VIM, prefix=n.VIM_ARCHIVE_PREFIX)
    b.listing("Mirrors", n.VIM_ARCHIVE, "Northvale University FTP", "software and documentation archive")

    # Stale: ~20% of the policy pages gone, ~30% of the rest with one paragraph of Werkzeug's text instead of theirs.
    werkzeug_text = [t for p in passages(site_files("werkzeug")) for t in p.paragraphs]
    edits = b.rng(f"{n.POLICY_STALE}:edits")
    stale, _, _ = stale_copy(
        sites[n.POLICY], b.rng(n.POLICY_STALE), lambda: escape(edits.choice(werkzeug_text)), missing=0.2, edited=0.3,
        keep=lambda path: path.endswith(("/", "/index.html")),
    )
    b.add(n.POLICY_STALE, f"{NET}46", "stale-mirror", stale, n.POLICY)
    b.listing("Mirrors", n.POLICY_STALE, "Debian Policy (old copy)", "as it was a few releases ago")

    b.add(n.CLICK_REPACKAGED, f"{NET}47", "repackaged-mirror", _repackaged(b, sites[n.CLICK]), n.CLICK)
    b.listing("Python", n.CLICK_REPACKAGED, "DevSnippets Hub", "Python tutorials and references")

    b.add(n.FAQ_FR_RESERIALISED, f"{OTHER_NET}24", "reserialised-mirror", _reserialised(sites[n.FAQ_FR]), n.FAQ_FR)
    b.listing("Mirrors", n.FAQ_FR_RESERIALISED, "FAQ Debian (miroir)", "miroir de la FAQ")

    b.add(n.MAINT_ES_ALIAS, f"{NET}23", "alias", sites[n.MAINT_ES], n.MAINT_ES)
    b.listing("Mirrors", n.MAINT_ES_ALIAS, "Nuevos mantenedores", "otro nombre del mismo servidor")
    _renamed(b, sites[n.DEBREF])


def _renamed(b: _Builder, debref: dict[str, Resource]) -> None:
    """The Debian Reference imported into a user group's wiki: every page at a new name
    under /handbuch/ ("/ch03.de.html" is "/handbuch/seite-ch03-de.html"), links rewritten,
    reached through the wiki's own contents page. No path is shared with the original: only
    bottom-up detection (pages whose linked pages are copies too) can find it."""
    def rename(path: str) -> str:
        return n.DEBREF_RENAMED_PREFIX + "seite-" + path[1:].removesuffix(".html").replace(".", "-") + ".html"

    copy, moved = renamed_copy(debref, rename)
    contents = [(new, old[1:]) for old, new in sorted(moved.items())]
    wiki = _site_pages(
        b.rng(n.DEBREF_RENAMED),
        "Linuxhandbuch e.V.",
        [
            ("/", "Linuxhandbuch e.V.", [("handbuch/", "Das Debian-Handbuch"), ("verein.html", "Über den Verein")]),
            (n.DEBREF_RENAMED_PREFIX, "Das Debian-Handbuch: Inhalt", contents),
            ("/verein.html", "Über den Verein", [("/", "Start")]),
        ],
    )
    b.add(n.DEBREF_RENAMED, f"{OTHER_NET}18", "renamed-mirror", wiki | copy, n.DEBREF, prefix=n.DEBREF_RENAMED_PREFIX, renamed=moved)
    b.listing("Debian", n.DEBREF_RENAMED, "Linuxhandbuch e.V.", "Handbücher für Debian-Nutzer")


def _repackaged(b: _Builder, click: dict[str, Resource]) -> dict[str, Resource]:
    """Click's documentation in DevSnippets' chrome, ads above, beside and below, titles suffixed; plus its sponsor pages."""
    sponsors = (
        ("/sponsored/cloudrun.html", "CloudRun", "Deploy your Python app in seconds. Try CloudRun free for 30 days."),
        ("/sponsored/pyjobs.html", "PyJobs", "Senior Python developers wanted: remote, flexible, well paid."),
        ("/sponsored/codecamp.html", "CodeCamp", "Learn Django in twelve weeks. Enrol now and save 40%."),
    )

    def ad(index: int, cls: str) -> str:
        path, name, text = sponsors[index]
        return f'<div class="ds-ad {cls}"><span class="ds-ad-label">Advertisement</span><p>{link(path, name)}: {escape(text)}</p></div>'

    def frame(inner: str) -> str:
        return (
            '<div class="ds-header"><p class="ds-logo"><a href="/">DevSnippets Hub</a></p>'
            '<p class="ds-strap">Copy, paste, ship: developer references in one place</p></div>\n'
            f"{ad(0, 'ds-top')}\n"
            f'<div class="ds-layout"><div class="ds-content">\n{inner}\n</div>\n<aside class="ds-side">{ad(1, "ds-side")}</aside></div>\n'
            f"{ad(2, 'ds-bottom')}\n"
            '<div class="ds-footer"><p>\u00a9 DevSnippets Hub. Content from public documentation.</p></div>'
        )

    copy = repackage(click, lambda title: f"{title} | DevSnippets Hub", frame)
    prose = Prose("programming", b.rng(n.CLICK_REPACKAGED))
    for path, name, text in sponsors:
        prose.new_page()
        main = f"<h1>{escape(name)}</h1><p>{escape(text)}</p><p>{prose.paragraph()}</p>"
        copy[path] = page_resource(f"{name} | DevSnippets Hub", main, frame, prose.paragraph)
    return copy


def _reserialised(faq: dict[str, Resource]) -> dict[str, Resource]:
    """The French FAQ parsed and written out again, with the mirror's script added."""

    def scripts(path: str) -> list[tuple[str, str]]:
        return [("/static/miroir.js", ""), ("", f'window.miroir = {{"site": "{n.FAQ_FR_RESERIALISED}", "page": "{path}"}};')]

    copy = reserialise(faq, scripts)
    copy["/robots.txt"] = text_resource(faq["/robots.txt"].body.decode() + "# miroir synchronis\u00e9 chaque nuit\n")
    copy["/static/miroir.js"] = text_resource("window.miroir = window.miroir || {};\n", "application/javascript")
    return copy


def _good_hosts(b: _Builder, small: bool, farm_entry: str, door_entry: str) -> None:
    """The blog (spam in its comments), the events site (a calendar trap; spam sponsors), and the decoys."""
    # Two blogs on one hosting provider: its licence, privacy and contact pages on both, byte for byte.
    provider = provider_pages(b.rng("provider:bramble"))
    planted = {
        1: [(ext(n.FARM[0], farm_entry), "cheap hosting", "Great post! Cheap hosting for your Django apps here:")],
        2: [(ext(n.DOORWAY, door_entry), "free django download", "Nice tips. Get the full version free:")],
    }
    blog = blog_site(
        SmallSite("Terminal Diaries", "Notes from a sysadmin's desk", "programming", (("posts", "Posts", 9),), PLAIN,
                  contact=False, footer_pages=PROVIDER_FOOTER),
        b.rng(n.BLOG),
        planted,
    )
    b.add(n.BLOG, f"{NET}51", "other", blog | provider)
    b.listing("Community", n.BLOG, "Terminal Diaries", "a sysadmin's blog")

    events, writer = events_site(
        SmallSite(
            "Open Source Meetups", "Talks, sprints and install parties near you", "programming",
            (("events", "What's on", 14), ("venues", "Venues", 5)), CARD,
            links=(
                ("/", ext(n.CLOAKING), "Our sponsor: Linux Tutorials Hub"),
                ("/", ext(n.HIDDEN_TEXT), "Our sponsor: Plotting Software Reviews"),
            ),
        ),
        b.rng(n.EVENTS),
        b.seed,
    )
    b.add(n.EVENTS, f"{NET}52", "other", events, dynamic=writer.calendar, unbounded=(CALENDAR,))
    b.listing("Community", n.EVENTS, "Open Source Meetups", "what's on: talks, sprints, install parties")

    b.decoy("translation", n.DEVREF_FR, n.DEVREF_DE)
    b.decoy("same-generator", n.WERKZEUG, n.JINJA, n.DEVREF_FR)
    if not small:
        _full_world_decoys(b, provider)


def _full_world_decoys(b: _Builder, provider: dict[str, Resource]) -> None:
    """Reposted Django pages on the second blog of `provider`, a look-alike name, and the decoy pairs among the full world's sites."""
    reuse = SmallSiteWriter(
        SmallSite(
            "Django Tips", "Short answers to common Django questions", "programming", (("tips", "Tips", 10),), CARD,
            contact=False, footer_pages=PROVIDER_FOOTER, extra_menu=(("/reposts/", "From the docs"),),
        ),
        b.rng(n.REUSE),
    )
    reused = reuse.build()
    _reposts(b, reuse, site_files("django"))
    b.add(n.REUSE, f"{NET}50", "decoy", reused | provider, n.DJANGO)
    b.listing("Community", n.REUSE, "Django Tips", "a blog about Django")

    b.add(n.LOOKALIKE, f"{NET}31", "decoy", served("debian-reference-it"), n.DJANGO)
    b.listing("Debian", n.LOOKALIKE, "Debian Reference (italiano)", "la guida di riferimento in italiano")

    b.decoy("same-generator", n.DJANGO, n.POLICY, n.WERKZEUG, n.JINJA, n.CLICK, n.DEVREF_FR)
    b.decoy("same-generator", n.MAINT_ES, n.FAQ_FR, n.FAQ_DE, n.MAINT_FR)
    b.decoy("translation", n.FAQ_FR, n.FAQ_DE)
    b.decoy("translation", n.MAINT_FR, n.MAINT_ES)
    b.decoy("translation", n.DEBREF, n.DEBREF_ZH, n.LOOKALIKE)
    b.decoy("shared-ip", n.VIM, n.MAXIMA)
    b.decoy("shared-common-pages", n.BLOG, n.REUSE)
    b.decoy("lookalike-name", n.DJANGO, n.LOOKALIKE)
    b.decoy("reused-pages", n.DJANGO, n.REUSE)
    b.decoy("reused-pages", n.GNUPLOT, n.HIDDEN_TEXT)


def _reposts(b: _Builder, writer: SmallSiteWriter, django: dict[str, bytes]) -> None:
    """Add /reposts/: the main text of `REPOSTS` Django topic guides in the blog's chrome, links to Django made absolute."""
    rng = b.rng(f"{n.REUSE}:reposts")
    candidates = sorted(p for p in django if p.startswith("topics/") and p.endswith(".html") and not p.endswith("index.html"))
    listing = []
    for path in rng.sample(candidates, REPOSTS):
        section = lxml.html.document_fromstring(django[path]).xpath("//div[@id='bd']//div[contains(@class, 'section')]")[0]
        for permalink in section.xpath(".//a[@class='headerlink']"):
            permalink.drop_tree()
        title = section.xpath("string(.//h1)").strip()
        for anchor in section.iter("a"):
            href = anchor.get("href", "")
            parts = urlsplit(urljoin(f"http://{n.DJANGO}/{path}", href))
            if href and not href.startswith("#") and parts.hostname == n.DJANGO:
                anchor.set("href", ext(n.DJANGO, parts.path + (f"?{parts.query}" if parts.query else "")))
        article = lxml.html.tostring(section, encoding="unicode", with_tail=False)
        name = path.rsplit("/", 1)[1]
        main = f"<article>{article}</article><p>Reposted from {link(ext(n.DJANGO, '/' + path), 'the Django documentation')}.</p>"
        writer.page(f"/reposts/{name}", title, main)
        listing.append(link(name, title))
    writer.prose.new_page()
    writer.page("/reposts/", "From the docs", f"<h1>From the docs</h1>{writer.paragraphs(1)}{items(listing)}")


def _spam(b: _Builder) -> tuple[list[Host], str, str]:
    """The link farm, doorway, cloaking and hidden-text hosts, and the farm's and the doorway's entry paths.

    Their text is policy paragraphs stuffed with keywords; their pages (but the
    doorway's offer) carry Pallets' footer, its link pointing at the Werkzeug host.
    """
    policy = passages(site_files("policy"))
    text = KeywordStuffer(tuple(t for p in policy for t in p.paragraphs))
    footer = copied_footer(n.WERKZEUG)
    farm = LinkFarm(b.seed, n.FARM, text=text, footer=footer)
    hosts = [
        Host(name=name, ip=f"{SPAM_NET}{i + 1}", role="link-farm", resources=farm.host_resources(),
             dynamic=functools.partial(farm.resolve, name), unbounded=(FARM_PREFIX,))
        for i, name in enumerate(n.FARM)
    ]
    doorway = doorway_site(b.rng(n.DOORWAY), text, footer, DOORWAY_PRODUCTS)
    hosts.append(Host(name=n.DOORWAY, ip=f"{SPAM_NET}10", role="doorway", resources=doorway))

    chosen = b.rng(f"{n.CLOAKING}:guides").sample([p for p in policy if len(p.paragraphs) >= 4], 8)
    browser = tutorial_site("Linux Tutorials Hub", chosen)
    crawler = cloaked_site(browser, b.rng(f"{n.CLOAKING}:spam"), focus=CLOAKING_FOCUS, text=text, footer=footer)
    # A cloaker of the kind search engines meet: spam for clients that say they crawl.
    hosts.append(Host(name=n.CLOAKING, ip=f"{SPAM_NET}11", role="cloaking", resources=browser, cloak=cloak_for_crawlers(crawler)))

    gnuplot = site_files("gnuplot")
    nodes = sorted(p for p, body in gnuplot.items() if p.startswith("node") and len(body) > 4000)
    pages = {p: gnuplot[p] for p in b.rng(f"{n.HIDDEN_TEXT}:pages").sample(nodes, HIDDEN_PAGES)}
    hidden = hidden_text_site("Plotting Software Reviews", pages, b.rng(n.HIDDEN_TEXT), footer)
    hosts.append(Host(name=n.HIDDEN_TEXT, ip=f"{SPAM_NET}12", role="hidden-text", resources=hidden))
    return hosts, farm.entry_path(b.rng("farm-entry")), min(p for p in doorway if p.startswith("/downloads/"))


def build_real_world(seed: int = 0, *, small: bool = False) -> World:
    """The real-pages world (see the module docstring); `small=True`: a few small sites, one copy of each main kind.

    Raises `realpages.MissingPackages` (one line naming what to ``apt-get
    install``) when a documentation package it reads is not installed.
    """
    require(SMALL_SITES if small else FULL_SITES)
    b = _Builder(seed)
    sites = _originals(b, small)
    _mirrors(b, sites, small)
    spam_hosts, farm_entry, door_entry = _spam(b)
    _good_hosts(b, small, farm_entry, door_entry)
    portal = Host(name=n.PORTAL, ip=f"{NET}1", role="portal", resources=_portal(b.rng(n.PORTAL), b.listings))
    hosts = [portal, *b.hosts, *spam_hosts]
    return World(seed=seed, hosts=hosts, seed_paths=[(n.PORTAL, "/")], features=FEATURES, decoy_pairs=b.decoys)
