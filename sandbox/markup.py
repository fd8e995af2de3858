"""Small HTML helpers shared by the sandbox's site builders."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from html import escape as escape  # re-exported for the site builders

from .model import PORT_MARK, Resource
from .truth import is_html_type

# Real pages are rarely smaller once their chrome is counted, and tiny pages
# make shingle statistics meaningless.
MIN_PAGE_BYTES = 2048


def rel(source: str, target: str) -> str:
    """Relative href from the page at path `source` (query ignored) to `target`.

    `target` is an absolute path that may end in "/" (a directory page) and
    may carry a query or a fragment; relative links keep a copied site working
    wherever it is served, which is what makes mirrors possible.
    """
    source = source.split("?", 1)[0]
    cut = min((i for i in (target.find("?"), target.find("#")) if i >= 0), default=len(target))
    path, suffix = target[:cut], target[cut:]
    if path == source and suffix:
        return suffix
    relative = posixpath.relpath(path.rstrip("/") or "/", posixpath.dirname(source))
    if path.endswith("/"):
        relative = "./" if relative == "." else relative + "/"
    return relative + suffix


def ext(host: str, path: str = "/") -> str:
    """Absolute URL on another host of the world; the port is filled in when served."""
    return f"http://{host}{PORT_MARK}{path}"


def link(href: str, text: str) -> str:
    """An <a> element; `text` is escaped, `href` must already be a URL."""
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def items(entries: Iterable[str], tag: str = "ul", cls: str = "") -> str:
    """A list element around already-rendered entries."""
    attr = f' class="{cls}"' if cls else ""
    body = "".join(f"<li>{e}</li>" for e in entries)
    return f"<{tag}{attr}>{body}</{tag}>"


def document(title: str, body: str) -> bytes:
    """A complete UTF-8 HTML page."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    ).encode()


def html_resource(body: bytes) -> Resource:
    """A 200 text/html response."""
    return Resource(body=body)


def page_resource(title: str, main: str, frame: Callable[[str], str], more: Callable[[], str]) -> Resource:
    """A 200 HTML page of at least MIN_PAGE_BYTES.

    `frame` wraps the main content in the site's chrome; `more` writes one more
    paragraph, appended to the main content while the page is too small.
    """
    while True:
        body = document(title, frame(main))
        if len(body) >= MIN_PAGE_BYTES:
            return html_resource(body)
        main += f"<p>{more()}</p>"


def text_resource(text: str, content_type: str = "text/plain; charset=utf-8") -> Resource:
    """A 200 response with a text body."""
    return Resource(body=text.encode(), content_type=content_type)


def robots(*disallowed: str) -> Resource:
    """A robots.txt that disallows the given path prefixes to every agent."""
    rules = [f"Disallow: {p}" for p in disallowed] or ["Disallow:"]
    lines = ["User-agent: *", *rules]
    return text_resource("\n".join(lines) + "\n")


_ROOTED = re.compile(rb'((?:href|action|src)=")/(?!/)')


def under_prefix(resources: dict[str, Resource], prefix: str) -> dict[str, Resource]:
    """A copy of a site moved under `prefix`, rewriting root-relative links.

    This is what mirroring tools do (``wget --convert-links``): relative links
    survive the move untouched, links starting with "/" would escape the copy.
    """
    moved = {}
    replacement = rb"\1" + prefix.encode("ascii")
    for path, res in resources.items():
        moved[prefix + path[1:]] = replace(res, body=_ROOTED.sub(replacement, res.body)) if is_html_type(res.content_type) else res
    return moved
