"""Canonical form of an HTML document: the token sequence every detector works on.

Broder et al., "Syntactic clustering of the Web" (WWW6, 1997) treat a document as a
sequence of words once markup is dropped; Haveliwala, Gionis and Indyk, "Scalable
techniques for clustering the web" (WebDB 2000) describe a URL by the anchor text of the
links to it plus a window of words either side (8 by default). Both come from one walk
over the parsed tree here, and the tree is kept for the spam detector's markup pass
(``detectors.spam_content.markup``), so a page is parsed once.

Parsing. The body is parsed as UTF-8 bytes with the encoding stated to the parser, never
as a ``str``: lxml refuses a ``str`` that starts with an XML declaration (XHTML written by
DocBook, AsciiDoc and many other generators), and a stated encoding overrides whatever
the document declares (a ``<meta charset>`` or ``<?xml encoding?>`` that the transport's
charset contradicts). Bytes are decoded first with the caller's encoding (Scrapy's, from
the HTTP header, a BOM, the XML declaration or a meta tag) or, without one, as browsers
do (``w3lib.encoding.html_to_unicode``). A non-blank body that gives no tree, or no word
although its text outside markup has words, is ``unparsed``: callers record that as an
outcome instead of storing an empty page.

The canonical form: markup, comments, processing instructions and the contents of
``script``, ``style``, ``noscript`` and ``template`` dropped; entities decoded (by the
parser); each text run Unicode-normalised (NFKC) and lowercased; words are maximal runs
of Unicode word characters (``\\w+``), none longer than ``MAX_WORD_CHARS``. Block-level
elements separate words, inline elements do not, as a browser renders them
(``wo<b>rd</b>`` is one word).

Bounds. Everything a page gives is linear in its size with a small constant: a run of
word characters longer than ``MAX_WORD_CHARS`` is cut into words of that length (a page
of adjacent links, ``<a>w1</a><a>w2</a>...``, is one run of a million characters, and
that "word" sat in every link's window: n links cost n² bytes), and a link's anchor
text and each of its windows keep whole words up to ``LINK_TEXT_MAX_CHARS`` (nested
anchors otherwise each hold all the text after them).

Chinese and Japanese are written without spaces, so ``\\w+`` would make a sentence one
"word". Runs of Han, Hiragana and Katakana are cut into overlapping character bigrams
(一二三 gives 一二, 二三; a lone character stays a unigram), as Lucene's CJKAnalyzer and
Elasticsearch's ``cjk_bigram`` filter do: no dictionary, and a one-character edit
changes only the two bigrams around it. A run is also cut where an anchor starts or
ends, so a link's text is its own bigrams. Hangul is left to ``\\w+``: Korean separates
words with spaces.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from lxml import etree
from w3lib.encoding import html_to_unicode

from mirrorscope.detectors.stopwords import STOPWORDS

__all__ = [
    "LINK_TEXT_MAX_CHARS",
    "MAX_WORD_CHARS",
    "WINDOW",
    "Anchor",
    "CanonicalDocument",
    "canonical_document",
    "canonical_tokens",
    "content_bag",
    "decode_html",
    "parse_html",
    "tokenize",
]

#: Words kept on each side of an anchor (Haveliwala et al.: 8).
WINDOW = 8
#: Longest word in characters; longer runs are cut into words of this length, as
#: Lucene's StandardTokenizer and Elasticsearch's standard tokenizer do
#: (``max_token_length`` 255). The real-page corpus's longest word has 128.
MAX_WORD_CHARS = 255
#: Characters (whole words, spaces between) kept of a link's anchor text and of each
#: window beside it. The real-page corpus's longest are 221 and 271 (99.99% within 151
#: and 237), so no real link loses a word; whatever its page, a link holds at most
#: three times this much text.
LINK_TEXT_MAX_CHARS = 320
#: Words a body's text must have outside markup before a parse that found none is
#: called a failure (a page that is only scripts, images or a frameset has none).
UNPARSED_MIN_WORDS = 3

_WORD = re.compile(rf"\w{{1,{MAX_WORD_CHARS}}}")
# Han (with the iteration marks and the supplementary planes), Hiragana and Katakana
# word characters: the scripts written without spaces between words.
_CJK = (
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u3041-\u309a\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
_HAS_CJK = re.compile(f"[{_CJK}]")
# A word of other scripts, or a run of CJK characters (cut into bigrams afterwards).
_RUN = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]{{1,{MAX_WORD_CHARS}}}")
_DROPPED = frozenset(("script", "style", "noscript", "template"))
# Elements that render inline: text either side of them may join into one word.
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i img ins kbd mark q s samp small "
    "span strike strong sub sup time tt u var".split()
)
# C0 controls other than tab/newline/CR and lone surrogates are not XML characters:
# libxml2 stops or drops text at them.
_UNPARSEABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# What a crude look at the source counts as text: outside tags, scripts and styles.
_SOURCE_NOISE = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.IGNORECASE | re.DOTALL)


class Anchor(NamedTuple):
    """One ``<a href>`` (or ``<area href>``): the raw href and where its text sits.

    ``start`` and ``end`` index the document's token list: the anchor's words are
    ``tokens[start:end]`` (alt text of images inside the anchor included), its first
    words up to ``LINK_TEXT_MAX_CHARS`` joined.
    """

    href: str
    start: int
    end: int


@dataclass(slots=True)
class CanonicalDocument:
    """A parsed page: canonical tokens, title, anchors and the ``<base href>`` if any.

    ``tree`` is the parsed document (scripts and styles still in it) for the markup pass
    of the spam detector; ``unparsed`` is true when a non-blank body gave no tree, or no
    words although its source has text (module docstring). ``words`` are the word runs
    before CJK runs are cut into bigrams (the same list as ``tokens`` on a page without
    CJK): what the spam detector's size and compression measures count.
    """

    tokens: list[str] = field(default_factory=list)
    title: str = ""
    anchors: list[Anchor] = field(default_factory=list)
    base_href: str | None = None
    meta_refresh: str | None = None
    #: Token index where each block-level element's text begins (ascending, first 0):
    #: the units a boilerplate filter keeps or drops.
    block_starts: list[int] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    tree: etree._Element | None = field(default=None, repr=False, compare=False)
    unparsed: bool = False
    #: Where each token starts in the tokens joined by spaces, then that length plus one:
    #: ``tokens[a:b]`` joined has ``offsets[b] - offsets[a] - 1`` characters.
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False, compare=False)

    def blocks(self) -> list[list[str]]:
        """The tokens of each non-empty block, in document order."""
        bounds = [*self.block_starts, len(self.tokens)]
        return [self.tokens[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]

    def anchor_text(self, anchor: Anchor) -> str:
        return " ".join(self.tokens[anchor.start : anchor.end])

    def window_before(self, anchor: Anchor, width: int = WINDOW) -> str:
        return next(self.link_texts([anchor], width))[1]

    def window_after(self, anchor: Anchor, width: int = WINDOW) -> str:
        return next(self.link_texts([anchor], width))[2]

    def link_texts(self, anchors: Sequence[Anchor], width: int = WINDOW) -> Iterator[tuple[str, str, str]]:
        """(anchor text, window before, window after) of each of ``anchors``: ``width``
        words either side, as many whole words as fit in ``LINK_TEXT_MAX_CHARS``."""
        if not anchors:
            return
        starts, ends = np.array([(a.start, a.end) for a in anchors], dtype=np.int64).T
        lows = np.maximum(starts - width, _fitting_start(self.offsets, starts)).tolist()
        highs = np.minimum(ends + width, _fitting_end(self.offsets, ends)).tolist()
        tokens = self.tokens
        for a, b, lo, hi in zip(starts.tolist(), ends.tolist(), lows, highs):
            yield " ".join(tokens[a:b]), " ".join(tokens[lo:a]), " ".join(tokens[b:hi])


def _fitting_start(offsets: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per token index in ``ends``, the first of the most words before it whose joined
    length (``offsets[b] - offsets[a] - 1``) fits in ``LINK_TEXT_MAX_CHARS``."""
    return np.searchsorted(offsets, offsets[ends] - LINK_TEXT_MAX_CHARS - 1, side="left")


def _fitting_end(offsets: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per token index in ``starts``, the end of the most words from it that fit."""
    return np.searchsorted(offsets, offsets[starts] + LINK_TEXT_MAX_CHARS + 1, side="right") - 1


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _bigrams(piece: str, start: int, tokens: list[str], starts: list[int]) -> None:
    """Append the bigrams of the CJK run ``piece`` found at offset ``start`` (a lone
    character as itself)."""
    if len(piece) == 1:
        tokens.append(piece)
        starts.append(start)
    else:
        tokens.extend([piece[i : i + 2] for i in range(len(piece) - 1)])
        starts.extend(range(start, start + len(piece) - 1))


def _segment(text: str, cuts: np.ndarray | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(tokens, words, token start offsets) of normalised ``text``; CJK runs in bigrams,
    cut at the sorted character offsets ``cuts`` too."""
    if not _HAS_CJK.search(text):
        words = _WORD.findall(text)
        return words, words, _token_starts(text, words)
    runs = [(match.start(), match.group()) for match in _RUN.finditer(text)]
    words = [run for _, run in runs]
    run_starts = np.fromiter((start for start, _ in runs), dtype=np.int64, count=len(runs))
    run_ends = run_starts + np.fromiter(map(len, words), dtype=np.int64, count=len(runs))
    cuts = np.zeros(0, np.int64) if cuts is None else cuts
    first_cut = np.searchsorted(cuts, run_starts, side="right").tolist()
    last_cut = np.searchsorted(cuts, run_ends, side="left").tolist()
    tokens: list[str] = []
    starts: list[int] = []
    for (start, run), lo, hi in zip(runs, first_cut, last_cut):
        if not _HAS_CJK.match(run):
            tokens.append(run)
            starts.append(start)
            continue
        bounds = [start, *cuts[lo:hi].tolist(), start + len(run)]
        for a, b in zip(bounds, bounds[1:]):
            _bigrams(run[a - start : b - start], a, tokens, starts)
    return tokens, words, np.asarray(starts, dtype=np.int64)


def tokenize(text: str) -> list[str]:
    """Canonical tokens of plain text (NFKC, lowercase, ``\\w+`` runs, CJK bigrams)."""
    return _segment(_normalise(text))[0]


def decode_html(body: bytes, encoding: str | None = None) -> str:
    """``body`` as text: in ``encoding`` when given (undecodable bytes replaced), else
    as a browser would read it (BOM, XML declaration, meta charset, then UTF-8 or
    Windows-1252)."""
    if encoding:
        try:
            return body.decode(encoding, errors="replace")
        except LookupError:
            pass
    return html_to_unicode(None, body)[1]


def _clean(html: str) -> str:
    return _UNPARSEABLE.sub(" ", html) if _UNPARSEABLE.search(html) else html


def parse_html(html: str | bytes, encoding: str | None = None) -> etree._Element | None:
    """The parsed tree of ``html``, or None for a blank or unparseable body.

    ``bytes`` are decoded with ``encoding`` (see :func:`decode_html`); the text is then
    handed to lxml as UTF-8 bytes with that encoding stated (module docstring).
    """
    text = _clean(html if isinstance(html, str) else decode_html(html, encoding))
    if not text.strip():
        return None
    # huge_tree: libxml2 otherwise drops text nodes over 10 MB and the page comes out empty.
    parser = etree.HTMLParser(
        encoding="utf-8", remove_comments=True, remove_pis=True, recover=True, huge_tree=True
    )
    try:
        return etree.fromstring(text.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError):
        return None


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
        self.skipped = 0  # depth inside elements whose content is not text

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
        if self.skipped or tag in _DROPPED:
            self.skipped += 1
            return
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
        if self.skipped:
            self.skipped -= 1
            if self.skipped:
                return
        else:
            tag = el.tag if isinstance(el.tag, str) else ""
            if tag in ("a", "area") and self.open_anchors and el.get("href") is not None:
                ordinal, href, begin = self.open_anchors.pop()
                self.anchor_spans.append((ordinal, href, begin, self.length))
            if tag not in _INLINE:
                self.separate()
        self.add(el.tail)


def _token_starts(text: str, tokens: list[str]) -> np.ndarray:
    """Character offset of each token, from the gaps between tokens (C-speed passes only)."""
    if not tokens:
        return np.empty(0, dtype=np.int64)
    gaps = _WORD.split(text)
    gap_lengths = np.fromiter(map(len, gaps), dtype=np.int64, count=len(gaps))
    token_lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    starts = np.cumsum(gap_lengths[:-1])
    starts[1:] += np.cumsum(token_lengths[:-1])
    return starts


def _has_source_text(html: str | bytes) -> bool:
    """Whether the source has words outside tags, scripts, styles and comments."""
    text = html if isinstance(html, str) else html.decode("utf-8", errors="replace")
    return len(_WORD.findall(_SOURCE_NOISE.sub(" ", text))) >= UNPARSED_MIN_WORDS


def canonical_document(html: str | bytes, encoding: str | None = None) -> CanonicalDocument:
    """Parse ``html`` once into its canonical tokens, title, anchors and base href.

    ``str`` is taken as decoded; ``bytes`` are decoded with ``encoding`` (Scrapy's
    ``response.encoding``) or detected (:func:`decode_html`). Never raises on bad input:
    an empty, binary or unparseable body gives a document without tokens, with
    ``unparsed`` set when the body had text (module docstring).
    """
    root = parse_html(html, encoding)
    if root is None:
        return CanonicalDocument(unparsed=bool(html.strip()) and _has_source_text(html))
    walker = _Walker()
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            walker.start(el)
        else:
            walker.end(el)
    text = "".join(walker.parts)
    # Anchors close in the order of their ends; report them in the order they open.
    spans = sorted(walker.anchor_spans)
    chars = np.array([(b, e) for _, _, b, e in spans], dtype=np.int64).reshape(-1, 2)
    tokens, words, starts = _segment(text, np.unique(chars))
    block_starts = np.unique(np.searchsorted(starts, np.asarray(walker.block_chars, dtype=np.int64))).tolist() if tokens else []
    offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) + 1, out=offsets[1:])
    anchors: list[Anchor] = []
    if spans:
        first = np.searchsorted(starts, chars[:, 0], side="left")
        stop = np.searchsorted(starts, chars[:, 1], side="left")
        # An anchor's text is its first words that fit (nested anchors each hold all the text after them).
        stop = np.minimum(stop, _fitting_end(offsets, first))
        anchors = [Anchor(s[1].strip(), b, e) for s, b, e in zip(spans, first.tolist(), stop.tolist())]
    return CanonicalDocument(
        tokens=tokens,
        title=walker.title,
        anchors=anchors,
        base_href=walker.base_href,
        meta_refresh=walker.meta_refresh,
        block_starts=[0, *(b for b in block_starts if 0 < b < len(tokens))],
        words=words,
        tree=root,
        unparsed=not tokens and not anchors and _has_source_text(html),
        offsets=offsets,
    )


def canonical_tokens(html: str | bytes, encoding: str | None = None) -> list[str]:
    """The canonical token sequence of ``html`` (see the module docstring)."""
    return canonical_document(html, encoding).tokens


def content_bag(tokens: list[str]) -> list[str]:
    """The tokens with stopwords and one-character words removed, order kept."""
    return [t for t in tokens if len(t) > 1 and t not in STOPWORDS]
