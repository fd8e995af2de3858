"""The spider ``web``: a breadth-first crawl that records every page, link and outcome.

``scrapy crawl web -a seeds=FILE`` (one URL per line, ``#`` comments) or
``-a seeds=URL,URL``; ``-a max_pages=N`` bounds the pages fetched; ``-a allowed_hosts=``
(comma-separated names; subdomains included) bounds where links are followed;
``-a recrawl=1`` re-fetches the stored pages with conditional requests and records how
each changed (``crawler.recrawl``; seeds are then optional).

Links are filtered before any ``Request`` is built (a follow-all spider spends most of
its CPU building and de-duplicating requests for links it has seen already), and every
link is stored with its anchor text and the words either side.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response, TextResponse
from twisted.internet.error import (
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

from mirrorscope.crawler.context import CrawlContext, CrawlSetupError
from mirrorscope.crawler.hosts import HostsFileError, host_key, normalize_url, read_hosts_file, registrable_domain
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.middlewares import RedirectRefused, RefusedRequest
from mirrorscope.crawler.page_analysis import AnalysisOptions, PageAnalyser
from mirrorscope.crawler.recrawl import RECRAWL_META, conditional_headers
from mirrorscope.crawler.resolver import REFUSED
from mirrorscope.detectors.boilerplate import BoilerplateFilter
from mirrorscope.detectors.sketch import SCHEME
from mirrorscope.detectors.spam import SPAM_SCORE
from mirrorscope.settings.ranges import SettingsError, check_settings
from mirrorscope.storage.db import StoreError, resolve_database_url
from mirrorscope.storage.records import PageRecord
from mirrorscope.storage.rows import StoredVersionRow
from mirrorscope.storage.storable import is_cut
from mirrorscope.storage.store import Store

logger = logging.getLogger(__name__)


def read_seeds(value: str | None) -> list[str]:
    """Seed URLs from a file (one per line, ``#`` comments) or a comma-separated list."""
    if not value:
        raise CrawlSetupError("no seeds: give -a seeds=FILE or -a seeds=URL,URL")
    path = Path(value)
    if "://" in value and not path.exists():
        lines = value.split(",")
    else:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise CrawlSetupError(f"seeds file not found: {value}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CrawlSetupError(f"cannot read seeds file {value}: {exc}") from None
    seeds = []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        url = normalize_url("", text)
        if url is None:
            raise CrawlSetupError(f"not an http(s) URL in seeds: {text!r}")
        if is_cut(url):
            raise CrawlSetupError(f"a URL in seeds is longer than the crawl fetches: {text[:80]!r}...")
        seeds.append(url)
    if not seeds:
        raise CrawlSetupError(f"no URLs in seeds {value}")
    return list(dict.fromkeys(seeds))


def _positive_int(name: str, value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise CrawlSetupError(f"{name} must be a whole number, not {value!r}") from None
    if number <= 0:
        raise CrawlSetupError(f"{name} must be positive, not {number}")
    return number


SPIDER_ARGUMENTS = ("seeds", "max_pages", "allowed_hosts", "recrawl")


def _switch(name: str, value: Any) -> bool:
    """A spider argument that is on or off (``1``/``0``, ``true``/``false``, ``yes``/``no``)."""
    if value in (None, ""):
        return False
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise CrawlSetupError(f"{name} must be 1 or 0, not {value!r}")


def check_crawl_input(arguments: dict[str, Any], settings: Any) -> None:
    """Raise :class:`CrawlSetupError` for input the crawl cannot start with.

    Checked before Scrapy starts, so that a bad seeds file, option, hosts file or
    database URL is one line on stderr, not a traceback from inside the reactor.
    """
    unknown = sorted(set(arguments) - set(SPIDER_ARGUMENTS))
    if unknown:
        raise CrawlSetupError(f"unknown spider argument {unknown[0]!r}: expected one of {', '.join(SPIDER_ARGUMENTS)}")
    if not _switch("recrawl", arguments.get("recrawl")) or arguments.get("seeds"):
        read_seeds(arguments.get("seeds"))
    _positive_int("max_pages", arguments.get("max_pages"))
    try:
        check_settings(settings)
    except SettingsError as exc:
        raise CrawlSetupError(str(exc)) from None
    if settings.get("HOSTS_FILE"):
        try:
            read_hosts_file(settings.get("HOSTS_FILE"))
        except HostsFileError as exc:
            raise CrawlSetupError(str(exc)) from None
    if settings.get("FRONTIER_REDIS_URL"):
        from mirrorscope.crawler.shared import connect

        connect(settings.get("FRONTIER_REDIS_URL")).close()  # CrawlSetupError when it does not answer
    try:
        store = Store(resolve_database_url(None, settings.get("DATABASE_URL")))
    except StoreError as exc:
        raise CrawlSetupError(str(exc)) from None
    try:
        if _switch("recrawl", arguments.get("recrawl")) and not arguments.get("seeds") and not store.sketch_totals(SCHEME)[0]:
            raise CrawlSetupError("nothing to re-crawl: the store holds no HTML page (crawl from seeds first, or give seeds)")
    finally:
        store.close()


#: Outcomes decided for a whole host, which its own log line reports once: per URL
#: they are logged at DEBUG.
HOST_OUTCOMES = frozenset(("dns-error", "robots-unreachable", "refused-private"))

#: Outcomes of URLs refused before any request reached their server: they do not count
#: against ``max_pages``.
NOT_SENT = frozenset(("robots", "robots-unreachable", "dns-error", "refused-private", "mirrored-not-fetched", "blocked"))

_CONTROL_BYTES = bytes([*range(0, 9), *range(14, 32)])
_FAILURES: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((DownloadTimeoutError, TimeoutError, TCPTimedOutError), "timeout"),
    ((DownloadConnectionRefusedError, ConnectionRefusedError), "connection-refused"),
    ((CannotResolveHostError, DNSLookupError), "dns-error"),
    ((DownloadCancelledError,), "cancelled"),
    ((DownloadFailedError, ResponseDataLossError, ConnectionLost, ResponseFailed, ResponseNeverReceived), "connection-lost"),
)


def _looks_binary(body: bytes) -> bool:
    """True for bodies no HTML page has: many control bytes (a stray NUL in text is not).

    Random bytes are about 10% control bytes; text, even broken text, almost none.
    """
    head = body[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > len(head) * 0.05


def _header(response: Response, name: bytes) -> str | None:
    """A response header as text (cut to what the store keeps), None when absent."""
    value = response.headers.get(name)
    return value.decode("latin-1")[:255] if value else None


def body_fingerprint(body: bytes) -> int:
    """64-bit fingerprint of the raw body (byte-identical pages share it)."""
    return int.from_bytes(hashlib.blake2b(body, digest_size=8).digest(), "big")


#: Request meta key: body bytes received so far, counted on Scrapy's ``bytes_received``
#: signal. A body that no Content-Length announced is cut at DOWNLOAD_MAXSIZE by
#: cancelling its download, and the failure says no more than "cancelled".
BODY_BYTES = "mirrorscope_body_bytes"


def classify_failure(failure: Failure, maxsize: int) -> tuple[str, str]:
    """(outcome, one-line error) of a request that produced no response; ``maxsize`` is
    DOWNLOAD_MAXSIZE (a request's ``download_maxsize`` meta overrides it)."""
    exc = failure.value
    message = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
    if isinstance(exc, RefusedRequest):
        return exc.outcome, message
    if REFUSED in message:
        return "refused-private", message
    if "DOWNLOAD_MAXSIZE" in message or "download max size" in message:
        return "too-large", message
    meta = failure.request.meta  # type: ignore[attr-defined]
    limit = meta.get("download_maxsize", maxsize)
    if isinstance(exc, DownloadCancelledError) and limit and meta.get(BODY_BYTES, 0) > limit:
        return "too-large", f"body cut after {meta[BODY_BYTES]} bytes: larger than DOWNLOAD_MAXSIZE ({limit} bytes)"
    if isinstance(exc, IgnoreRequest):
        if "robots.txt" in message:
            return "robots", message
        if "redirect" in message.lower():
            return "redirect-loop", message
        return "ignored", message
    for kinds, outcome in _FAILURES:
        if isinstance(exc, kinds):
            return outcome, message
    return "error", f"{type(exc).__name__}: {message}"


class WebSpider(Spider):
    name = "web"

    def __init__(
        self, seeds: str | None = None, max_pages: Any = None, allowed_hosts: str | None = None, recrawl: Any = None, **kwargs: Any
    ):
        super().__init__(**kwargs)
        self.recrawl = _switch("recrawl", recrawl)
        # A re-crawl's start is the store; seeds, when given, are fetched too.
        self.seed_urls = read_seeds(seeds) if seeds or not self.recrawl else []
        self.max_pages = _positive_int("max_pages", max_pages)
        self.allowed_hosts = tuple(h.strip().lower().lstrip(".") for h in (allowed_hosts or "").split(",") if h.strip())
        self.seen: set[str] = set()
        self.scheduled = 0

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "WebSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        if spider.recrawl:
            # Read by the components built next (settings freeze after the spider is made).
            settings.set("RECRAWL", True, priority="spider")
            settings.set("MIRROR_DETECTION_ENABLED", False, priority="spider")
        spider.boilerplate = BoilerplateFilter() if settings.getbool("BOILERPLATE_REMOVAL") else None
        spider.depth_limit = settings.getint("DEPTH_LIMIT")
        spider.url_max_length = settings.getint("URL_MAX_LENGTH")
        spider.links_max = settings.getint("LINKS_PER_PAGE_MAX")
        spider.maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        spider.conditional = settings.getbool("RECRAWL_CONDITIONAL")
        crawler.signals.connect(spider.body_received, signal=signals.bytes_received)
        return spider

    @cached_property
    def analyser(self) -> PageAnalyser:
        """Parses pages in ``PARSE_PROCESSES`` worker processes (``crawler.page_analysis``);
        built at the first page, once the pipelines have said whether they score spam."""
        settings = self.crawler.settings
        options = AnalysisOptions(
            window=settings.getint("ANCHOR_WINDOW"), url_max_length=self.url_max_length, links_max=self.links_max,
            spam=self.context.spam_scoring, blocks=self.boilerplate is not None,
        )
        return PageAnalyser(settings.getint("PARSE_PROCESSES"), options, self.crawler.stats)

    # -- the run and its recovery -----------------------------------------------------

    def run_arguments(self) -> dict[str, Any]:
        """The spider's arguments as the crawl run records them."""
        return {"max_pages": self.max_pages, "allowed_hosts": list(self.allowed_hosts), "recrawl": self.recrawl}

    @cached_property
    def context(self) -> CrawlContext:
        """The crawl's shared state (store, run); built by Scrapy after the spider."""
        return CrawlContext.of(self.crawler)

    @property
    def store(self) -> Store:
        return self.context.store

    @property
    def run_id(self) -> int:
        return self.context.run_id

    @property
    def resumed(self) -> bool:
        return self.context.resumed

    async def start(self) -> AsyncIterator[Any]:
        if self.context.finished:
            return
        if self.resumed:
            # The store is the frontier's source of truth: what a killed process had
            # queued is every stored link whose target has no page yet.
            self.seen.update(self.store.fetched_urls(self.run_id))
            self.scheduled = len(self.seen)
        elif self.recrawl:
            for row in self.context.stored_versions:
                yield self._recrawl_request(row)
        for url in self.seed_urls:
            request = self._request(url, 0)
            if request is not None:
                yield request
        if self.resumed:
            for url, depth in self._stored_frontier():
                if self._follows(url, depth):
                    request = self._request(url, depth)
                    if request is not None:
                        yield request

    def forget(self, url: str) -> None:
        """``url``'s request was dropped by the frontier: it may be requested again."""
        if url in self.seen:
            self.seen.discard(url)
            self.scheduled -= 1

    def unfetched(self) -> Iterator[tuple[str, int]]:
        """Stored link targets of this run not yet requested, with their depth: the URLs a
        frontier dropped when it was full, parked in the store."""
        for url, depth in self._stored_frontier():
            if url not in self.seen and self._follows(url, depth):
                yield url, depth

    def _stored_frontier(self) -> list[tuple[str, int]]:
        """The stored links without a page, but those the crawl does not follow: the links
        of duplicates (unless ``EXPAND_DUPLICATES``) and those of spam pages but the one to
        their own host that the live gate follows (``crawler.spam``)."""
        settings = self.crawler.settings
        spam = SPAM_SCORE if settings.getbool("SPAM_DETECTION_ENABLED") else None
        return self.store.unfetched_targets(
            self.run_id, from_duplicates=settings.getbool("EXPAND_DUPLICATES"), spam_below=spam,
            # The live gate follows a host's first spam page to one more of its pages.
            spam_own_links=settings.getint("SPAM_CONFIRM_PAGES") - 1,
        )

    def closed(self, reason: str) -> None:
        if "analyser" in self.__dict__:
            self.analyser.close()
        if self.context.finished:
            self.store.close()
            return
        stats = self.crawler.stats.get_stats()
        if "start_time" in stats and "elapsed_time_seconds" not in stats:
            # Scrapy's CoreStats sets it on the same signal, after this handler.
            stats["elapsed_time_seconds"] = (datetime.now(timezone.utc) - stats["start_time"]).total_seconds()
        stats = json.loads(json.dumps(stats, default=str))
        self.store.finish_run(self.run_id, self.context.run_status(reason), stats)
        self.store.close()

    # -- requests ---------------------------------------------------------------------

    def _follows(self, url: str, depth: int) -> bool:
        if self.depth_limit and depth > self.depth_limit:
            return False
        if self.allowed_hosts:
            hostname = urlsplit(url).hostname or ""
            return any(hostname == h or hostname.endswith("." + h) for h in self.allowed_hosts)
        return True

    def expand(self, outlinks: list[tuple[str, int]]) -> int:
        """Schedule a page's outlinks (those still unseen, within the page budget); how
        many requests that made."""
        made = 0
        for url, depth in outlinks:
            request = self._request(url, depth)
            if request is not None:
                self.crawler.engine.crawl(request)
                made += 1
        return made

    def validation_request(self, url: str) -> Request | None:
        """A fetch the mirror detector asks for: ahead of the frontier, outside the page
        budget, and with depth -1 (it was not reached through a link). Hosts outside
        ``allowed_hosts`` are not fetched for it either."""
        if url in self.seen or is_cut(url) or not self._follows(url, 0):
            return None
        self.seen.add(url)
        return Request(url, callback=self.parse, errback=self.failed, priority=100, meta={"depth": -1, "mirror_validation": True}, dont_filter=True)

    def _recrawl_request(self, row: StoredVersionRow) -> Request:
        """A stored page asked for again, conditionally on the validators of its last fetch
        (``crawler.recrawl``); outside ``max_pages``, which bounds new pages."""
        url = row["url"]
        self.seen.add(url)
        return Request(
            url, callback=self.parse, errback=self.failed, priority=-row["depth"], dont_filter=True,
            headers=conditional_headers(row["etag"], row["last_modified"]) if self.conditional else {},
            meta={"depth": row["depth"], RECRAWL_META: True},
        )

    def _request(self, url: str, depth: int) -> Request | None:
        # A cut URL is not the page's (the parse records it, ``_too_long``).
        if url in self.seen or is_cut(url) or (self.max_pages and self.scheduled >= self.max_pages):
            return None
        self.seen.add(url)
        self.scheduled += 1
        # The spider's own seen-set has de-duplicated already; skipping Scrapy's filter saves
        # a fingerprint per request and lets a redirect loop reach RedirectLoopMiddleware
        # (recorded) instead of vanishing silently in the filter.
        return Request(url, callback=self.parse, errback=self.failed, priority=-depth, meta={"depth": depth}, dont_filter=True)

    # -- responses --------------------------------------------------------------------

    def body_received(self, data: bytes, request: Request) -> None:
        """Count a download's body bytes (``BODY_BYTES``): how a cut body is told apart."""
        request.meta[BODY_BYTES] = request.meta.get(BODY_BYTES, 0) + len(data)

    def _record(self, url: str, depth: int, outcome: str, **fields: Any) -> PageRecord:
        host = host_key(url) or ""
        parts = urlsplit(url)
        hostname = parts.hostname or ""
        return PageRecord(
            url=url, host=host, hostname=hostname, port=parts.port,
            path=parts.path + (f"?{parts.query}" if parts.query else ""), depth=depth,
            outcome=outcome, fetched_at=datetime.now(timezone.utc),
            registrable_domain=registrable_domain(hostname), **fields,
        )

    async def parse(self, response: Response) -> AsyncIterator[Any]:
        depth = response.meta.get("depth", 0)
        url = normalize_url("", response.url) or response.url
        chain = [normalize_url("", u) or u for u in response.meta.get("redirect_urls", [])]
        # A redirect to a URL the spider has a request of its own for (or has recorded):
        # that request records it; a second record would count the page twice.
        known = bool(chain) and url not in chain and url in self.seen
        for item in self._redirect_sources(response.meta, chain, depth, url):
            yield item
        if known:
            self.crawler.stats.inc_value("mirrorscope/redirects_to_known_urls")
            return
        self.seen.add(url)
        content_type = response.headers.get(b"Content-Type", b"").decode("latin-1")[:255] or None
        ip = str(response.ip_address) if response.ip_address is not None else None
        fields: dict[str, Any] = dict(
            status=response.status, ip=ip, content_type=content_type,
            length=len(response.body), fingerprint=body_fingerprint(response.body),
            etag=_header(response, b"ETag"), last_modified=_header(response, b"Last-Modified"),
        )
        outcome = self._outcome(response, content_type)
        if outcome != "ok":
            yield PageItem(self._record(url, depth, outcome, **fields))
            return
        html = response.text  # type: ignore[attr-defined]
        page = await self.analyser.analyse(html, url)
        if page.unparsed:
            # Text the parser could not read is not an empty page: its words and links
            # would be silently missing from every detector.
            error = "the HTML parser found no text in a body that has some"
            logger.info("%s: unparsed (%s)", url, error)
            self.crawler.stats.inc_value("mirrorscope/outcome/unparsed")
            yield PageItem(self._record(url, depth, "unparsed", error=error, **fields))
            return
        record = self._record(url, depth, outcome, title=page.title[:1000] or None, **fields)
        record.links, record.error = page.links or [], self._truncated(url, page.unread)
        outlinks = (link.target_url for link in record.links)
        pending = [(target, depth + 1) for target in dict.fromkeys(outlinks) if target not in self.seen and self._follows(target, depth + 1)]
        for item in self._too_long([target for target, _ in pending if is_cut(target)], depth + 1):
            yield item
        pending = [(target, d) for target, d in pending if target not in self.seen]
        if not self.context.outlinks_deferred:
            for request in filter(None, (self._request(u, d) for u, d in pending)):
                yield request
            pending = []
        tokens = self.boilerplate.filter(record.host, page.blocks) if self.boilerplate else page.tokens
        spam = (page.features, page.spam_error, len(page.tokens or ())) if self.context.spam_scoring else None
        # Otherwise scheduled by the duplicate pipeline once the page is known not to be one.
        yield PageItem(record, tokens, outlinks=pending, spam_input=spam)

    def _too_long(self, urls: list[str], depth: int) -> Iterator[PageItem]:
        """Link targets longer than ``URL_MAX_LENGTH``, in the cut form their links hold:
        recorded (``url-too-long``) and never fetched."""
        error = f"longer than URL_MAX_LENGTH ({self.url_max_length} characters): recorded, not fetched"
        for url in urls:
            self.seen.add(url)
            self.crawler.stats.inc_value("mirrorscope/outcome/url-too-long")
            yield PageItem(self._record(url, depth, "url-too-long", error=error))

    def _truncated(self, url: str, unread: int) -> str | None:
        if not unread:
            return None
        self.crawler.stats.inc_value("mirrorscope/pages_links_truncated")
        self.crawler.stats.inc_value("mirrorscope/links_truncated", unread)
        note = f"links truncated: {unread} anchors past LINKS_PER_PAGE_MAX ({self.links_max}) not read"
        logger.info("%s: %s", url, note)
        return note

    def _outcome(self, response: Response, content_type: str | None) -> str:
        if response.status >= 300:
            return f"http-{response.status}"
        if not response.body:
            return "empty"
        if not isinstance(response, TextResponse) or "html" not in (content_type or "text/html").lower():
            return "non-html"
        if _looks_binary(response.body):
            return "binary"
        return "ok"

    def _redirect_sources(
        self, meta: dict[str, Any], chain: list[str], depth: int, final: str, error: str | None = None
    ) -> Iterator[PageItem]:
        """``redirect`` records of a chain's URLs, each to the next; ``error`` is the last one's."""
        reasons = meta.get("redirect_reasons", [])
        recorded = set(self._chain_to_record(chain))
        for i, source in enumerate(chain):
            if source not in recorded:
                continue
            recorded.discard(source)
            last = i + 1 == len(chain)
            target = final if last else chain[i + 1]
            status = reasons[i] if i < len(reasons) and isinstance(reasons[i], int) else None
            yield PageItem(self._record(source, depth, "redirect", status=status, redirect_to=target, error=error if last else None))

    def _chain_to_record(self, chain: list[str]) -> list[str]:
        """The URLs of a redirect chain this request records: the one it asked for, and
        each other URL once, unless the spider has a request of its own for it (which
        records it). A loop's chain holds its URLs again and again, up to
        ``REDIRECT_MAX_TIMES``; recording them once per turn counted one host's pages many
        times over."""
        unique = list(dict.fromkeys(chain))
        own = unique[:1] + [url for url in unique[1:] if url not in self.seen]
        self.seen.update(own)
        return own

    def failed(self, failure: Failure) -> Iterator[PageItem]:
        request = failure.request  # type: ignore[attr-defined]
        if isinstance(failure.value, RedirectRefused):
            yield from self._refused_redirect(failure.value, request.meta.get("depth", 0))
            return
        outcome, error = classify_failure(failure, self.maxsize)
        # A redirect chain that ended in failure: every URL of it gets the outcome, once.
        chain = [normalize_url("", url) or url for url in [*request.meta.get("redirect_urls", []), request.url]]
        host_wide = getattr(failure.value, "host_wide", False)
        level = logging.DEBUG if host_wide or outcome in HOST_OUTCOMES else logging.INFO
        if (host_wide or outcome in NOT_SENT) and not request.meta.get("mirror_validation"):
            self.scheduled -= 1  # max_pages counts requests sent to servers
        for url in self._chain_to_record(chain):
            logger.log(level, "%s: %s (%s)", url, outcome, error)
            self.crawler.stats.inc_value(f"mirrorscope/outcome/{outcome}")
            yield PageItem(self._record(url, request.meta.get("depth", 0), outcome, error=error))

    def _refused_redirect(self, refused: RedirectRefused, depth: int) -> Iterator[PageItem]:
        """A chain whose last target the frontier refused: its URLs are redirects, the last
        one to that target, with the refusal as its error; the target is not fetched, as a
        link the frontier refuses is not."""
        redirected = refused.redirected
        chain = [normalize_url("", url) or url for url in redirected.meta.get("redirect_urls", [])]
        target = normalize_url("", redirected.url) or redirected.url
        error = str(refused)
        logger.info("%s: %s", chain[-1], error)
        self.crawler.stats.inc_value("mirrorscope/redirects_refused")
        yield from self._redirect_sources(redirected.meta, chain, depth, target, error)
