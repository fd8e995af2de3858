"""Canonical form of an HTML document: the token sequence every detector works on.

Broder et al., "Syntactic clustering of the Web" (WWW6, 1997) treat a document as a
sequence of words once markup is dropped; Haveliwala, Gionis and Indyk, "Scalable
techniques for clustering the web" (WebDB 2000) describe a URL by the anchor text of the
links to it plus a window of words either side (8 by default). Both come from one walk
over the parsed tree here, so the page is parsed once.

The canonical form: markup, comments, processing instructions and the contents of
``script``, ``style``, ``noscript`` and ``template`` dropped; entities decoded (by the
parser); each text run Unicode-normalised (NFKC) and lowercased; words are maximal runs
of Unicode word characters (``\\w+``). Block-level elements separate words, inline
elements do not, as a browser renders them (``wo<b>rd</b>`` is one word).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from lxml import etree

from detectors.stopwords import STOPWORDS

__all__ = [
    "WINDOW",
    "Anchor",
    "CanonicalDocument",
    "canonical_document",
    "canonical_tokens",
    "content_bag",
    "tokenize",
]

#: Words kept on each side of an anchor (Haveliwala et al.: 8).
WINDOW = 8

_WORD = re.compile(r"\w+")
_DROPPED = ("script", "style", "noscript", "template")
# Elements that render inline: text either side of them may join into one word.
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i img ins kbd mark q s samp small "
    "span strike strong sub sup time tt u var".split()
)
# C0 controls other than tab/newline/CR and lone surrogates make lxml refuse a str.
_UNPARSEABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class Anchor(NamedTuple):
    """One ``<a href>`` (or ``<area href>``): the raw href and where its text sits.

    ``start`` and ``end`` index the document's token list: the anchor's words are
    ``tokens[start:end]`` (alt text of images inside the anchor included).
    """

    href: str
    start: int
    end: int


@dataclass(slots=True)
class CanonicalDocument:
    """A parsed page: canonical tokens, title, anchors and the ``<base href>`` if any."""

    tokens: list[str] = field(default_factory=list)
    title: str = ""
    anchors: list[Anchor] = field(default_factory=list)
    base_href: str | None = None
    meta_refresh: str | None = None
    #: Token index where each block-level element's text begins (ascending, first 0):
    #: the units a boilerplate filter keeps or drops.
    block_starts: list[int] = field(default_factory=list)

    def blocks(self) -> list[list[str]]:
        """The tokens of each non-empty block, in document order."""
        bounds = [*self.block_starts, len(self.tokens)]
        return [self.tokens[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]

    def anchor_text(self, anchor: Anchor) -> str:
        return " ".join(self.tokens[anchor.start : anchor.end])

    def window_before(self, anchor: Anchor, width: int = WINDOW) -> str:
        return " ".join(self.tokens[max(0, anchor.start - width) : anchor.start])

    def window_after(self, anchor: Anchor, width: int = WINDOW) -> str:
        return " ".join(self.tokens[anchor.end : anchor.end + width])


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """Canonical words of plain text (NFKC, lowercase, ``\\w+`` runs)."""
    return _WORD.findall(_normalise(text))


def _clean(html: str) -> str:
    return _UNPARSEABLE.sub(" ", html) if _UNPARSEABLE.search(html) else html


def _parse(html: str | bytes) -> etree._Element | None:
    if isinstance(html, bytes):
        html = html.decode("utf-8", errors="replace")
    html = _clean(html)
    if not html.strip():
        return None
    # huge_tree: libxml2 otherwise drops text nodes over 10 MB and the page comes out empty.
    parser = etree.HTMLParser(remove_comments=True, remove_pis=True, recover=True, huge_tree=True)
    try:
        root = etree.fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None
    if root is None:
        return None
    etree.strip_elements(root, *_DROPPED, with_tail=False)
    return root


class _Walker:
    """Collects text runs in document order with the character span of each anchor."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.anchor_spans: list[tuple[int, str, int, int]] = []
        self.open_anchors: list[tuple[int, str, int]] = []
        self.anchors_seen = 0
        self.block_chars: list[int] = []
        self.title = ""
        self.base_href: str | None = None
        self.meta_refresh: str | None = None

    def add(self, text: str | None) -> None:
        if text:
            text = _normalise(text)
            self.parts.append(text)
            self.length += len(text)

    def separate(self) -> None:
        self.parts.append(" ")
        self.length += 1
        self.block_chars.append(self.length)

    def start(self, el: etree._Element) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag not in _INLINE:
            self.separate()
        if tag in ("a", "area"):
            href = el.get("href")
            if href is not None:
                self.open_anchors.append((self.anchors_seen, href, self.length))
                self.anchors_seen += 1
        elif tag == "img":
            # An image's alt text is what it says, notably as the text of a link.
            self.add(el.get("alt"))
        elif tag == "title" and not self.title:
            self.title = " ".join((el.text or "").split())
        elif tag == "base" and self.base_href is None:
            self.base_href = el.get("href")
        elif tag == "meta" and (el.get("http-equiv") or "").lower() == "refresh":
            self.meta_refresh = el.get("content")
        self.add(el.text)

    def end(self, el: etree._Element) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("a", "area") and self.open_anchors and el.get("href") is not None:
            ordinal, href, begin = self.open_anchors.pop()
            self.anchor_spans.append((ordinal, href, begin, self.length))
        if tag not in _INLINE:
            self.separate()
        self.add(el.tail)


def _token_starts(text: str, tokens: list[str]) -> np.ndarray:
    """Character offset of each token, from the gaps between tokens (C-speed passes only)."""
    gaps = _WORD.split(text)
    gap_lengths = np.fromiter(map(len, gaps), dtype=np.int64, count=len(gaps))
    token_lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    starts = np.cumsum(gap_lengths[:-1])
    starts[1:] += np.cumsum(token_lengths[:-1])
    return starts


def canonical_document(html: str | bytes) -> CanonicalDocument:
    """Parse ``html`` once into its canonical tokens, title, anchors and base href.

    Never raises on bad input: an empty, binary or unparseable body gives an empty
    document. ``bytes`` are decoded as UTF-8 with replacement; callers that know the
    charset (Scrapy's ``response.text``) pass ``str``.
    """
    root = _parse(html)
    if root is None:
        return CanonicalDocument()
    walker = _Walker()
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            walker.start(el)
        else:
            walker.end(el)
    text = "".join(walker.parts)
    tokens = _WORD.findall(text)
    # Anchors close in the order of their ends; report them in the order they open.
    spans = sorted(walker.anchor_spans)
    anchors: list[Anchor] = []
    starts = _token_starts(text, tokens) if tokens else np.empty(0, dtype=np.int64)
    block_starts = np.unique(np.searchsorted(starts, np.asarray(walker.block_chars, dtype=np.int64))).tolist() if tokens else []
    if spans:
        chars = np.array([(b, e) for _, _, b, e in spans], dtype=np.int64)
        first = np.searchsorted(starts, chars[:, 0], side="left").tolist()
        stop = np.searchsorted(starts, chars[:, 1], side="left").tolist()
        anchors = [Anchor(s[1].strip(), b, e) for s, b, e in zip(spans, first, stop)]
    return CanonicalDocument(
        tokens=tokens,
        title=walker.title,
        anchors=anchors,
        base_href=walker.base_href,
        meta_refresh=walker.meta_refresh,
        block_starts=[0, *(b for b in block_starts if 0 < b < len(tokens))],
    )


def canonical_tokens(html: str | bytes) -> list[str]:
    """The canonical token sequence of ``html`` (see the module docstring)."""
    return canonical_document(html).tokens


def content_bag(tokens: list[str]) -> list[str]:
    """The tokens with stopwords and one-character words removed, order kept."""
    return [t for t in tokens if len(t) > 1 and t not in STOPWORDS]
