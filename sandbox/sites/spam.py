"""Web spam: a link farm, a doorway host, a cloaking host, a hidden-text host.

The link farm's pages are generated on request (`LinkFarm.resolve`): any
``/p/<n>.html`` exists on every farm host, for any n of up to 18 digits, and
links to about a thousand other generated pages across the farm. Each page
is a pure function of (world seed, host, n), so two requests for one URL get
the same bytes and no request costs more than one page's worth of work.

The farm and the cloaking host write pure keyword text by default; the
real-pages world passes `text` (real paragraphs with keywords pushed in)
and a copied `footer` instead (`sites/realspam.py`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import lxml.html

from ..markup import document, escape, ext, html_resource, items, link, robots
from ..model import Resource, is_browser, is_crawler
from ..text import slug, title_case
from ..vocab import PLACE_NAMES, SPAM_PHRASES
from .generic import SmallSite, SmallSiteWriter

FARM_LINKS_PER_PAGE = 1000
FARM_MAX_DIGITS = 18
_FARM_PATH = re.compile(rf"/p/(0|[1-9][0-9]{{0,{FARM_MAX_DIGITS - 1}}})\.html")
_FARM_TARGETS = 10**9  # generated pages link to n below this; larger n exist too

# Writes one paragraph of spam text (unescaped) from an rng and the phrases to push.
SpamText = Callable[[random.Random, Sequence[str]], str]


def spam_page(title: str, head: str, body: str) -> Resource:
    """A 200 HTML page with extra `head` markup (meta keywords, meta refresh)."""
    return html_resource(
        (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{escape(title)}</title>\n{head}\n</head>\n<body>\n{body}\n</body>\n</html>\n"
        ).encode()
    )


def keywords_meta(phrases: Sequence[str]) -> str:
    return f'<meta name="keywords" content="{escape(", ".join(phrases))}">'


def stuffed(rng: random.Random, focus: Sequence[str], words: int) -> str:
    """Keyword-stuffed text: about `words` words, mostly the `focus` phrases, some other spam phrases."""
    out: list[str] = []
    while sum(len(p.split()) for p in out) < words:
        out.append(rng.choice(focus) if rng.random() < 0.6 else rng.choice(SPAM_PHRASES))
    text = " ".join(out)
    return text[0].upper() + text[1:] + "."


def stuffed_title(rng: random.Random, focus: Sequence[str], place: str = "") -> str:
    phrases = [title_case(f"{p} {place}".strip()) for p in rng.sample(list(focus), min(len(focus), 4))]
    return " | ".join(phrases + [title_case(rng.choice(SPAM_PHRASES))])


# -- link farm ------------------------------------------------------------------


@dataclass(frozen=True)
class LinkFarm:
    """Five (or more) hosts of generated, densely interlinked keyword pages."""

    seed: int
    hosts: tuple[str, ...]
    links_per_page: int = FARM_LINKS_PER_PAGE
    text: SpamText | None = None  # None: 60 words of `stuffed` keywords per paragraph
    footer: str = ""  # markup after every paragraph

    def focus(self, host: str) -> tuple[str, ...]:
        """The phrases a farm host is stuffed with: a share of SPAM_PHRASES of its own."""
        index = self.hosts.index(host)
        return SPAM_PHRASES[index :: len(self.hosts)]

    def resolve(self, host: str, path: str) -> Resource | None:
        """The page at `path` on farm host `host` ("/" or /p/<n>.html), else None (404)."""
        if path == "/":
            return self.page(host, None)
        match = _FARM_PATH.fullmatch(path)
        return self.page(host, int(match.group(1))) if match else None

    def entry_path(self, rng: random.Random) -> str:
        return f"/p/{rng.randrange(_FARM_TARGETS)}.html"

    def page(self, host: str, number: int | None) -> Resource:
        rng = random.Random(f"{self.seed}:farm:{host}:{number}")
        focus = self.focus(host)
        links = []
        for _ in range(self.links_per_page):
            target = rng.choice(self.hosts)
            path = f"/p/{rng.randrange(_FARM_TARGETS)}.html"
            href = path if target == host else ext(target, path)
            links.append(link(href, rng.choice(self.focus(target))))
        blocks = [
            f"<p>{escape(self.text(rng, focus) if self.text else stuffed(rng, focus, 60))}</p>{self.footer}" for _ in range(4)
        ]
        # Links in dense runs between the stuffed paragraphs, as farms lay them out.
        step = len(links) // 4
        parts = []
        for i, block in enumerate(blocks):
            parts.append(block)
            parts.append('<p class="tags">' + " ".join(links[i * step : (i + 1) * step if i < 3 else None]) + "</p>")
        heading = title_case(rng.choice(focus))
        main = f"<h1>{escape(heading)}</h1>" + "".join(parts)
        return spam_page(stuffed_title(rng, focus), keywords_meta(focus), main)

    def host_resources(self) -> dict[str, Resource]:
        """What a farm host stores: only robots.txt (allow all); pages are generated."""
        return {"/robots.txt": robots()}


# -- doorway ----------------------------------------------------------------------

DOORWAY_OFFER = "/offer.html"


def doorway_site(rng: random.Random, pages: int = 8) -> dict[str, Resource]:
    """Doorway pages: keyword-stuffed titles, a meta refresh or script redirect to a thin offer page."""
    focus = ("cheap hotels", "hotel deals", "best rates", "cheap holidays", "last minute flights")
    places = rng.sample(PLACE_NAMES, pages)
    paths = [f"/hotels/cheap-hotels-{slug(p)}.html" for p in places]
    resources: dict[str, Resource] = {}
    for i, (path, place) in enumerate(zip(paths, places, strict=True)):
        if i % 2 == 0:
            redirect = f'<meta http-equiv="refresh" content="0; url={DOORWAY_OFFER}">'
        else:
            redirect = f'<script>window.location.replace("{DOORWAY_OFFER}");</script>'
        related = items(link(rel_path, f"cheap hotels {other}") for rel_path, other in zip(paths, places, strict=True) if rel_path != path)
        head = keywords_meta([f"{k} {place}" for k in focus])
        if i % 2 == 0:
            head += redirect
            redirect = ""
        main = (
            f"{redirect}<h1>{escape(title_case(f'cheap hotels {place}'))}</h1>"
            + "".join(f"<p>{escape(stuffed(rng, [f'{k} {place}' for k in focus], 80))}</p>" for _ in range(3))
            + f'<p>Not redirected? {link(DOORWAY_OFFER, "Click here for the best hotel deals")}</p>'
            + f"<h2>Related searches</h2>{related}"
        )
        resources[path] = spam_page(stuffed_title(rng, focus, place), head, main)
    index = items(link(p, f"Cheap hotels in {place}") for p, place in zip(paths, places, strict=True))
    resources["/"] = html_resource(document(stuffed_title(rng, focus), f"<h1>Cheap Hotels</h1>{index}"))
    # The target: almost nothing on it.
    resources[DOORWAY_OFFER] = html_resource(
        document("Best Hotel Deals", f'<h1>Book now</h1><p>Best rates guaranteed.</p><p>{link("/", "Home")}</p>')
    )
    resources["/robots.txt"] = robots()
    return resources


# -- cloaking ------------------------------------------------------------------------

CLOAKING_FOCUS = ("cheap holidays", "holiday deals", "last minute booking", "best price", "casino bonus")


def cloaked_site(
    browser: dict[str, Resource],
    rng: random.Random,
    *,
    focus: Sequence[str] = CLOAKING_FOCUS,
    text: SpamText | None = None,
    footer: str = "",
) -> dict[str, Resource]:
    """What crawlers get from a cloaking host: for every page browsers see, keyword spam with the same links.

    Keeping the links means the crawler's and the browser's views reach the
    same URLs; only the text (and the titles) are spam. `text` writes each of
    the four paragraphs (default: 90 words of `stuffed` keywords); `footer`
    follows each.
    """
    spam: dict[str, Resource] = {}
    for path, resource in sorted(browser.items()):
        if not (resource.content_type or "").startswith("text/html"):
            spam[path] = resource
            continue
        document = lxml.html.document_fromstring(resource.body)
        hrefs = list(dict.fromkeys(a.get("href") for a in document.iter("a") if a.get("href")))
        anchors = items(link(h, title_case(rng.choice(focus))) for h in hrefs)
        main = (
            f"<h1>{escape(title_case(rng.choice(focus)))}</h1>"
            + "".join(f"<p>{escape(text(rng, focus) if text else stuffed(rng, focus, 90))}</p>{footer}" for _ in range(4))
            + anchors
        )
        spam[path] = spam_page(stuffed_title(rng, focus), keywords_meta(focus), main)
    return spam


def cloak_for(browser: dict[str, Resource]):  # noqa: ANN201 - a Host.cloak callable
    """A `Host.cloak`: the browser page for mainstream browsers, nothing (the spam) for everyone else."""

    def cloak(path: str, user_agent: str | None) -> Resource | None:
        return browser.get(path) if is_browser(user_agent) else None

    return cloak


def cloak_for_crawlers(crawler: dict[str, Resource]):  # noqa: ANN201 - a Host.cloak callable
    """A `Host.cloak`: the spam for clients that say they are crawlers (`model.is_crawler`),
    nothing (the host's own, clean pages) for everyone else: people, and a crawler that
    does not say what it is."""

    def cloak(path: str, user_agent: str | None) -> Resource | None:
        return crawler.get(path) if is_crawler(user_agent) else None

    return cloak


# -- hidden text ------------------------------------------------------------------------

HIDDEN_TECHNIQUES = ("display:none", "visibility:hidden", "font-size:0", "same-colour", "off-screen", "css-class")


class HiddenTextWriter(SmallSiteWriter):
    """A tradesman's site whose every page carries keyword lists the visitor never sees."""

    focus = ("emergency plumber", "cheap plumber", "boiler repair", "best price", "cheap insurance", "plumber near me")

    def page(self, path: str, title: str, main: str) -> None:
        rng = random.Random(f"{self.site.brand}:{path}")
        words, more = escape(stuffed(rng, self.focus, 40)), escape(stuffed(rng, self.focus, 40))
        technique = HIDDEN_TECHNIQUES[len(self.resources) % len(HIDDEN_TECHNIQUES)]
        super().page(path, title, main + hidden_markup(technique, words, more))


def hidden_markup(technique: str, words: str, more: str) -> str:
    """Markup hiding the escaped keyword list `words` by `technique`, and `more` by display:none.

    Every hidden-text page hides one list by its own technique and one by
    display:none (just `words` when the technique is display:none).
    """
    hidden = {
        "display:none": f'<div style="display:none">{words}</div>',
        "visibility:hidden": f'<p style="visibility:hidden">{words}</p>',
        "font-size:0": f'<p><span style="font-size:0px">{words}</span></p>',
        "same-colour": f'<div style="background-color:#ffffff"><p style="color:#ffffff">{words}</p></div>',
        "off-screen": f'<div style="position:absolute;left:-9999px;top:-9999px">{words}</div>',
        "css-class": f'<style>.seo-block{{display:none}}</style><div class="seo-block">{words}</div>',
    }
    return hidden[technique] + ("" if technique == "display:none" else f'<div style="display:none">{more}</div>')


def hidden_text_site(site: SmallSite, rng: random.Random) -> dict[str, Resource]:
    return HiddenTextWriter(site, rng).build()


def spam_word_share(text: str, extra: Iterable[str] = ()) -> float:
    """Share of the words of `text` that occur in SPAM_PHRASES (or `extra` phrases): high for stuffed text, near 0 for prose."""
    vocabulary = {w for p in (*SPAM_PHRASES, *extra) for w in p.lower().split()}
    words = re.findall(r"[a-z]+", text.lower())
    return sum(w in vocabulary for w in words) / max(1, len(words))
