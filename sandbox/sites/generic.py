"""Small generic sites on a choice of templates, for the harder worlds.

Clubs, practices, shops and libraries: a front page, a few sections of item
pages, an about page and a contact page, all framed by a `Theme`. Two sites
built on one theme share every byte of its chrome (header markup, menus'
labels, the theme's boilerplate paragraphs and credits) and nothing else,
which is what the shared-template decoy needs. Subclasses of
`SmallSiteWriter` add what a particular host needs (comments on a blog,
calendar links on an events site, hidden keyword blocks).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..markup import escape, items, link, page_resource, rel, robots
from ..model import Resource
from ..text import Prose, slug, title_case

_STYLES = ("plain", "card", "sitesmith")


@dataclass(frozen=True)
class Theme:
    """A site template: markup style plus the fixed text the template ships with.

    `boilerplate` paragraphs (a cookie notice, a newsletter blurb, the
    template's credits) appear on every page of every site on the theme.
    """

    name: str
    style: str = "plain"
    boilerplate: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.style not in _STYLES:
            raise ValueError(f"unknown theme style {self.style!r}")


# What a hosted site builder's template says on every page of every site built with it.
SITESMITH_BOILERPLATE = (
    "We use cookies and similar technologies to remember your preferences, to measure how visitors use this "
    "site and to show content that is relevant to you. You can accept all cookies, reject the optional ones or "
    "choose which categories to allow in the cookie settings at any time.",
    "Sign up for occasional news, offers and updates. We send at most one email a month and never share your "
    "address with anyone else; every message has a link to unsubscribe.",
    "This website was built with SiteSmith, the simple website builder for small businesses, clubs and "
    "independent makers. Pages are served from data centres powered by renewable energy.",
    "We aim to make this site accessible to everyone. If you have difficulty using any part of it, please let "
    "us know and we will do our best to provide the information in another format.",
)


def make_theme(name: str, style: str) -> Theme:
    """A theme of `style`; the "sitesmith" style ships with SITESMITH_BOILERPLATE."""
    return Theme(name, style, SITESMITH_BOILERPLATE if style == "sitesmith" else ())


# The two themes most small sites of the harder and real worlds share.
PLAIN = make_theme("Plain", "plain")
CARD = make_theme("Card", "card")


@dataclass(frozen=True)
class SmallSite:
    """What one small site says; `SmallSiteWriter` turns it into pages."""

    brand: str
    tagline: str
    topic: str  # a `text.Prose` topic
    sections: tuple[tuple[str, str, int], ...]  # (directory name, menu label, item pages)
    theme: Theme
    friends: tuple[tuple[str, str], ...] = ()  # (URL, label) listed on /about.html
    # (page path, href, label): extra links appended to those pages under "See also".
    links: tuple[tuple[str, str, str], ...] = ()
    contact: bool = True  # write /contact.html (False: the caller supplies one)
    footer_pages: tuple[tuple[str, str], ...] = (("/about.html", "About"), ("/contact.html", "Contact"))
    robots_disallow: tuple[str, ...] = ()
    extra_menu: tuple[tuple[str, str], ...] = ()  # (path, label) added to the menu


class SmallSiteWriter:
    """Renders every page of a `SmallSite`."""

    def __init__(self, site: SmallSite, rng: random.Random) -> None:
        self.site = site
        self.rng = rng
        self.prose = Prose(site.topic, rng)
        self.resources: dict[str, Resource] = {}
        self.items: dict[str, list[tuple[str, str]]] = {}  # directory -> [(path, title)]
        used: set[str] = set()
        for directory, _, count in site.sections:
            entries = []
            while len(entries) < count:
                title = self.prose.title()
                name = slug(title)
                if name in used:
                    continue
                used.add(name)
                entries.append((f"/{directory}/{name}.html", title))
            self.items[directory] = entries
        self._extra_links: dict[str, list[tuple[str, str]]] = {}
        for page, href, label in site.links:
            self._extra_links.setdefault(page, []).append((href, label))

    # -- chrome -----------------------------------------------------------

    def menu(self) -> list[tuple[str, str]]:
        """(path, label) of the main menu."""
        return [("/", "Home")] + [(f"/{d}/", label) for d, label, _ in self.site.sections] + list(self.site.extra_menu)

    def frame(self, path: str, main: str) -> str:
        """The page body: `main` inside the theme's chrome."""
        site, theme = self.site, self.site.theme
        menu = self.menu()
        footer_links = " \u00b7 ".join(link(rel(path, p), label) for p, label in site.footer_pages)
        boiler = "".join(f"<p>{escape(p)}</p>" for p in theme.boilerplate)
        if theme.style == "plain":
            nav = " | ".join(link(p, label) for p, label in menu)
            return (
                f'<div id="top"><h2 class="brand">{escape(site.brand)}</h2><p class="tagline">{escape(site.tagline)}</p></div>\n'
                f'<p class="menu">{nav}</p>\n<div id="main">\n{main}\n</div>\n{boiler}'
                f'<div id="foot"><p>\u00a9 {escape(site.brand)}. {footer_links}</p></div>'
            )
        nav = items(
            (f'<a class="menu-link" href="{escape(p)}" title="{escape(label)}">{escape(label)}</a>' for p, label in menu),
            cls="menu",
        )
        if theme.style == "card":
            return (
                "<!-- site header -->\n"
                f'<header id="masthead" class="site-header" role="banner"><p class="site-title">'
                f'<a href="/" rel="home" title="{escape(site.brand)}">{escape(site.brand)}</a></p>'
                f'<p class="site-description">{escape(site.tagline)}</p></header>\n'
                f'<nav id="site-navigation" class="main-navigation" aria-label="Main menu">{nav}</nav>\n'
                "<!-- content -->\n"
                f'<main id="content" class="site-main" role="main">\n{main}\n</main>\n'
                "<!-- footer -->\n"
                f'<footer id="colophon" class="site-footer" role="contentinfo">{boiler}'
                f'<p class="site-info">\u00a9 {escape(site.brand)} \u00b7 {footer_links}</p></footer>\n'
                "<!-- /footer -->"
            )
        # "sitesmith": a hosted site builder's template, heavy with fixed text.
        return (
            f'<div class="ss-cookie" role="dialog" aria-live="polite"><p>{escape(theme.boilerplate[0]) if theme.boilerplate else ""}</p>'
            '<button class="ss-accept" type="button">Accept all cookies</button></div>\n'
            f'<header class="ss-header" id="ss-top"><div class="ss-brand"><a class="ss-logo" href="/">{escape(site.brand)}</a>'
            f'<span class="ss-tagline">{escape(site.tagline)}</span></div>'
            f'<nav class="ss-nav" aria-label="Site">{nav}</nav>'
            '<form class="ss-search" action="/search" method="get"><input type="search" name="q" placeholder="Search this site">'
            '<button type="submit">Search</button></form></header>\n'
            f'<div class="ss-layout"><main class="ss-main" id="ss-main">\n{main}\n</main>\n'
            '<aside class="ss-sidebar"><section class="ss-widget ss-newsletter"><h3>Join our newsletter</h3>'
            + "".join(f"<p>{escape(p)}</p>" for p in theme.boilerplate[1:2])
            + '<form action="/subscribe" method="post"><input type="email" name="email" placeholder="Your email">'
            '<button type="submit">Subscribe</button></form></section>'
            '<section class="ss-widget ss-follow"><h3>Follow us</h3><ul class="ss-social"><li>Facebook</li><li>Instagram</li>'
            "<li>Pinterest</li><li>YouTube</li></ul></section></aside></div>\n"
            '<footer class="ss-footer"><div class="ss-footer-cols">'
            + "".join(f"<p>{escape(p)}</p>" for p in theme.boilerplate[2:])
            + f'</div><p class="ss-legal">\u00a9 {escape(site.brand)} \u00b7 {footer_links}</p>'
            f'<p class="ss-credit">Made with SiteSmith \u00b7 {escape(theme.name)} theme \u00b7 Accessibility \u00b7 Cookie settings</p></footer>\n'
            '<script src="/assets/sitesmith.js"></script>'
        )

    def full_title(self, title: str) -> str:
        return title if title == self.site.brand else f"{title} | {self.site.brand}"

    def page(self, path: str, title: str, main: str) -> None:
        """Add the page at `path`, framed, with its "See also" links and at least MIN_PAGE_BYTES."""
        extra = self._extra_links.get(path)
        if extra:
            main += "<h2>See also</h2>" + items(link(href, label) for href, label in extra)
        self.resources[path] = page_resource(self.full_title(title), main, lambda m: self.frame(path, m), self.prose.paragraph)

    def paragraphs(self, count: int, low: int = 3, high: int = 7) -> str:
        return "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(count, low, high))

    # -- pages ------------------------------------------------------------

    def build(self) -> dict[str, Resource]:
        """Every page of the site plus robots.txt."""
        for directory, label, _ in self.site.sections:
            entries = self.items[directory]
            for index, (path, title) in enumerate(entries):
                self.prose.new_page()
                self.page(path, title, self.item_main(directory, label, entries, index))
            self.prose.new_page()
            listing = items(f"{link(rel(f'/{directory}/', p), t)} \u2014 {escape(self.prose.sentence())}" for p, t in entries)
            self.page(f"/{directory}/", label, f"<h1>{escape(label)}</h1>{self.paragraphs(1)}{listing}{self.paragraphs(1)}")
        self.front()
        self.about()
        if self.site.contact:
            self.contact_page()
        self.resources["/robots.txt"] = robots(*self.site.robots_disallow)
        return self.resources

    def item_main(self, directory: str, label: str, entries: Sequence[tuple[str, str]], index: int) -> str:
        """The main content of one item page."""
        path, title = entries[index]
        nav = []
        if index:
            nav.append("Previous: " + link(rel(path, entries[index - 1][0]), entries[index - 1][1]))
        if index + 1 < len(entries):
            nav.append("Next: " + link(rel(path, entries[index + 1][0]), entries[index + 1][1]))
        nav.append(link("./", f"All {label.lower()}"))
        body = self.paragraphs(self.rng.randint(2, 4))
        if self.rng.random() < 0.5:
            body += f"<h2>{escape(self.prose.title())}</h2>" + items(self.prose.instruction() for _ in range(self.rng.randint(3, 5)))
        body += self.paragraphs(1)
        return f"<h1>{escape(title)}</h1>{body}<p class=\"pager\">{' | '.join(nav)}</p>"

    def front(self) -> None:
        self.prose.new_page()
        parts = []
        for directory, label, _ in self.site.sections:
            latest = self.items[directory][:3]
            parts.append(
                f"<h2>{link(f'{directory}/', label)}</h2>" + items(link(p.lstrip("/"), t) for p, t in latest)
            )
        main = f"<h1>{escape(self.site.brand)}</h1>{self.paragraphs(2)}{''.join(parts)}{self.paragraphs(1)}"
        self.page("/", self.site.brand, main)

    def about(self) -> None:
        self.prose.new_page()
        main = f"<h1>About {escape(self.site.brand)}</h1>{self.paragraphs(3)}"
        if self.site.friends:
            main += "<h2>Friends</h2>" + items(link(url, label) for url, label in self.site.friends)
        self.page("/about.html", "About", main)

    def contact_page(self) -> None:
        self.prose.new_page()
        person = self.prose.person()
        email = slug(person).split("-")[0] + "@" + slug(self.site.brand) + ".example"
        main = (
            f"<h1>Contact</h1>{self.paragraphs(2)}"
            f"<p>Write to {escape(person)} at {link(f'mailto:{email}', email)}, "
            f"or call in at {self.rng.randint(2, 98)} {escape(title_case(self.prose.place()))} Road.</p>"
        )
        self.page("/contact.html", "Contact", main)


def small_site(site: SmallSite, rng: random.Random) -> dict[str, Resource]:
    """Every resource of `site`, written from `rng`."""
    return SmallSiteWriter(site, rng).build()


# The footer of a site that uses `provider_pages` for its licence, privacy and contact pages.
PROVIDER_FOOTER = (("/about.html", "About"), ("/contact.html", "Contact"), ("/privacy.html", "Privacy"), ("/license.html", "Licence"))


def provider_pages(rng: random.Random, provider: str = "Bramble Hosting") -> dict[str, Resource]:
    """Licence, privacy and contact pages a hosting provider puts, byte for byte, on every customer's site.

    They carry the provider's chrome, not the site's, and link only to "./"
    (the site's front page), so the same bytes work on any host.
    """
    prose = Prose("crafts", rng)
    pages = {
        "/license.html": ("Licence", "Content licence"),
        "/privacy.html": ("Privacy", "Privacy notice"),
        "/contact.html": ("Contact", "Contact the site owner"),
    }
    resources: dict[str, Resource] = {}
    for path, (short, heading) in pages.items():
        prose.new_page()
        main = f"<h1>{escape(heading)}</h1>" + "".join(f"<p>{p}</p>" for p in prose.paragraphs(4))
        if path == "/contact.html":
            main += (
                '<form action="/contact.html" method="post"><label>Your name <input name="name"></label>'
                '<label>Your message <textarea name="message"></textarea></label><button type="submit">Send</button></form>'
            )

        def frame(content: str) -> str:
            return (
                f'<div class="provider-bar">A site hosted by {escape(provider)}</div>\n{content}\n'
                f'<p>{link("./", "Back to the site")}</p><p class="provider-foot">\u00a9 {escape(provider)}</p>'
            )

        resources[path] = page_resource(f"{short} \u2014 {provider}", main, frame, prose.paragraph)
    return resources
