"""Web spam inside the crawl: host verdicts, fed back to the frontier, and persisted.

Page scores come from ``crawler.pipelines.SpamScorePipeline`` (``detectors.spam``); this
module turns them, the host graph and cloaking checks into host verdicts while the crawl
runs, and acts on them:

:class:`SpamMonitor` (one per crawl, :meth:`SpamMonitor.of`)
    Feeds each page to a ``crawler.host_spam.HostJudge``, which keeps per host the
    evidence of ``detectors.spam.HostEvidence`` (the last ``SPAM_HOST_SAMPLE`` (200)
    scored pages, near-duplicates, hosts on its address, the host graph, links from spam
    pages) and judges it, and adds the cloaking checks. A host is judged whenever new
    evidence may change its verdict (a spam page, a farm, a cloaking check); once spam,
    it is blocked in the frontier (``FrontierPolicy.budget.block``): nothing more of it
    is queued, and what is queued is dropped when popped.

    **Cloaking.** The first HTML page of every host that is not spam to the crawler's eyes
    is fetched a second time with a browser's User-Agent (``CLOAKING_CHECK_ENABLED``) and
    the two sketches are compared. When they resemble each other less than 0.5, the
    crawler's User-Agent fetches the page once more: a page that changes by itself (dates,
    ads) is told apart from one that answers crawlers differently (Wu and Davison, AIRWeb
    2005). One extra fetch per host (two for a suspect) is the price; a crawl of N hosts
    fetches N more pages. That page's outlinks wait for the verdict (a cloaker's other
    pages are its spam too; a good host's expansion waits one round trip). A host whose
    pages are spam to the crawler is condemned by them (cloaking or not) and not spent
    on: the check is for the cloakers the content would not catch, the ones that show
    crawlers a page people never see. The crawler says it is one (``USER_AGENT``):
    cloakers show their spam to crawlers that say so.

:class:`SpamPipeline` (``ITEM_PIPELINES``, after the page scores and sketches, before
the duplicate pipeline expands a page)
    Feeds the monitor and decides what a page's outlinks may do. The outlinks of a page
    scored as spam are not followed, but for links to its own host until that host has
    ``SPAM_CONFIRM_PAGES`` (2) scored pages: a host is not condemned on one page
    (``detectors.spam``). The hosts a spam page links to are judged without a fetch, on
    who links to them and with which anchors (spam in-links, farm anchors): a link
    farm's other members are known by the thousand links its first page shows, and
    fetching them would only confirm it.

Verdicts are written to ``host_verdicts`` (spam, and trap verdicts of
``detectors.traps`` from the frontier's trap monitor) when a host is flagged, when the
crawl goes idle and when it closes. A resumed crawl takes them back with the evidence
(``HostJudge.restore``) and judges every host again on it, so the hosts a killed crawl
flagged stay blocked; ``mirror-report detect`` judges the spam verdicts again from the store
(``crawler.host_spam.rejudge_spam``). ``SPAM_DETECTION_ENABLED`` switches the host
verdicts and the gating off (page scores are the ``SpamScorePipeline``'s).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.http import Response, TextResponse
from twisted.internet import task
from twisted.python.failure import Failure

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.jobs.spam import HostJudge, HostState
from mirrorscope.crawler.hosts import host_key
from mirrorscope.crawler.items import PageItem
from mirrorscope.detectors.canonical import canonical_document
from mirrorscope.detectors.sketch import DocumentSketch, SketchParams, resemblance_min_s, sketch_many
from mirrorscope.detectors.spam import SPAM_SCORE
from mirrorscope.storage.records import PageRecord

logger = logging.getLogger(__name__)

__all__ = ["BROWSER_USER_AGENT", "SpamGraphMiddleware", "SpamMonitor", "SpamPipeline"]

#: What a cloaker must take for a person's browser.
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
#: Crawler/browser resemblance below which the crawler's User-Agent fetches the page again.
CLOAK_SUSPECT = 0.5
#: Fewest seconds between link-farm searches (more when a search takes longer: each
#: waits ten times the last one's duration, so the search takes at most a tenth of the
#: reactor). Short, because a farm's members are fetched in parallel until it is found.
FARM_SEARCH_INTERVAL = 0.02

class SpamMonitor:
    """Host spam verdicts during the crawl (see the module docstring)."""

    def __init__(self, crawler: Any, context: CrawlContext) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.context = context
        self.stats = crawler.stats
        self.policy = context.policy
        self.confirm_pages = settings.getint("SPAM_CONFIRM_PAGES")
        self.cloaking = settings.getbool("CLOAKING_CHECK_ENABLED")
        self.params = SketchParams(
            seed=settings.getint("SKETCH_SEED"), w=settings.getint("SHINGLE_SIZE"),
            s=settings.getint("SKETCH_MIN_S"), m=settings.getint("SKETCH_MOD_M"),
        )
        self.judge = HostJudge(settings.getint("SPAM_HOST_SAMPLE"), on_flagged=self._block)
        self.cloak_pending: dict[str, tuple[str, DocumentSketch, float | None]] = {}
        # Per page under a cloaking check: its record and the outlinks that wait for it.
        self.held: dict[str, tuple[PageRecord, list[tuple[str, int]]]] = {}
        self.expand_duplicates = settings.getbool("EXPAND_DUPLICATES")
        self.farms_dirty = False
        self.last_farm_search = 0.0
        self.farm_interval = FARM_SEARCH_INTERVAL
        # A host flagged since the verdicts were last written (see _tick).
        self.unsaved = False
        self.timer = task.LoopingCall(self._tick)

    @classmethod
    def connected(cls, crawler: Any, context: CrawlContext) -> SpamMonitor:
        """A monitor listening to the crawl's signals (``CrawlContext.spam`` keeps the one)."""
        monitor = cls(crawler, context)
        crawler.signals.connect(monitor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(monitor.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(monitor.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    # -- what the crawl tells the monitor ---------------------------------------------

    def page(self, item: PageItem) -> None:
        """A page arrived: record its evidence, judge its host if needed, gate its outlinks."""
        record = item.record
        state = self.judge.add_page(record)
        if record.spam_score is None:
            return
        spam_page = record.spam_score >= SPAM_SCORE
        if spam_page:
            self.stats.inc_value("spam/pages")
            self.farms_dirty = True
            self._search_farms()
            self.judge.judge(record.host)
            item.outlinks = self._gate(record, state, item.outlinks)
        elif state.verdict is not None or len(state.scores) % 50 == 0:
            self.judge.judge(record.host)
        if record.host in self.judge.flagged and item.outlinks:
            self.stats.inc_value("spam/outlinks_not_followed", len(item.outlinks))
            item.outlinks = []
        # Checked on the host's first page that is not spam (see the module docstring).
        if self.cloaking and not state.checked and not spam_page and record.host not in self.judge.flagged and item.sketch is not None:
            state.checked = True
            if not self.context.first_claim("cloak", record.host):
                return  # another process of a shared crawl checks this host
            # The page's links wait for the check's verdict: a cloaker's other pages are
            # its spam too, and a good host loses one round trip.
            self.held[record.url] = (record, item.outlinks)
            item.outlinks = []
            self._check_cloaking(record.url, record.host, record.depth, item.sketch, None)

    def replay(self, event: tuple[Any, ...]) -> None:
        """A page another process of a shared crawl fetched (``crawler.shared.PolicyLog``):
        its host is judged on every process's pages, as one process judges it on its own."""
        if event[0] != "page":
            return
        record = event[1]
        state = self.judge.add_page(record)  # its links join the host graph too
        self.farms_dirty = self.farms_dirty or bool(record.links)
        if record.duplicate_of and host_key(record.duplicate_of) == record.host:
            state.duplicates += 1
        if record.spam_score is not None and (record.spam_score >= SPAM_SCORE or state.verdict is not None or len(state.scores) % 50 == 0):
            self.judge.judge(record.host)

    def links(self, record: PageRecord) -> None:
        """A page was parsed: its links join the host graph, and a farm they complete is
        found now, before the pipelines' batches and before its members' queued pages."""
        self.judge.add_links(record)
        self._search_farms()

    def item_scraped(self, item: Any) -> None:
        if isinstance(item, PageItem) and item.record.duplicate_of:
            if host_key(item.record.duplicate_of) == item.record.host and item.record.host in self.judge.hosts:
                self.judge.hosts[item.record.host].duplicates += 1

    def _gate(self, record: PageRecord, state: HostState, outlinks: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The outlinks of a spam page that are followed: links to confirm its host."""
        own = 0 if record.host in self.judge.flagged else max(0, self.confirm_pages - len(state.scores))
        kept = [(url, depth) for url, depth in outlinks if own and host_key(url) == record.host][:own]
        self.stats.inc_value("spam/outlinks_not_followed", len(outlinks) - len(kept))
        return kept

    # -- verdicts ------------------------------------------------------------------------

    def _block(self, host: str) -> None:
        """A host was judged spam: the frontier queues nothing more of it."""
        self.policy.budget.block(host, "spam")
        self.unsaved = True
        self.stats.inc_value("spam/hosts_blocked")
        logger.info("spam: %s blocked (%s)", host, self.judge.flagged[host])

    def _tick(self) -> None:
        self._search_farms()
        # A flag is written at once (not only at idle): a killed crawl keeps its evidence
        # that the store cannot rebuild, the cloaking checks, and resumes with it.
        if self.unsaved:
            self._persist()

    def _search_farms(self) -> None:
        # A farm is found by its structure, not by its pages' words: the search runs when
        # a spam page arrived or the host graph gained an edge, at most once per
        # interval and never more than a tenth of the time.
        now = time.monotonic()
        if not (self.farms_dirty or self.judge.graph_grew) or now - self.last_farm_search < self.farm_interval:
            return
        self.farms_dirty = False
        self.judge.search_farms()
        self.last_farm_search = time.monotonic()
        self.farm_interval = max(FARM_SEARCH_INTERVAL, 10 * (self.last_farm_search - now))

    # -- cloaking --------------------------------------------------------------------------

    def _check_cloaking(self, url: str, host: str, depth: int, sketch: DocumentSketch, browser: float | None) -> None:
        """Fetch ``url`` as a browser (``browser`` None) or, after a browser fetch that
        resembled the crawler's ``browser``, as the crawler again."""
        self.cloak_pending[url] = (host, sketch, browser)
        as_browser = browser is None
        headers = {"User-Agent": BROWSER_USER_AGENT} if as_browser else {}
        request = Request(
            url, headers=headers, callback=self._cloak_response, errback=self._cloak_failed,
            priority=-depth, dont_filter=True, meta={"depth": depth, "spam_probe": "browser" if as_browser else "crawler", "cloak_url": url},
        )
        self.stats.inc_value("spam/cloaking_fetches")
        self.crawler.engine.crawl(request)

    def _cloak_response(self, response: Response) -> None:
        url = response.meta.get("cloak_url", response.url)
        pending = self.cloak_pending.pop(url, None)
        state = self.judge.hosts.get(pending[0]) if pending is not None else None
        if state is not None and isinstance(response, TextResponse) and response.status < 300:
            host, crawler_sketch, browser = pending
            sketch = sketch_many([canonical_document(response.text).tokens], self.params)[0]
            resemblance = resemblance_min_s(crawler_sketch, sketch)
            if browser is None:
                state.cloak = resemblance
                if resemblance < CLOAK_SUSPECT:
                    # Judged once the crawler's second fetch tells whether the page changes by itself.
                    self._check_cloaking(url, host, response.meta.get("depth", 0), crawler_sketch, resemblance)
                    return
            else:
                state.refetch = resemblance
            self.judge.judge(host)
        self._release(url)

    def _cloak_failed(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        if request is not None:
            url = request.meta.get("cloak_url", request.url)
            self.cloak_pending.pop(url, None)
            self._release(url)
        logger.info("spam: cloaking check failed: %s", failure.getErrorMessage())

    def _release(self, url: str) -> None:
        """The cloaking check of ``url`` is over: its page's links follow, unless its host
        was judged spam or the page is a duplicate (whose links are not followed)."""
        record, outlinks = self.held.pop(url, (None, []))
        if record is None or not outlinks or (record.duplicate_of and not self.expand_duplicates):
            return
        if record.host in self.judge.flagged:
            self.stats.inc_value("spam/outlinks_not_followed", len(outlinks))
            return
        self.crawler.spider.expand(outlinks)

    # -- the verdicts' home -------------------------------------------------------------

    def spider_opened(self) -> None:
        if self.context.policy_log is not None:
            self.context.policy_log.attach(self)
        if self.context.resumed:
            # A resumed crawl gets back what the monitor knew (HostJudge.restore); flagged
            # hosts stay blocked and checked hosts are not refetched as a browser.
            self.judge.restore(self.context.store)
            for host in self.judge.flagged:
                self.policy.budget.block(host, "spam")
            # Flags a killed crawl did not write exist only as evidence: judged again
            # from it now, and blocked.
            self.judge.spam_rows(settle=True)
        self.timer.start(FARM_SEARCH_INTERVAL, now=False)

    def spider_idle(self) -> None:
        self._persist()

    def spider_closed(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._persist()

    def rows(self) -> list[dict[str, Any]]:
        """Every host's spam verdict and every trap verdict, as ``host_verdicts`` rows."""
        self.farms_dirty = False
        rows = self.judge.spam_rows()
        hosts = self.judge.hosts
        traps = self.policy.traps
        for host in sorted(traps.hosts() | {h for h, s in hosts.items() if s.pages >= traps.limits.max_host_pages}):
            trap = traps.verdict(host, hosts[host].pages if host in hosts else 0)
            if trap.is_trap:
                rows.append({
                    "host": host, "kind": "trap", "flagged": True, "score": 1.0,
                    "pages": hosts[host].pages if host in hosts else 0, "reasons": trap.messages,
                    "features": {"calendar_urls": traps.calendar_urls[host], "calendar_walk_refused": traps.calendar_walk[host]},
                })
        return rows

    def _persist(self) -> None:
        if self.context.finished:
            return  # a finished run's re-run judged nothing new
        self.unsaved = False
        rows = self.rows()
        if self.context.shared is not None:
            # Each process of a shared crawl judged on its own pages: merged, not replaced.
            self.context.store.merge_host_verdicts(rows)
        else:
            self.context.store.replace_host_verdicts(rows)
        self.stats.set_value("spam/hosts_flagged", sum(r["flagged"] for r in rows if r["kind"] == "spam"))
        self.stats.set_value("spam/trap_hosts", sum(r["kind"] == "trap" for r in rows))


class SpamPipeline:
    """Feeds each page to the crawl's :class:`SpamMonitor`, which gates its outlinks."""

    def __init__(self, monitor: SpamMonitor):
        self.monitor = monitor

    @classmethod
    def from_crawler(cls, crawler: Any) -> SpamPipeline:
        if not crawler.settings.getbool("SPAM_DETECTION_ENABLED"):
            raise NotConfigured("SPAM_DETECTION_ENABLED is off")
        return cls(CrawlContext.of(crawler).spam)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem):
            self.monitor.page(item)
        return item


class SpamGraphMiddleware(BaseSpiderMiddleware):
    """Feeds each parsed page's links to the crawl's :class:`SpamMonitor` as the spider
    yields it (a spider middleware), so that a link farm is found while its members'
    first pages arrive, not once they have been through the pipelines' batches."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.monitor = CrawlContext.of(crawler).spam

    @classmethod
    def from_crawler(cls, crawler: Any) -> SpamGraphMiddleware:
        if not crawler.settings.getbool("SPAM_DETECTION_ENABLED"):
            raise NotConfigured("SPAM_DETECTION_ENABLED is off")
        return cls(crawler)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if isinstance(item, PageItem) and item.record.links:
            self.monitor.links(item.record)
        return item
