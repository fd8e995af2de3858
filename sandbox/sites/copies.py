"""Copies of a site that are mirrors without being byte-identical.

`repackage` wraps every page in another site's chrome (a content scraper),
`reserialise` parses every page and writes it out again (re-indented,
comments gone, attributes in another order, scripts added), `stale_copy`
keeps an old state of the site (some pages edited since, some missing) and
`renamed_copy` moves every page to a new path, its links rewritten, and
`repost` lifts the main text of a few pages into a site of its own (content
reuse that must not make two hosts mirrors).
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree
from w3lib.encoding import html_to_unicode

from ..markup import escape
from ..model import Resource
from ..truth import is_html_type

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.S | re.I)
_BODY_START = re.compile(rb"<body[^>]*>\n?", re.I)
_BODY_END = re.compile(rb"\n?</body>", re.I)
_PLAIN_PARAGRAPH = re.compile(rb"<p>([^<]{120,})</p>")


def is_html(resource: Resource) -> bool:
    return resource.status == 200 and is_html_type(resource.content_type)


def split_page(body: bytes) -> tuple[str, str]:
    """(title, body markup) of a UTF-8 page; the title unescaped.

    The markup is everything between ``<body ...>`` and the last ``</body>``,
    less one newline on each side: for a page written by `markup.document`,
    exactly what was put in.
    """
    title, start = _TITLE.search(body), _BODY_START.search(body)
    ends = list(_BODY_END.finditer(body, start.end() if start else 0))
    if title is None or start is None or not ends:
        raise ValueError("no <title> or no <body> element")
    return html.unescape(title.group(1).decode()), body[start.end() : ends[-1].start()].decode()


# -- repackaged ------------------------------------------------------------------


def repackage(
    resources: dict[str, Resource],
    title: Callable[[str], str],
    frame: Callable[[str], str],
) -> dict[str, Resource]:
    """Every page of a site with its title rewritten by `title` and its body wrapped by `frame`.

    The original body, links included, is kept whole inside the new chrome, so
    the copy serves the original's paths and its text plus the wrapper's.
    Other resources (robots.txt) are copied unchanged.
    """
    copy = {}
    for path, resource in resources.items():
        if not is_html(resource):
            copy[path] = resource
            continue
        old_title, inner = split_page(resource.body)
        body = (
            "<!DOCTYPE html>\n"
            '<html lang="en-GB">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title(old_title))}</title>\n</head>\n<body>\n{frame(inner)}\n</body>\n</html>\n"
        )
        copy[path] = replace(resource, body=body.encode())
    return copy


# -- re-serialised -----------------------------------------------------------------

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"})
_RAW = frozenset({"script", "style"})
# Containers whose content, when it is elements only, is laid out one child per line.
_BLOCK = frozenset(
    {"html", "head", "body", "div", "header", "footer", "main", "nav", "aside", "section", "article",
     "ul", "ol", "dl", "table", "thead", "tbody", "tr", "form"}
)


def _open_tag(element: etree._Element) -> str:
    # Attributes in reverse order, always double-quoted, names as parsed.
    attributes = "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in reversed(element.items()))
    return f"<{element.tag}{attributes}>"


def _serialise(element: etree._Element, depth: int, out: list[str], pretty: bool) -> None:
    """Append `element` (not its tail) to `out`; comments and processing instructions vanish."""
    if not isinstance(element.tag, str):
        return
    tag = element.tag
    out.append(_open_tag(element))
    if tag in _VOID:
        return
    if tag in _RAW:
        out.append(element.text or "")
        out.append(f"</{tag}>")
        return
    children = list(element)
    element_only = (
        pretty
        and tag in _BLOCK
        and not (element.text or "").strip()
        and all(not (c.tail or "").strip() for c in children)
    )
    if element_only:
        for child in children:
            if isinstance(child.tag, str):
                out.append("\n" + "  " * (depth + 1))
                _serialise(child, depth + 1, out, pretty)
        out.append("\n" + "  " * depth)
    else:
        out.append(html.escape(element.text or "", quote=False))
        for child in children:
            _serialise(child, depth + 1, out, pretty and tag != "pre")
            out.append(html.escape(child.tail or "", quote=False))
    out.append(f"</{tag}>")


def reserialise_page(body: bytes, scripts: Iterable[tuple[str, str]] = ()) -> bytes:
    """The page parsed and written out again: same text and links, no byte in the same place.

    `scripts` are (src, inline code) pairs: a non-empty src is added to the
    head as an external script, inline code as a script at the end of the body.
    """
    document = lxml.html.document_fromstring(body)
    head, page = document.find("head"), document.find("body")
    for src, code in scripts:
        if src:
            etree.SubElement(head, "script", {"src": src, "defer": "defer"})
        if code:
            etree.SubElement(page, "script").text = code
    out = ["<!doctype html>\n"]
    _serialise(document, 0, out, pretty=True)
    out.append("\n")
    return "".join(out).encode()


def reserialise(resources: dict[str, Resource], scripts: Callable[[str], Iterable[tuple[str, str]]]) -> dict[str, Resource]:
    """Every HTML page re-serialised (`scripts(path)` says which scripts to add); the rest copied."""
    return {
        path: replace(r, body=reserialise_page(r.body, scripts(path))) if is_html(r) else r
        for path, r in resources.items()
    }


# -- stale -----------------------------------------------------------------------------


def stale_copy(
    resources: dict[str, Resource],
    rng: random.Random,
    paragraph: Callable[[], str],
    missing: float,
    edited: float,
    keep: Callable[[str], bool] = lambda path: path.endswith("/"),
) -> tuple[dict[str, Resource], list[str], list[str]]:
    """An old copy of a site: about `missing` of its item pages absent, `edited` of the rest with one paragraph different.

    Pages `keep` accepts (front and index pages: paths ending in "/") and
    robots.txt are always kept unchanged so the copy stays navigable; links to
    missing pages 404 there. Returns (copy, missing paths, edited paths).
    """
    copy: dict[str, Resource] = {}
    gone: list[str] = []
    changed: list[str] = []
    for path, resource in sorted(resources.items()):
        if not is_html(resource) or keep(path):
            copy[path] = resource
            continue
        if rng.random() < missing:
            gone.append(path)
            continue
        candidates = list(_PLAIN_PARAGRAPH.finditer(resource.body))
        if candidates and rng.random() < edited:
            target = rng.choice(candidates)
            new = f"<p>{paragraph()}</p>".encode()
            body = resource.body[: target.start()] + new + resource.body[target.end() :]
            copy[path] = replace(resource, body=body)
            changed.append(path)
        else:
            copy[path] = resource
    return copy, gone, changed


# -- reposted ----------------------------------------------------------------------------

_HREF = re.compile(r'href="([^"#][^"]*)"')


def main_of(body: bytes, start: str, end: str) -> str:
    """The markup between the first `start` and the following `end` of a page."""
    text = body.decode()
    first = text.index(start) + len(start)
    return text[first : text.index(end, first)]


def absolutise(markup: str, base: Callable[[str], str]) -> str:
    """`markup` with every non-fragment href passed through `base` (e.g. made absolute on the original host)."""
    return _HREF.sub(lambda m: f'href="{escape(base(html.unescape(m.group(1))))}"', markup)


# -- renamed ---------------------------------------------------------------------------


def renamed_copy(resources: dict[str, Resource], rename: Callable[[str], str]) -> tuple[dict[str, Resource], dict[str, str]]:
    """A copy whose pages moved to new paths (`rename(path)`; "/" stays out, it is an alias
    of the start page) with their links among each other rewritten to match, as a site
    imported into another CMS keeps its text and its links but not its URLs; its other
    files keep their paths. Returns the copy and the map of old page paths to new ones."""
    moved = {path: rename(path) for path, r in resources.items() if is_html(r) and path != "/"}
    copy = {path: r for path, r in resources.items() if not is_html(r)}
    for path, new in moved.items():
        page = resources[path]
        # The page's own encoding (header, meta or XML declaration): lxml alone takes bytes without a meta as Latin-1.
        encoding, _ = html_to_unicode(page.content_type, page.body)
        document = lxml.html.document_fromstring(page.body, parser=lxml.html.HTMLParser(encoding=encoding))

        def relink(href: str, base: str = path) -> str:
            target, _, fragment = urljoin(base, href).partition("#")
            if urlsplit(target).netloc or not target.startswith("/"):
                return href  # another site's link, or not a link to a path (mailto:)
            found = moved.get(target, target if target in resources else None)
            return href if found is None else found + (f"#{fragment}" if fragment else "")

        document.rewrite_links(relink, resolve_base_href=False)
        document.find("head").insert(0, etree.Element("meta", charset="utf-8"))  # written out as UTF-8, said so
        copy[new] = replace(page, body=lxml.html.tostring(document, encoding="utf-8", doctype="<!DOCTYPE html>"))
    return copy, moved
