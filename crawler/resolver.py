"""Name resolution for the crawl: a static hosts file first, refusal of private addresses.

Scrapy installs the class named by ``TWISTED_DNS_RESOLVER`` on the reactor. A
``CrawlerRunner`` does not: code that runs crawls that way calls
:meth:`StaticHostsResolver.install_on_reactor` itself.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from mirrorscope.crawler.hosts import is_private_address, read_hosts_file

logger = logging.getLogger(__name__)

REFUSED = "refused private address"


class StaticHostsResolver(CachingThreadedResolver):
    """Resolves names from ``HOSTS_FILE`` (like curl's ``--resolve``), else by DNS
    (unless ``RESOLVE_ONLY_HOSTS_FILE``: then every other name fails without a query).

    Unless ``ALLOW_PRIVATE_ADDRESSES`` is true, a name that resolves to a private,
    loopback or link-local address fails with :class:`DNSLookupError` whose message
    starts with ``refused private address``, checked after resolution so that public
    names pointing inwards (DNS rebinding) are refused too.
    """

    def __init__(
        self, reactor: Any, cache_size: int, timeout: float, hosts: dict[str, str], allow_private: bool,
        stats: Any = None, hosts_only: bool = False,
    ):
        super().__init__(reactor, cache_size, timeout)
        self.hosts = hosts
        self.allow_private = allow_private
        self.stats = stats
        self.hosts_only = hosts_only

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> "StaticHostsResolver":
        settings = crawler.settings
        path = settings.get("HOSTS_FILE")
        hosts = read_hosts_file(path) if path else {}
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        return cls(
            reactor, cache_size, settings.getfloat("DNS_TIMEOUT"), hosts,
            settings.getbool("ALLOW_PRIVATE_ADDRESSES"), getattr(crawler, "stats", None),
            settings.getbool("RESOLVE_ONLY_HOSTS_FILE"),
        )

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred:
        mapped = self.hosts.get(name.lower())
        if mapped:
            result = defer.succeed(mapped)
        elif self.hosts_only:
            result = defer.fail(DNSLookupError(f"{name}: not in HOSTS_FILE (RESOLVE_ONLY_HOSTS_FILE)"))
        else:
            result = super().getHostByName(name, timeout)
        return result.addCallback(self._check, name)

    def _check(self, address: str, name: str) -> str:
        if not self.allow_private and is_private_address(address):
            if self.stats is not None:
                self.stats.inc_value("mirrorscope/refused_private")
            logger.warning("refused %s: it resolves to private address %s", name, address)
            raise DNSLookupError(f"{REFUSED}: {name} -> {address}")
        return address
