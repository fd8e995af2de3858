"""Downloader middlewares applied before anything is fetched: redirect loops, the host policy, robots.txt,
and redirects to URLs the frontier refuses."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.exceptions import CannotResolveHostError, DownloadConnectionRefusedError, IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.hosts import is_private_address
from mirrorscope.crawler.resolver import REFUSED

if TYPE_CHECKING:
    from mirrorscope.crawler.frontier import FrontierPolicy

logger = logging.getLogger(__name__)


class RefusedRequest(IgnoreRequest):
    """A request the host policy will not send; ``outcome`` names why. ``host_wide``: the
    outcome was decided for the whole host and logged once for it."""

    def __init__(self, outcome: str, message: str, *, host_wide: bool = False):
        super().__init__(message)
        self.outcome = outcome
        self.host_wide = host_wide


class RedirectRefused(RefusedRequest):
    """A redirect to a URL the frontier refuses; ``redirected`` is the request Scrapy
    built for it, which carries the chain (``redirect_urls``, ``redirect_reasons``)."""

    def __init__(self, redirected: Request, reason: str):
        super().__init__("redirect", f"redirect target refused by the frontier: {reason}")
        self.redirected = redirected


class FrontierRedirectMiddleware(RedirectMiddleware):
    """Scrapy's redirect middleware, which asks the frontier before following.

    Scrapy hands the target to the scheduler, and a target the frontier refuses there (a
    trap such as a 10,000-character ``Location``, a blocked host, a spent budget) was
    dropped with nobody left to record the URL that redirected. Here the request fails
    with :class:`RedirectRefused` instead, and the spider records its chain. Requests
    fetched outside the frontier (robots.txt's, marked ``NO_CALLBACK``: the engine follows
    their redirects itself) are not asked about.
    """

    policy: FrontierPolicy | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "FrontierRedirectMiddleware":
        middleware = super().from_crawler(crawler)
        if crawler.settings.getbool("FRONTIER_ADMISSION"):  # else the queue admits all
            middleware.policy = CrawlContext.of(crawler).policy
        return middleware

    def _redirect(self, redirected: Request, request: Request, reason: Any) -> Request:
        redirected = super()._redirect(redirected, request, reason)
        if self.policy is not None and request.callback is not NO_CALLBACK:
            refusal = self.policy.request_refusal(redirected)
            if refusal is not None:
                raise RedirectRefused(redirected, refusal)
        return redirected


class RedirectLoopMiddleware:
    """Refuses a redirect back to a URL its chain has already fetched.

    Cookies are off (``COOKIES_ENABLED``), so the same request gets the same answer: going
    round a loop until ``REDIRECT_MAX_TIMES`` only spends fetches (six per URL of a
    two-URL loop at 5) on a host that is often slow too. The request fails with outcome
    ``redirect-loop``, counted in ``mirrorscope/redirect_loops_cut``.
    """

    def __init__(self, stats: Any):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RedirectLoopMiddleware":
        return cls(crawler.stats)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        chain = request.meta.get("redirect_urls")
        if chain and request.url in chain:
            self.stats.inc_value("mirrorscope/redirect_loops_cut")
            raise RefusedRequest("redirect-loop", f"redirect loop: back to {request.url} after {len(chain)} redirects")
        return None


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
        hosts = CrawlContext.of(crawler).hosts
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


#: Byte-order marks of the encodings a robots.txt is found in besides UTF-8 (longest first:
#: UTF-32's little-endian mark starts with UTF-16's).
_ROBOTS_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)


def robots_text(body: bytes) -> bytes:
    """``body`` as UTF-8, from the encoding its byte-order mark names or, without one, from
    UTF-16 when every other byte of its start is NUL (as ASCII rules in UTF-16 are)."""
    for bom, encoding in _ROBOTS_BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(encoding, errors="replace").encode("utf-8")
    start = body[:64]
    if len(start) >= 4 and start.count(0) * 2 >= len(start) - 1:
        encoding = "utf-16-be" if start[0] == 0 else "utf-16-le"
        return body.decode(encoding, errors="replace").encode("utf-8")
    return body


class EncodedRobotParser(ProtegoRobotParser):
    """Scrapy's Protego parser for a robots.txt in UTF-16 or UTF-32 as well.

    RFC 9309 asks for UTF-8 and Scrapy decodes UTF-8, ignoring what is not: a file saved
    as "Unicode" by a Windows editor then reads as NUL-separated letters, no rule
    parses, and everything is allowed, ``Disallow: /`` included. Other single-byte
    encodings keep their ASCII rules under Scrapy's reading (only non-ASCII path bytes
    drop out), so they are left to it."""

    def __init__(self, robotstxt_body: bytes, spider: Spider | None):
        super().__init__(robots_text(robotstxt_body), spider)


class _Unreachable:
    """The robots.txt of a host that could not be read: nothing is allowed, and the
    host's URLs get ``outcome``."""

    def __init__(self, reason: str, outcome: str):
        self.reason = reason
        self.outcome = outcome

    def allowed(self, url: str, user_agent: str | bytes) -> bool:
        return False


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's robots.txt middleware with RFC 9309's rule for an unreachable file.

    Scrapy allows everything when robots.txt cannot be fetched (a timeout, a reset, a
    5xx answer parsed as rules). RFC 9309 (section 2.3.1.4) says a crawler MUST then
    assume complete disallow: a server too loaded to serve robots.txt is the last one to
    crawl. 429 counts as unreachable as well (the server asks to be left alone); other
    4xx answers mean no rules, as in Scrapy. A robots.txt that answered but cannot be read
    is unreachable too: Scrapy allows everything when a downloader middleware throws the
    answer away, and a gzip robots.txt that inflates past ``DOWNLOAD_MAXSIZE`` may well
    start with ``Disallow: /`` (so may one at the end of more than ``REDIRECT_MAX_TIMES``
    redirects, which RFC 9309 lets a crawler take for no rules). The host's URLs are
    recorded with the outcome ``robots-unreachable`` for the rest of this run; a resumed
    run asks again.

    A host that refuses the connection for robots.txt has nothing listening: its URLs
    are recorded ``connection-refused``, with robots.txt's failure as the reason.

    A host whose name does not resolve is an ordinary outcome on the web, not an error:
    one INFO line for the host (Scrapy logs an ERROR with a traceback for each), its URLs
    recorded ``dns-error``, the hosts counted in ``mirrorscope/unresolvable_hosts``.
    """

    async def robot_parser(self, request: Request) -> Any:
        """Scrapy's, without its ERROR and traceback for a robots.txt that failed
        (:meth:`_robots_error` records the failure once per host), and with every request
        that waited for the file getting its rules.

        Scrapy hands each waiting request the host's Deferred as an asyncio Future, and
        Twisted's ``Deferred.asFuture`` consumes the result: the first waiter got the
        parser, every later one None, which Scrapy reads as "no robots.txt, allow all".
        Three requests of a host waiting for its robots.txt were enough to fetch a
        disallowed URL, as a resumed crawl's frontier (many URLs of a host at once) did."""
        netloc = urlparse_cached(request).netloc
        if netloc not in self._parsers:
            self._parsers[netloc] = Deferred()
            robots = Request(
                f"{urlparse_cached(request).scheme}://{netloc}/robots.txt", priority=self.DOWNLOAD_PRIORITY,
                meta={"dont_obey_robotstxt": True}, callback=NO_CALLBACK,
            )
            try:
                response = await self.crawler.engine.download_async(robots)
                await self._parse_robots(response, netloc, request)
            except Exception as exc:  # every failure is an outcome of the host's URLs
                self._robots_error(exc, netloc)
            self._stats.inc_value("robotstxt/request_count")
        parser = self._parsers[netloc]
        if isinstance(parser, Deferred):
            await maybe_deferred_to_future(parser)
            # Settled before the Deferred fired (Scrapy's _parse_robots, _settle).
            parser = self._parsers[netloc]
        return parser

    async def _parse_robots(self, response: Any, netloc: str, request: Request) -> None:
        if response.status >= 500 or response.status == 429:
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            self._unreachable(netloc, f"HTTP {response.status}")
            return
        await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        if isinstance(exc, RefusedRequest):  # refused by the host policy: nothing was asked
            super()._robots_error(exc, netloc)
            return
        self._stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        if REFUSED in reason:  # the resolver refused a private address, and said so once
            self._settle(netloc, _Unreachable(reason, "refused-private"))
            return
        if isinstance(exc, (CannotResolveHostError, DNSLookupError)):
            logger.info("%s does not resolve: its URLs are recorded dns-error (%s)", netloc, reason)
            self._stats.inc_value("mirrorscope/unresolvable_hosts")
            self._settle(netloc, _Unreachable(reason, "dns-error"))
            return
        if isinstance(exc, DownloadConnectionRefusedError):  # nothing listens: its pages would be refused too
            self._unreachable(netloc, reason, "connection-refused")
            return
        self._unreachable(netloc, reason)

    def _unreachable(self, netloc: str, reason: str, outcome: str = "robots-unreachable") -> None:
        logger.warning("robots.txt of %s unreachable (%s): its URLs are not fetched in this run", netloc, reason)
        self._stats.inc_value("mirrorscope/robots_unreachable")
        self._settle(netloc, _Unreachable(reason, outcome))

    def _settle(self, netloc: str, parser: _Unreachable) -> None:
        waiting = self._parsers[netloc]
        self._parsers[netloc] = parser
        waiting.callback(parser)

    def process_request_2(self, rp: Any, request: Request) -> None:
        if isinstance(rp, _Unreachable):
            self._stats.inc_value("robotstxt/forbidden")
            prefix = "" if rp.outcome == "dns-error" else "robots.txt unreachable: "
            raise RefusedRequest(rp.outcome, prefix + rp.reason, host_wide=True)
        super().process_request_2(rp, request)
