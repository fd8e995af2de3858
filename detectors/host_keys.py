"""Host keys: the name a crawled host is filed under, and its hostname.

A host key is a URL's netloc with the default port dropped: "example.org",
"example.org:8080", "[2001:db8::1]:8080" (``mirrorscope.crawler.hosts.host_key`` makes
them from URLs). Budgets, registrable domains, host-name features and the sandbox's
ground truth speak of the hostname alone; ``strip_port`` is the one place that drops
the port, so that an IPv6 literal, whose address is full of colons, stays whole.
"""

from __future__ import annotations

__all__ = ["strip_port"]


def strip_port(host_key: str) -> str:
    """The hostname of a host key: "a.org:8080" -> "a.org", "[::1]:8080" -> "::1".

    A bare IPv6 address ("::1") has more than one colon and no port, and stays whole.
    """
    if host_key.startswith("["):  # an IPv6 literal
        return host_key[1 : host_key.find("]")] if "]" in host_key else host_key[1:]
    return host_key.rsplit(":", 1)[0] if host_key.count(":") == 1 else host_key
