"""Downloader middlewares: the host policy applied before anything is fetched."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from crawler.hosts import is_private_address, read_hosts_file

logger = logging.getLogger(__name__)


class RefusedRequest(IgnoreRequest):
    """A request the host policy will not send; ``outcome`` names why."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


class HostPolicyMiddleware:
    """Refuses requests to private addresses known before resolution.

    IP literals and names mapped by ``HOSTS_FILE`` are checked here, so that a refused
    host is not even asked for robots.txt; names resolved by DNS are checked by
    :class:`crawler.resolver.StaticHostsResolver`. Refusals are logged once per host and
    counted in the ``mirrorscope/refused_private`` stat.
    """

    def __init__(self, hosts: dict[str, str], allow_private: bool, stats: Any):
        self.hosts = hosts
        self.allow_private = allow_private
        self.stats = stats
        self._logged: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "HostPolicyMiddleware":
        path = crawler.settings.get("HOSTS_FILE")
        hosts = read_hosts_file(path) if path else {}
        return cls(hosts, crawler.settings.getbool("ALLOW_PRIVATE_ADDRESSES"), crawler.stats)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self.allow_private:
            return None
        hostname = urlparse_cached(request).hostname or ""
        address = self.hosts.get(hostname, hostname)
        if is_private_address(address):
            self.stats.inc_value("mirrorscope/refused_private")
            if hostname not in self._logged:
                self._logged.add(hostname)
                logger.warning("refused %s: private address %s (set ALLOW_PRIVATE_ADDRESSES to crawl it)", hostname, address)
            raise RefusedRequest("refused-private", f"private address {address}")
        return None
