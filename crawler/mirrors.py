"""Mirror detection inside the crawl: ``MirrorMiddleware`` runs the rounds of
``jobs.mirrors`` every ``MIRROR_DETECTION_INTERVAL`` pages and whenever the crawl goes idle,
fetches the sampled counterparts through the crawl (politeness kept), and, once a mirror is
validated, refuses the mirror side's paths whose counterpart on the canonical side is stored
(outcome ``mirrored-not-fetched``).

Which copy of a page the crawl met first depends on timing: a page of the canonical side
may have been recorded as a duplicate of its copy on the mirror side, its links left to
the copy's, which the crawl now refuses. When a location becomes a mirror side, the
stored links of such pages are scheduled (``Store.duplicate_outlinks``), and later pages
of the kind are expanded by ``DuplicatePipeline`` (it reads ``CrawlContext.mirror_sides``),
so that what the crawl covers does not depend on which copy came first.

Verdicts are written after every round that judged a pair, and at idle and close, so a
killed crawl loses at most one round. A resumed crawl (``CrawlContext.resumed``) rebuilds
its ``HostView`` from the store and takes back the stored verdicts
(``MirrorRound.restore``): the sampled counterparts fetched before the kill are stored
pages, so they are not fetched again, and a verdict is never replaced by a poorer view.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import deferred_from_coro

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.middlewares import RefusedRequest
from mirrorscope.jobs.mirrors import HostView, MirrorRound, canonical_counterpart, supersedes

logger = logging.getLogger(__name__)


class MirrorMiddleware:
    """Mirror detection inside the crawl (a downloader middleware that also listens to
    the crawl's signals; see the module docstring)."""

    def __init__(self, crawler: Any, interval: int, sample: int, candidates: int, enabled: bool):
        self.crawler = crawler
        self.interval = interval
        self.enabled = enabled
        self.view = HostView()
        self.rounds = MirrorRound(candidates_per_host=candidates, sample=sample)
        self.requested: set[tuple[str, str]] = set()
        self.mirrored: dict[str, str] = {}
        # Expansions of superseded duplicates still waiting for the store (keep the crawl open).
        self.expanding = 0
        self.pages_since = 0
        self.persisted = False
        self.written = 0
        # A finished run's re-run: nothing is validated and nothing written.
        self.frozen = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> "MirrorMiddleware":
        settings = crawler.settings
        middleware = cls(
            crawler, settings.getint("MIRROR_DETECTION_INTERVAL"), settings.getint("MIRROR_SAMPLE_PATHS"),
            settings.getint("MIRROR_CANDIDATES_PER_HOST"), settings.getbool("MIRROR_DETECTION_ENABLED"),
        )
        if middleware.enabled:
            crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(middleware.item_scraped, signal=signals.item_scraped)
            crawler.signals.connect(middleware.spider_idle, signal=signals.spider_idle)
            crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    # -- what the crawl learns ----------------------------------------------------------

    def spider_opened(self) -> None:
        context = CrawlContext.of(self.crawler)
        if context.policy_log is not None:
            # A shared frontier: every process's pages join this view (``replay``).
            context.policy_log.attach(self)
        self.frozen = context.finished
        if not context.resumed or self.frozen:
            return
        self.view = HostView.from_store(context.store)
        self.rounds.restore(context.store.mirror_pairs(include_none=True))
        self.written = self.rounds.judged()
        self._refresh_policy()
        logger.info("mirrors: resumed with %d hosts and %d verdicts from the store", len(self.view.content), self.written)

    def replay(self, event: tuple[Any, ...]) -> None:
        """A page another process of a shared crawl fetched (``crawler.shared.PolicyLog``)."""
        if event[0] == "page":
            record, sketch = event[1], event[2]
            self._add(record.url, record.host, record.ip, record.outcome, sketch, [(l.target_url, l.target_host) for l in record.links])

    def _add(self, url: str, host: str, ip: str | None, outcome: str, sketch: Any, links: Any) -> None:
        self.view.add_page(url, host, ip, outcome, sketch)
        for target_url, target_host in links:
            self.view.add_link(host, target_url, target_host)
        self.pages_since += 1

    def item_scraped(self, item: Any) -> None:
        if not isinstance(item, PageItem):
            return
        record = item.record
        self._add(record.url, record.host, record.ip, record.outcome, item.sketch, [(l.target_url, l.target_host) for l in record.links])
        if self.pages_since >= self.interval:
            self._round()

    def spider_idle(self) -> None:
        if self.frozen:
            return
        if self._round() or self.expanding:
            raise DontCloseSpider
        self._persist()

    def spider_closed(self) -> None:
        """A crawl stopped before going idle (page limit, shutdown) keeps what it judged."""
        if not self.persisted and not self.frozen:
            self._persist()

    def _persist(self) -> None:
        self.rounds.finish(self.view)
        self._refresh_policy()
        self._write()
        self.persisted = True

    def _write(self) -> None:
        pairs, clusters = self.rounds.rows(self.view)
        CrawlContext.of(self.crawler).store.replace_mirrors(pairs, clusters)
        self.crawler.stats.set_value("mirrorscope/mirrors", sum(p["level"] != "none" for p in pairs))
        self.written = self.rounds.judged()

    def _round(self) -> bool:
        """Run a round; True when it scheduled validation fetches."""
        self.pages_since = 0
        wanted = [w for w in self.rounds.run(self.view) if w not in self.requested]
        self._refresh_policy()
        if self.rounds.judged() != self.written:
            self._write()
        spider = self.crawler.spider
        for host, path in wanted:
            self.requested.add((host, path))
            url = f"{self.view.schemes.get(host, 'http')}://{host}{path}"
            request = spider.validation_request(url)
            if request is not None:
                self.crawler.stats.inc_value("mirrorscope/mirror_validation_fetches")
                self.crawler.engine.crawl(request)
        return bool(wanted)

    def _refresh_policy(self) -> None:
        before, self.mirrored = self.mirrored, self.rounds.canonical_sides(self.view)
        CrawlContext.of(self.crawler).mirror_sides = self.mirrored
        changed = {loc: keep for loc, keep in self.mirrored.items() if before.get(loc) != keep}
        if changed and not self.frozen:
            self.expanding += 1
            deferred_from_coro(self._expand_superseded(changed)).addErrback(
                lambda failure: logger.error("mirrors: expanding superseded duplicates failed: %s", failure.getErrorMessage())
            )

    async def _expand_superseded(self, changed: dict[str, str]) -> None:
        """Schedule the stored links of the canonical sides' pages recorded as duplicates
        of pages on the locations that just became mirror sides (see the module docstring)."""
        context = CrawlContext.of(self.crawler)
        try:
            await context.store_written()
            hosts = sorted({keep.partition("/")[0] for keep in changed.values()})
            rows = context.store.duplicate_outlinks(context.run_id, hosts)
            outlinks = [(target, depth) for page, original, target, depth in rows if supersedes(changed, page, original)]
            if outlinks:
                self.crawler.stats.inc_value("mirrorscope/superseded_duplicate_links", len(outlinks))
                self.crawler.spider.expand(outlinks)
        finally:
            self.expanding -= 1

    # -- the policy ----------------------------------------------------------------------

    def process_request(self, request: Request, spider: Any = None) -> None:
        if not self.mirrored or request.meta.get("mirror_validation"):
            return None
        found = canonical_counterpart(self.mirrored, request.url)
        if found is not None and self.view.exists(found[1], found[2]):
            self.crawler.stats.inc_value("mirrorscope/mirrored_not_fetched")
            raise RefusedRequest("mirrored-not-fetched", f"copy of {self.view.root(found[1] + found[2])}")
        return None
