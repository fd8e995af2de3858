"""Host names, addresses and URLs as the crawl sees them."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

import tldextract

# The suffix list bundled with tldextract: no network access, ever.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
_DEFAULT_PORTS = {"http": 80, "https": 443}


class HostsFileError(Exception):
    """A hosts file that cannot be read; the message is one line."""


def read_hosts_file(path: str | Path) -> dict[str, str]:
    """Name -> address from a file in /etc/hosts format (first address wins per name)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise HostsFileError(f"cannot read hosts file {path}: {exc.strerror}") from None
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

    Scheme and host are lowercased and a default port dropped, so one page has one URL.
    """
    href = href.strip()
    if not href or href.startswith(("javascript:", "mailto:", "data:", "tel:")):
        return None
    try:
        absolute, _ = urldefrag(urljoin(base, href))
        parts = urlsplit(absolute)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or len(absolute) > max_length:
        return None
    netloc = parts.hostname if port is None or port == _DEFAULT_PORTS[parts.scheme] else f"{parts.hostname}:{port}"
    if ":" in parts.hostname:  # IPv6 literal
        netloc = f"[{parts.hostname}]" + (f":{port}" if port and port != _DEFAULT_PORTS[parts.scheme] else "")
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
