"""Content features of one page that separate spam from ordinary pages.

Measurements only: ``detectors.spam`` turns them into reasons and a score, with the
thresholds. The input is the page as ``detectors.canonical.canonical_document`` parsed
it: its canonical tokens, title and anchors, and its tree, which still holds what spam
hides in and the canonical walk skips (styles, scripts, meta keywords), so the page is
not parsed a second time.

Features of Ntoulas, Najork, Manasse and Fetterly, "Detecting spam web pages through
content analysis" (WWW 2006), each of which they found to separate spam in isolation:

``words``, ``title_words``, ``avg_word_length``
    Spam pages run long, with long titles (keyword lists), and long "words" made by
    gluing keywords together (freemp3downloads).
``compression_ratio``
    Raw size over zlib-compressed size of the canonical text: repeated keywords compress
    well.
``anchor_fraction``
    Words inside links over all words: link lists dressed as pages.
``visible_fraction``
    Characters of words over characters of HTML: spam pages carry text and little markup.

Features of the techniques named in the CS276 notes (lecture 13, 2002) and by Gyöngyi and
Garcia-Molina, "Web spam taxonomy" (AIRWeb 2005):

``top_term_share``
    Share of the content words (stopwords dropped) taken by the five most frequent terms:
    keyword stuffing repeats a handful of phrases. Indexes repeat structural words
    ("module" is a third of a documentation index's words), so this alone is weak.
``vocabulary_richness``
    Guiraud's R = distinct / √total over the content words (Guiraud, "Les caractères
    statistiques du vocabulaire", 1954): stuffed text recycles the few dozen
    words of its phrases, so R falls as the page grows, while prose and index vocabulary
    keep growing with length (Heaps' law) and R stays roughly level. Pavlov and Dobrov,
    "Detecting content spam on the web through text diversity analysis" (2011), found
    diversity features of this kind to separate content spam.
``title_max_repeat``, ``title_segments``
    Most repetitions of one content word in the title, and the number of phrases the
    title lists between separators (``|``, ``,``, ``·``, dashes, ``/``, ``:``).
``anchor_repetition``
    1 − distinct/total over the texts of links of two or more words: farms label a
    thousand links with a few dozen keyword phrases. One-word labels ("source", "¶") are
    left out: API references repeat them on every entry.
``meta_keywords``, ``meta_keyword_max_repeat``
    Entries of ``<meta name="keywords">`` and the most repetitions of one word across
    them ("cheap hotels paris, cheap hotels rome, ...").
``hidden_words``, ``hidden_top_share``, ``hidden_techniques``
    Words a browser does not show, outside links (dropdown menus hide links
    legitimately) and tab panels a reader opens (``role="tabpanel"`` labelled by an
    element of the page with ``role="tab"``: documentation tabs hide variants of one
    code example; a panel no tab opens is hidden text like any other): ``display:none`` (and the ``hidden`` attribute), ``visibility:hidden``,
    zero font size, text colour equal to an explicitly set background colour (an unknown
    background is never assumed white: dark themes set it in external stylesheets), and
    positioning or indenting 1,000 px or more off-screen. Styles come from ``style``
    attributes, ``bgcolor``/``<font color>`` and ``<style>`` blocks, whose rules count
    only with simple selectors (``tag``, ``.class``, ``#id`` and their compounds, comma
    lists); rules with combinators or pseudo-classes and everything inside ``@media``
    (responsive layouts hide things per screen size) are ignored. ``hidden_top_share`` is
    ``top_term_share`` of the hidden words: tabs and accordions hide prose, spam hides
    keyword lists.
``redirect``, ``redirect_words``
    An immediate redirect (``<meta http-equiv="refresh">`` with a URL and a delay of at
    most 5 s, or a short inline script that assigns ``location`` or calls
    ``location.replace/assign`` at load) and the words on such a page. A doorway shows
    crawlers keyword text that browsers leave at once; a "this page has moved" stub
    has a handful of words.

A feature that cannot be measured reliably on a page this small is ``None`` (see the
``MIN_*`` constants), and no reason can fire on it.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lxml import etree

from mirrorscope.detectors.canonical import CanonicalDocument, content_bag, parse_html, tokenize

__all__ = [
    "MIN_COMPRESSION_BYTES",
    "MIN_CONTENT_WORDS",
    "MIN_HIDDEN_WORDS",
    "MIN_REPEATED_ANCHORS",
    "TOP_TERMS",
    "Markup",
    "PageFeatures",
    "markup",
    "page_features",
    "top_term_share",
]

#: Terms counted by ``top_term_share``: stuffed pages repeat a few phrases of 1–3 words.
TOP_TERMS = 5
#: Content words below which term shares are noise (a 30-word page repeats its topic).
MIN_CONTENT_WORDS = 100
#: Hidden words below which their term share is not measured (a hidden "skip to content").
MIN_HIDDEN_WORDS = 20
#: Text bytes below which zlib's fixed overhead dominates the compression ratio.
MIN_COMPRESSION_BYTES = 1000
#: Multi-word anchors below which their repetition is not measured.
MIN_REPEATED_ANCHORS = 50
#: Words below which word length and anchor fraction are not measured.
MIN_WORDS = 50
#: HTML characters below which the visible fraction is not measured.
MIN_HTML_CHARS = 2000
#: Longest meta refresh delay still taken as a redirect a visitor never reads past.
REDIRECT_MAX_DELAY = 5.0
#: Longest inline script taken as a redirect stub rather than an application.
REDIRECT_SCRIPT_MAX_CHARS = 500
#: Off-screen offset: nothing on a real layout sits 1,000 px left of or above the page.
OFF_SCREEN_PX = 1000.0

_TITLE_SEPARATORS = re.compile(r"\s[|·•/:\-–—]\s|[|,·•]")
_REFRESH = re.compile(r"^\s*(\d+(?:\.\d*)?)?\s*[;,]?\s*(?:url\s*=\s*)?(\S.*)?$", re.IGNORECASE | re.DOTALL)
_SCRIPT_REDIRECT = re.compile(r"\blocation(?:\.href)?\s*=(?!=)|\blocation\.(?:replace|assign)\s*\(")
# A script that defines behaviour runs the redirect on an event, not at load.
_SCRIPT_DEFERRED = re.compile(r"\bfunction\b|=>|addEventListener|\bon[a-z]+\s*=", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_SIMPLE_SELECTOR = re.compile(r"^([a-z][a-z0-9]*|\*)?((?:[.#][\w-]+)*)$", re.IGNORECASE)
_SELECTOR_PART = re.compile(r"([.#])([\w-]+)")
_LENGTH = re.compile(r"^(-?\d*\.?\d+)(px|pt|em|rem|%)?$")
_ZERO_SIZE = re.compile(r"^0*\.?0*(px|pt|em|rem|%)?$")
_RGB = re.compile(r"^rgba?\(\s*(\d+)%?\s*,\s*(\d+)%?\s*,\s*(\d+)%?\s*(?:,\s*([\d.]+)\s*)?\)$")
_HEX = re.compile(r"^#([0-9a-f]{3}|[0-9a-f]{6})$")
_NAMED_COLOURS = {
    "white": "#ffffff", "black": "#000000", "red": "#ff0000", "lime": "#00ff00", "green": "#008000",
    "blue": "#0000ff", "yellow": "#ffff00", "silver": "#c0c0c0", "gray": "#808080", "grey": "#808080",
    "navy": "#000080", "maroon": "#800000", "purple": "#800080", "teal": "#008080", "olive": "#808000",
    "aqua": "#00ffff", "cyan": "#00ffff", "fuchsia": "#ff00ff", "magenta": "#ff00ff", "orange": "#ffa500",
}
# Properties that can hide text; rules setting none of them are not kept.
_HIDING = frozenset(
    "display visibility font-size color background background-color position left top text-indent".split()
)
_UNRENDERED = ("script", "style", "noscript", "template", "head")


@dataclass(frozen=True, slots=True)
class Markup:
    """What the raw HTML says beyond its canonical text."""

    hidden_tokens: tuple[str, ...] = ()
    hidden_techniques: tuple[str, ...] = ()
    meta_keywords: str | None = None
    meta_refresh: str | None = None
    script_redirect: bool = False


@dataclass(frozen=True, slots=True)
class PageFeatures:
    """The measurements of one page (see the module docstring); ``None``: not measurable."""

    words: int
    title_words: int
    avg_word_length: float | None
    top_term_share: float | None
    vocabulary_richness: float | None
    compression_ratio: float | None
    anchor_fraction: float | None
    visible_fraction: float | None
    title_max_repeat: int
    title_segments: int
    anchor_repetition: float | None
    meta_keywords: int
    meta_keyword_max_repeat: int
    hidden_words: int
    hidden_top_share: float | None
    hidden_techniques: tuple[str, ...]
    redirect: str | None
    redirect_words: int | None


def top_term_share(words: Sequence[str], top: int = TOP_TERMS) -> float:
    """Share of ``words`` taken by the ``top`` most frequent of them (0 for no words)."""
    if not words:
        return 0.0
    return sum(count for _, count in Counter(words).most_common(top)) / len(words)


def _max_repeat(words: Iterable[str]) -> int:
    counts = Counter(content_bag(list(words)))
    return max(counts.values(), default=0)


# -- CSS -------------------------------------------------------------------------------


def _declarations(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(";"):
        name, colon, value = part.partition(":")
        if colon:
            out[name.strip().lower()] = value.replace("!important", "").strip().lower()
    return out


def _top_level_rules(css: str) -> Iterable[tuple[str, str]]:
    """(prelude, body) of each rule outside at-rules; at-rule blocks are skipped whole."""
    css = _CSS_COMMENT.sub(" ", css)
    depth, start, prelude = 0, 0, ""
    for match in re.finditer(r"[{}]", css):
        if match.group() == "{":
            if depth == 0:
                prelude, start = css[start : match.start()].strip(), match.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                if not prelude.startswith("@"):
                    yield prelude, css[start : match.start()]
                start = match.end()


@dataclass(frozen=True, slots=True)
class _Rule:
    tag: str | None
    ident: str | None
    classes: frozenset[str]
    specificity: tuple[int, int, int, int]
    declarations: dict[str, str]

    def matches(self, tag: str, ident: str | None, classes: frozenset[str]) -> bool:
        return (
            (self.tag is None or self.tag == tag)
            and (self.ident is None or self.ident == ident)
            and self.classes <= classes
        )


class _StyleSheet:
    """Simple-selector rules that set a hiding property, indexed by id, class and tag."""

    def __init__(self, sources: Iterable[str]) -> None:
        self.by_id: dict[str, list[_Rule]] = {}
        self.by_class: dict[str, list[_Rule]] = {}
        self.by_tag: dict[str, list[_Rule]] = {}
        order = 0
        for css in sources:
            for prelude, body in _top_level_rules(css):
                declarations = {k: v for k, v in _declarations(body).items() if k in _HIDING}
                if not declarations:
                    continue
                for selector in prelude.split(","):
                    order += 1
                    self._add(selector.strip(), declarations, order)

    def _add(self, selector: str, declarations: dict[str, str], order: int) -> None:
        match = _SIMPLE_SELECTOR.match(selector)
        if not selector or match is None:
            return
        tag = match.group(1)
        tag = None if tag in (None, "*") else tag.lower()
        parts = _SELECTOR_PART.findall(match.group(2))
        ids = [name for kind, name in parts if kind == "#"]
        classes = frozenset(name for kind, name in parts if kind == ".")
        rule = _Rule(tag, ids[0] if ids else None, classes, (len(ids), len(classes), int(tag is not None), order), declarations)
        if rule.ident is not None:
            self.by_id.setdefault(rule.ident, []).append(rule)
        elif classes:
            self.by_class.setdefault(min(classes), []).append(rule)
        else:
            self.by_tag.setdefault(tag or "*", []).append(rule)

    def __bool__(self) -> bool:
        return bool(self.by_id or self.by_class or self.by_tag)

    def style(self, tag: str, ident: str | None, classes: frozenset[str]) -> dict[str, str]:
        """Declarations of the matching rules, the more specific and the later winning."""
        candidates = [*self.by_tag.get(tag, ()), *self.by_tag.get("*", ())]
        if ident is not None:
            candidates += self.by_id.get(ident, ())
        for name in classes:
            candidates += self.by_class.get(name, ())
        out: dict[str, str] = {}
        for rule in sorted(candidates, key=lambda r: r.specificity):
            if rule.matches(tag, ident, classes):
                out.update(rule.declarations)
        return out


def _colour(value: str | None) -> str | None:
    """A colour as #rrggbb, a transparent one as None, anything unrecognised as itself."""
    if not value:
        return None
    value = value.strip().lower()
    if value in ("transparent", "inherit", "initial", "currentcolor", "none"):
        return None
    if value in _NAMED_COLOURS:
        return _NAMED_COLOURS[value]
    if match := _HEX.match(value):
        digits = match.group(1)
        return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits)
    if match := _RGB.match(value):
        if match.group(4) is not None and float(match.group(4)) == 0:
            return None
        return "#" + "".join(f"{min(255, int(g)):02x}" for g in match.groups()[:3])
    return value


def _background(value: str) -> str | None:
    """The colour in a ``background`` shorthand, if one of its words is a colour."""
    for word in re.split(r"\s+(?![^(]*\))", value):
        colour = _colour(word)
        if colour is not None and (colour.startswith("#") or word in _NAMED_COLOURS):
            return colour
    return None


def _pixels(value: str | None) -> float | None:
    match = _LENGTH.match(value or "")
    if match is None:
        return None
    number, unit = float(match.group(1)), match.group(2)
    return number * 16 if unit in ("em", "rem") else number


@dataclass(frozen=True, slots=True)
class _State:
    """How an element's text renders, as inherited down the tree."""

    gone: str | None = None  # display:none or off-screen: nothing below can come back
    invisible: bool = False  # visibility:hidden, which a descendant can undo
    zero_font: bool = False
    colour: str | None = None
    background: str | None = None
    in_link: bool = False  # links, interface panels and code: hidden legitimately (docstring)

    def technique(self) -> str | None:
        if self.gone:
            return self.gone
        if self.invisible:
            return "visibility:hidden"
        if self.zero_font:
            return "font-size:0"
        if self.colour is not None and self.colour == self.background:
            return "same-colour"
        return None

    def child(self, el: etree._Element, sheet: _StyleSheet, tabs: frozenset[str]) -> _State:
        """The state of ``el``'s text; ``tabs``: the ids of the page's ``role="tab"`` elements."""
        tag = el.tag if isinstance(el.tag, str) else ""
        style: dict[str, str] = {}
        if sheet:
            classes = frozenset((el.get("class") or "").split())
            style = sheet.style(tag, el.get("id"), classes)
        if el.get("bgcolor"):
            style.setdefault("background-color", el.get("bgcolor", ""))
        if tag == "font" and el.get("color"):
            style.setdefault("color", el.get("color", ""))
        if el.get("style"):
            style.update(_declarations(el.get("style", "")))
        gone, invisible, zero_font = self.gone, self.invisible, self.zero_font
        colour, background = self.colour, self.background
        if el.get("hidden") is not None or style.get("display") == "none":
            gone = gone or "display:none"
        visibility = style.get("visibility")
        if visibility in ("hidden", "collapse"):
            invisible = True
        elif visibility == "visible":
            invisible = False
        if "font-size" in style:
            zero_font = bool(_ZERO_SIZE.match(style["font-size"]))
        if style.get("position") in ("absolute", "fixed"):
            offsets = [_pixels(style.get("left")), _pixels(style.get("top"))]
            if any(o is not None and o <= -OFF_SCREEN_PX for o in offsets):
                gone = gone or "off-screen"
        indent = _pixels(style.get("text-indent"))
        if indent is not None and indent <= -OFF_SCREEN_PX:
            gone = gone or "off-screen"
        if "color" in style:
            colour = _colour(style["color"])
        if "background-color" in style:
            background = _colour(style["background-color"])
        elif "background" in style:
            background = _background(style["background"])
        in_link = (
            self.in_link
            or (tag == "a" and el.get("href") is not None)
            or (el.get("aria-labelledby") in tabs and (el.get("role") or "").lower() == "tabpanel")
        )
        return _State(gone, invisible, zero_font, colour, background, in_link)


# -- the markup pass -------------------------------------------------------------------


def _is_redirect_script(text: str) -> bool:
    return len(text) <= REDIRECT_SCRIPT_MAX_CHARS and bool(_SCRIPT_REDIRECT.search(text)) and not _SCRIPT_DEFERRED.search(text)


def markup(page: etree._Element | str | bytes | None) -> Markup:
    """Hidden words, meta keywords, meta refresh and script redirects of a page: its
    parsed tree (``CanonicalDocument.tree``), or its HTML, parsed here."""
    root = page if isinstance(page, etree._Element) or page is None else parse_html(page)
    if root is None:
        return Markup()
    styles: list[str] = []
    script_redirect = False
    meta_keywords = meta_refresh = None
    for el in root.iter("style", "script", "meta"):
        if el.tag == "style":
            styles.append(el.text or "")
        elif el.tag == "script":
            script_redirect = script_redirect or (not el.get("src") and _is_redirect_script(el.text or ""))
        elif (el.get("name") or "").lower() == "keywords" and meta_keywords is None:
            meta_keywords = el.get("content")
        elif (el.get("http-equiv") or "").lower() == "refresh" and meta_refresh is None:
            meta_refresh = el.get("content")
    sheet = _StyleSheet(styles)
    tabs = frozenset(str(i) for i in root.xpath("//*[@role='tab']/@id"))
    hidden: list[str] = []
    techniques: dict[str, None] = {}
    stack = [_State()]
    skip = 0  # depth inside unrendered elements
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            if skip or tag in _UNRENDERED:
                skip += 1
                continue
            state = stack[-1].child(el, sheet, tabs)
            stack.append(state)
            _collect(el.text, state, hidden, techniques)
        else:
            if skip:
                skip -= 1
                if skip:
                    continue
            else:
                stack.pop()
            _collect(el.tail, stack[-1], hidden, techniques)
    return Markup(tuple(hidden), tuple(techniques), meta_keywords, meta_refresh, script_redirect)


def _collect(text: str | None, state: _State, hidden: list[str], techniques: dict[str, None]) -> None:
    if not text or state.in_link:
        return
    technique = state.technique()
    if technique is None:
        return
    words = tokenize(text)
    if words:
        hidden.extend(words)
        techniques.setdefault(technique)


def _redirect(meta_refresh: str | None, script_redirect: bool) -> str | None:
    if meta_refresh:
        match = _REFRESH.match(meta_refresh)
        if match and match.group(2) and float(match.group(1) or 0) <= REDIRECT_MAX_DELAY:
            return "meta-refresh"
    return "script" if script_redirect else None


# -- the features ----------------------------------------------------------------------


def page_features(doc: CanonicalDocument, html_chars: int) -> PageFeatures:
    """The content features of one page, from its ``detectors.canonical.canonical_document``
    (tokens, words, title, anchors and tree) and the length of its HTML in characters."""
    found = markup(doc.tree)
    tokens = doc.tokens
    words = len(tokens)
    letters = sum(map(len, doc.words))
    bag = content_bag(tokens)
    text = " ".join(doc.words).encode("utf-8")
    title_tokens = tokenize(doc.title)
    anchor_words = [tokens[a.start : a.end] for a in doc.anchors]
    phrases = [" ".join(w) for w in anchor_words if len(w) >= 2]
    entries = [e for e in (found.meta_keywords or "").split(",") if e.strip()]
    hidden_bag = content_bag(list(found.hidden_tokens))
    redirect = _redirect(found.meta_refresh, found.script_redirect)
    return PageFeatures(
        words=words,
        title_words=len(title_tokens),
        avg_word_length=sum(map(len, tokens)) / words if words >= MIN_WORDS else None,
        top_term_share=top_term_share(bag) if len(bag) >= MIN_CONTENT_WORDS else None,
        vocabulary_richness=len(set(bag)) / math.sqrt(len(bag)) if len(bag) >= MIN_CONTENT_WORDS else None,
        compression_ratio=len(text) / len(zlib.compress(text)) if len(text) >= MIN_COMPRESSION_BYTES else None,
        anchor_fraction=sum(map(len, anchor_words)) / words if words >= MIN_WORDS else None,
        visible_fraction=letters / html_chars if html_chars >= MIN_HTML_CHARS else None,
        title_max_repeat=_max_repeat(title_tokens),
        title_segments=sum(1 for s in _TITLE_SEPARATORS.split(doc.title) if tokenize(s)),
        anchor_repetition=1 - len(set(phrases)) / len(phrases) if len(phrases) >= MIN_REPEATED_ANCHORS else None,
        meta_keywords=len(entries),
        meta_keyword_max_repeat=_max_repeat(tokenize(" ".join(entries))),
        hidden_words=len(found.hidden_tokens),
        hidden_top_share=top_term_share(hidden_bag) if len(found.hidden_tokens) >= MIN_HIDDEN_WORDS else None,
        hidden_techniques=found.hidden_techniques,
        redirect=redirect,
        redirect_words=words if redirect else None,
    )
