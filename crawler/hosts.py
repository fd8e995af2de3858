"""Host names, addresses and URLs as the crawl sees them."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
import re
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

import tldextract
from w3lib.url import safe_url_string

from mirrorscope.storage.storable import cut_to

# The suffix list bundled with tldextract: no network access, ever.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _kept_by_scrapy() -> str:
    """The printable ASCII characters that Scrapy's requests (w3lib's ``safe_url_string``)
    keep as they are both in a path and in a query: asked of w3lib, not written here,
    because a link must have the form its page gets once fetched. ('[', ']' and a
    query's "'" are escaped there: links that kept them never matched their pages.)"""
    probes = ((c, f"http://a.test/{c}?{c}") for c in map(chr, range(0x21, 0x7F)))
    return "".join(c for c, url in probes if safe_url_string(url) == url)


# Characters a URL may hold unescaped; anything else is percent-encoded as Scrapy would.
_SAFE = re.compile(f"[{re.escape(_kept_by_scrapy())}]*")
# WHATWG's C0 control or space.
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
# WHATWG's forbidden host code points (':' stays: urllib gives an IPv6 literal's host unbracketed).
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#/<>?@\[\\\]^|\x7f]")


class HostsFileError(Exception):
    """A hosts file that cannot be read; the message is one line."""


def read_hosts_file(path: str | Path) -> dict[str, str]:
    """Name -> address from a file in /etc/hosts format (first address wins per name)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise HostsFileError(f"cannot read hosts file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise HostsFileError(f"cannot read hosts file {path}: not UTF-8 text (byte {exc.start})") from None
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            ipaddress.ip_address(fields[0])
        except ValueError:
            raise HostsFileError(f"{path}:{number}: {fields[0]!r} is not an IP address") from None
        for name in fields[1:]:
            mapping.setdefault(name.lower(), fields[0])
    return mapping


def is_private_address(address: str) -> bool:
    """True for loopback, private, link-local, reserved and unspecified addresses."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return not ip.is_global or ip.is_multicast


@lru_cache(maxsize=65536)
def registrable_domain(hostname: str) -> str:
    """The registrable domain (eTLD+1) of ``hostname``, or the name itself when it has none."""
    parts = _EXTRACT(hostname)
    return parts.top_domain_under_public_suffix or hostname


def host_key(url: str) -> str | None:
    """The netloc a page is filed under: lowercase hostname, and port when not default."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme):
        return parts.hostname
    return f"{parts.hostname}:{port}"


def normalize_url(base: str, href: str, max_length: int = 2048) -> str | None:
    """Absolute http(s) URL of ``href`` on ``base`` without fragment; None when not crawlable.

    Scheme and host are lowercased, a default port dropped and unsafe characters
    percent-encoded (as Scrapy does to a request's URL), so one page has one URL, the same
    as a link and as a page. A URL longer than ``max_length`` comes back cut to it
    (``storage.storable.cut_to``: its start and a hash of the whole), the form in which it
    is recorded and never fetched (``is_cut``).
    Resolutions are cached by the base's directory: documentation-like pages repeat the
    same hrefs on every page, and urllib's parsing was most of the crawl's CPU.
    """
    # Whitespace around the whole reference is dropped (as browsers do); inside it, before
    # a fragment too, it stays, and a host with a space in it is no host.
    href = href.strip()
    hash_at = href.find("#")
    if hash_at >= 0:  # fragments never change the page: drop them before the cache
        href = href[:hash_at] or "#"
    # Also a reference with a scheme: "http:" alone means the base page itself to urljoin.
    if href[:1] in ("?", "#", "") or ":" in href.split("/", 1)[0]:
        return _normalize(base, href, max_length)
    return _normalize(base[: base.rfind("/") + 1] or base, href, max_length)


@lru_cache(maxsize=4096)
def normalize_base(base: str) -> str | None:
    """``base`` as :func:`normalize_url` would return it (cached: bases repeat)."""
    return _normalize_general(base)


def url_host(url: str) -> str:
    """The host key of a URL that :func:`normalize_url` returned (its netloc)."""
    return url.split("/", 3)[2]


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for an absolute path."""
    output: list[str] = []
    for segment in path.split("/")[1:]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if path.endswith(("/.", "/..")):
        output.append("")
    return "/" + "/".join(output)


def _join_relative(base: str, href: str) -> str | None:
    """``href`` on an already normalised ``base`` without urllib, for the common case
    of a plain relative or absolute-path reference; None when the general path is needed."""
    if href.startswith("//") or ":" in href.split("/", 1)[0].split("?", 1)[0] or not _SAFE.fullmatch(href):
        return None
    href = href.split("#", 1)[0]
    origin_end = base.find("/", base.find("//") + 2)
    if origin_end < 0 or not href:
        return None
    origin = base[:origin_end]
    if href.startswith("/"):
        path_query = href
    elif href.startswith("?"):
        path_query = base[origin_end:].split("?", 1)[0] + href
    else:
        path_query = base[origin_end:].split("?", 1)[0].rsplit("/", 1)[0] + "/" + href
    path, sep, query = path_query.partition("?")
    if "/." in path:
        path = _remove_dot_segments(path)
    # An empty query is no query, as urlunsplit has it ("/p?" is "/p").
    return origin + _without_empty_params(path) + (sep + query if query else "")


def _without_empty_params(path: str) -> str:
    """``path`` less the empty parameters of its last segment ("/x;" is "/x"). urllib drops
    them in urljoin and urldefrag, but not when a reference has another scheme than its
    base or no fragment: done on every path, one page has one URL however it is linked."""
    if path.endswith(";") and path.find(";", path.rfind("/")) == len(path) - 1:
        return path[:-1]
    return path


# An absolute http(s) URL already in normal form but for its port: lowercase host.
_ABSOLUTE = re.compile(r"(https?)://([a-z0-9][a-z0-9.-]*)(?::([0-9]{1,5}))?(/[^?]*)?(?:\?(.*))?")


def _absolute(href: str) -> str | None:
    """``href`` normalised without urllib when it is a plain absolute URL (link farms and
    directories are mostly these); None when the general path is needed. urljoin leaves
    an absolute URL's dot segments alone, and so does this."""
    match = _ABSOLUTE.fullmatch(href)
    if match is None or not _SAFE.fullmatch(href):
        return None
    scheme, host, port, path, query = match.groups()
    if port is not None:
        number = int(port)
        if number > 65535:
            return None
        port = None if number == _DEFAULT_PORTS[scheme] else str(number)
    netloc = host if port is None else f"{host}:{port}"
    return f"{scheme}://{netloc}{_without_empty_params(path or '/')}" + (f"?{query}" if query else "")


@lru_cache(maxsize=1 << 17)
def _normalize(base: str, href: str, max_length: int) -> str | None:
    if base.startswith(("http://", "https://")) and base == normalize_base(base):
        joined = _join_relative(base, href)
        if joined is None:
            joined = _absolute(href)
        if joined is not None:
            return cut_to(joined, max_length)
    if not href or href.startswith(("javascript:", "mailto:", "data:", "tel:")):
        return None
    try:
        url = _normalize_general(urljoin(base, href))
    except ValueError:  # e.g. "Invalid IPv6 URL"
        return None
    return cut_to(url, max_length) if url is not None else None


def _normalize_general(url: str) -> str | None:
    """``url`` in normal form, by urllib and w3lib. What w3lib makes of a URL is normalised
    again, as a request for it would be; a URL that does not keep its form then is not
    crawlable (an IDNA mapping can put a space in a host name)."""
    form = _form(url)
    if form is None or form == url:
        return form
    return form if _form(form) == form else None


def _form(url: str) -> str | None:
    try:
        absolute, _ = urldefrag(url)
        parts = urlsplit(absolute)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or _FORBIDDEN_HOST.search(parts.hostname):
        return None
    if (stripped := absolute.rstrip(_C0_OR_SPACE)) != absolute:
        # w3lib drops them from a request's URL (as WHATWG does), which can leave an empty
        # query or parameter at the end: normalise the URL Scrapy will fetch.
        return _form(stripped)
    host = parts.hostname
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[parts.scheme] else f"{host}:{port}"
    url = urlunsplit((parts.scheme, netloc, _without_empty_params(parts.path or "/"), parts.query, ""))
    if not _SAFE.fullmatch(url):
        try:
            url = safe_url_string(url)
        except ValueError:  # w3lib's stricter host check: "http://[::1]@[é:"
            return None
    return url
