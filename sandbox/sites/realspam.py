"""Spam made of real text, for the real-pages world.

Content spammers rarely write: they lift paragraphs from real pages and push
commercial phrases into them, and they copy whole pages, footers included.
`KeywordStuffer` does the first with paragraphs of Debian's documentation
(`passages`); the doorway, the cloaking host and the link farm write with it
(the farm is `spam.LinkFarm` given this text). The hidden-text host serves
real documentation pages with keyword lists hidden in them. Every spam page
carries a footer copied from the Pallets documentation (`copied_footer`),
whose one link points at a good host of the world: camouflage that must not
condemn that host.
"""

from __future__ import annotations

import html
import posixpath
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..markup import document, escape, ext, html_resource, items, link, robots
from ..model import Resource
from ..realpages import is_page
from ..text import slug, title_case
from ..vocab import SPAM_PHRASES
from .spam import DOORWAY_OFFER, HIDDEN_TECHNIQUES, hidden_markup, keywords_meta, spam_page, stuffed, stuffed_title

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.S | re.I)
_MIN_PARAGRAPH = 120  # characters, whitespace collapsed
_PLAIN_PARAGRAPH = re.compile(rb"<p>([^<]{%d,})</p>" % _MIN_PARAGRAPH)
_TITLE_TAIL = re.compile(r"\s+[\u2014|-]\s+.*$")  # " — Debian Policy Manual v4.6.2.0"
_HREF = re.compile(rb'(\s)href\s*=\s*"([^"]*)"', re.I)
_BODY_END = re.compile(rb"</body>", re.I)


@dataclass(frozen=True)
class Passage:
    """A real page's title (site name cut off) and its plain-text paragraphs."""

    title: str
    paragraphs: tuple[str, ...]


def passages(files: Mapping[str, bytes], minimum: int = 3) -> list[Passage]:
    """The UTF-8 pages of `files` with at least `minimum` paragraphs of plain text (`_MIN_PARAGRAPH`+ characters), by path."""
    found = []
    for path in sorted(files):
        if not is_page(path):
            continue
        body = files[path]
        title = _TITLE.search(body)
        texts = (" ".join(html.unescape(p.decode()).split()) for p in _PLAIN_PARAGRAPH.findall(body))
        paragraphs = tuple(t for t in texts if len(t) >= _MIN_PARAGRAPH)
        if title is not None and len(paragraphs) >= minimum:
            name = _TITLE_TAIL.sub("", " ".join(html.unescape(title.group(1).decode()).split()))
            found.append(Passage(name, paragraphs))
    return found


@dataclass(frozen=True)
class KeywordStuffer:
    """A `spam.SpamText`: a real paragraph with a commercial phrase pushed in every few words.

    Phrases come from the caller's focus (60%) or `vocab.SPAM_PHRASES`.
    """

    paragraphs: tuple[str, ...]
    gap: tuple[int, int] = (3, 6)  # words between two pushed phrases

    def __call__(self, rng: random.Random, focus: Sequence[str]) -> str:
        out: list[str] = []
        push = rng.randint(*self.gap)
        for count, word in enumerate(rng.choice(self.paragraphs).split(), 1):
            out.append(word)
            if count == push:
                out.append(rng.choice(focus) if rng.random() < 0.6 else rng.choice(SPAM_PHRASES))
                push += rng.randint(*self.gap)
        return " ".join(out)


def copied_footer(host: str) -> str:
    """The footer of a Pallets documentation page, its "Pallets" link pointing at `host`."""
    return f'<div class="footer">&#169; Copyright 2024 {link(ext(host), "Pallets")}. Created using Sphinx 5.3.0.</div>'


# -- doorway --------------------------------------------------------------------------------

DOORWAY_FOCUS = ("free download", "full version", "license key", "crack download", "serial number")


def doorway_site(rng: random.Random, write: KeywordStuffer, footer: str, products: Sequence[str]) -> dict[str, Resource]:
    """Doorway pages, one per product: stuffed titles and real text, a meta refresh or script redirect to a thin offer page."""
    paths = [f"/downloads/free-{slug(p)}-download.html" for p in products]
    resources: dict[str, Resource] = {}
    for i, (path, product) in enumerate(zip(paths, products, strict=True)):
        focus = [f"{k} {product}" for k in DOORWAY_FOCUS]
        if i % 2 == 0:
            head, redirect = keywords_meta(focus) + f'<meta http-equiv="refresh" content="0; url={DOORWAY_OFFER}">', ""
        else:
            head, redirect = keywords_meta(focus), f'<script>window.location.replace("{DOORWAY_OFFER}");</script>'
        related = items(link(p, f"{product} free download") for p in paths if p != path)
        main = (
            f"{redirect}<h1>{escape(title_case(f'free {product} download'))}</h1>"
            + "".join(f"<p>{escape(write(rng, focus))}</p>{footer}" for _ in range(3))
            + f'<p>Not redirected? {link(DOORWAY_OFFER, "Click here to download now")}</p>'
            + f"<h2>Related downloads</h2>{related}"
        )
        resources[path] = spam_page(stuffed_title(rng, DOORWAY_FOCUS, product), head, main)
    index = items(link(p, f"Download {product} free") for p, product in zip(paths, products, strict=True))
    resources["/"] = html_resource(document(stuffed_title(rng, DOORWAY_FOCUS), f"<h1>Free Software Downloads</h1>{index}{footer}"))
    resources[DOORWAY_OFFER] = html_resource(
        document("Download Now", f'<h1>Download now</h1><p>Fast and free.</p><p>{link("/", "Home")}</p>')
    )
    resources["/robots.txt"] = robots()
    return resources


# -- cloaking: what browsers see ----------------------------------------------------------------

CLOAKING_FOCUS = ("linux hosting deal", "cheap vps", "best vpn", "web hosting coupon", "casino bonus")


def tutorial_site(brand: str, chosen: Sequence[Passage]) -> dict[str, Resource]:
    """A plain small site of real text: a front page listing one guide per passage, an about page."""
    guides = [(f"/guides/{slug(p.title)}.html", p) for p in chosen]
    menu = items([link("/", "Home"), link("/about.html", "About")], cls="menu")

    def page(title: str, main: str) -> Resource:
        frame = f'<div class="top"><p class="brand">{escape(brand)}</p>{menu}</div>\n{main}\n<p class="foot">\u00a9 {escape(brand)}</p>'
        return html_resource(document(f"{title} | {brand}", frame))

    resources = {
        path: page(p.title, f"<h1>{escape(p.title)}</h1>" + "".join(f"<p>{escape(t)}</p>" for t in p.paragraphs))
        for path, p in guides
    }
    listing = items(f"{link(path.lstrip('/'), p.title)}: {escape(p.paragraphs[0][:100])}\u2026" for path, p in guides)
    resources["/"] = page(brand, f"<h1>{escape(brand)}</h1><h2>Guides</h2>{listing}")
    resources["/about.html"] = page("About", f"<h1>About {escape(brand)}</h1><p>{escape(chosen[0].paragraphs[-1])}</p>")
    resources["/robots.txt"] = robots()
    return resources


# -- hidden text ----------------------------------------------------------------------------------

HIDDEN_FOCUS = ("plotting software deal", "buy graph software", "cheap chart tool", "best price", "data plot license")


def hidden_text_site(
    brand: str, pages: Mapping[str, bytes], rng: random.Random, footer: str, footers: int = 3
) -> dict[str, Resource]:
    """Real documentation pages (`pages`: path -> bytes) with keyword lists hidden in each, before ``</body>``.

    The techniques of `spam.HIDDEN_TECHNIQUES` take turns; links to pages not
    copied lose their href (the anchor text stays), so the copy links only
    to itself. `footer` is added `footers` times to every page.
    """
    kept = set(pages)

    def prune(path: str, body: bytes) -> bytes:
        def local(match: re.Match[bytes]) -> bytes:
            href = match.group(2).decode("ascii", "replace")
            target = href.split("#", 1)[0]
            if not target or "://" in target or target.startswith(("mailto:", "/")):
                return match.group(0)
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            return match.group(0) if resolved in kept else match.group(1)

        return _HREF.sub(local, body)

    resources: dict[str, Resource] = {}
    for i, path in enumerate(sorted(pages)):
        body = prune(path, pages[path])
        technique = HIDDEN_TECHNIQUES[i % len(HIDDEN_TECHNIQUES)]
        words, more = escape(stuffed(rng, HIDDEN_FOCUS, 40)), escape(stuffed(rng, HIDDEN_FOCUS, 40))
        extra = (hidden_markup(technique, words, more) + footer * footers).encode()
        end = list(_BODY_END.finditer(body))[-1].start()
        resources["/" + path] = Resource(body=body[:end] + extra + body[end:])
    titles = {p: html.unescape(_TITLE.search(pages[p]).group(1).decode()).strip() for p in sorted(pages)}  # type: ignore[union-attr]
    listing = items(link(p, f"{t} review") for p, t in titles.items())
    resources["/"] = html_resource(document(f"{brand}: reviews and guides", f"<h1>{escape(brand)}</h1>{listing}{footer}"))
    resources["/robots.txt"] = robots()
    return resources
