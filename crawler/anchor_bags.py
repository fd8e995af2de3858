"""Anchor bags kept up to date during the crawl (Haveliwala, Gionis and Indyk, WebDB 2000).

``AnchorBagPipeline`` feeds every page's links (``PageRecord.links``: target URL, anchor
text, the words before and after) and its own title into URL-keyed anchor bags
(``detectors.anchors.UrlBags``): a link updates only the bag of the URL it points to.
Every ``ANCHOR_BAGS_FLUSH_PAGES`` pages, when the crawl goes idle and when it closes,
the MH signatures of the bags changed since the last flush are computed and written to
the store (``anchor_signatures``), so signatures are never held in memory; the bags
themselves are (about 12 bytes per distinct (URL, term)). The idf snapshot is retaken,
and every bag signed again, each time the number of bags doubles (``UrlBags``).

The work runs on a thread of its own in batches of ``ANCHOR_BAGS_BATCH_SIZE`` pages (or
what is pending after ``ANCHOR_BAGS_INTERVAL`` seconds): the reactor only collects the
records. One thread keeps batches in order. Pairs and CENTER clusters are not computed
here: ``mirror-report detect`` recomputes everything offline (``crawler.similar``).
Off with ``ANCHOR_BAGS_ENABLED = False``. A resumed crawl first rebuilds the bags of
what the store holds.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, reactor, task, threads
from twisted.python.threadpool import ThreadPool

from crawler.items import PageItem
from crawler.similar import bags_from_store, signature_rows
from detectors.anchors import DEFAULT_PARAMS, AnchorParams, UrlBags
from storage.records import PageRecord

logger = logging.getLogger(__name__)


class AnchorBagPipeline:
    """Incremental anchor bags and their signatures during the crawl (module docstring).

    Parameters: ``params`` (window from ``ANCHOR_WINDOW``, the rest the paper's),
    ``batch_size`` pages per thread job, ``flush_pages`` pages between signature
    flushes, ``interval`` seconds a partial batch may wait.
    """

    def __init__(self, crawler: Any, params: AnchorParams, batch_size: int, flush_pages: int, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.params = params
        self.batch_size = batch_size
        self.flush_pages = flush_pages
        self.interval = interval
        self.bags = UrlBags(params)
        self.pending: list[PageRecord] = []
        self.absorbed_since_flush = 0
        self.jobs: set[defer.Deferred] = set()
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="mirrorscope-anchor-bags")
        self.timer = task.LoopingCall(self._dispatch)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "AnchorBagPipeline":
        settings = crawler.settings
        if not settings.getbool("ANCHOR_BAGS_ENABLED"):
            raise NotConfigured("ANCHOR_BAGS_ENABLED is off")
        params = AnchorParams(window=settings.getint("ANCHOR_WINDOW", DEFAULT_PARAMS.window))
        pipeline = cls(
            crawler, params, settings.getint("ANCHOR_BAGS_BATCH_SIZE"), settings.getint("ANCHOR_BAGS_FLUSH_PAGES"),
            settings.getfloat("ANCHOR_BAGS_INTERVAL"),
        )
        crawler.signals.connect(pipeline.spider_idle, signal=signals.spider_idle)
        return pipeline

    def open_spider(self) -> None:
        self.store = self.crawler.spider.store
        self.pool.start()
        self.timer.start(self.interval, now=False)
        if getattr(self.crawler.spider, "resumed", False):
            self._submit(self._rebuild)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem):
            self.pending.append(item.record)
            if len(self.pending) >= self.batch_size:
                self._dispatch()
        return item

    def spider_idle(self) -> None:
        self._dispatch()
        if self.absorbed_since_flush or self.pending:
            self._submit(self._flush)

    async def close_spider(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._dispatch()
        self._submit(self._flush)
        try:
            await maybe_deferred_to_future(defer.DeferredList(list(self.jobs)))
        finally:
            self.pool.stop()
        self.stats.set_value("mirrorscope/anchor_bags/urls", len(self.bags))

    # -- on the reactor ------------------------------------------------------------------

    def _dispatch(self) -> None:
        batch, self.pending = self.pending, []
        if batch:
            self._submit(self._absorb, batch)

    def _submit(self, work: Any, *args: Any) -> None:
        job = threads.deferToThreadPool(reactor, self.pool, work, *args)
        job.addErrback(self._failed)
        self.jobs.add(job)
        job.addBoth(self._forget, job)

    def _failed(self, failure: Any) -> None:
        self.stats.inc_value("mirrorscope/anchor_bags/errors")
        logger.error("anchor bags: %s", failure.getErrorMessage())

    def _forget(self, _: Any, job: defer.Deferred) -> None:
        self.jobs.discard(job)

    # -- on the pipeline's thread --------------------------------------------------------

    def _absorb(self, records: list[PageRecord]) -> None:
        links = [link for record in records for link in record.links]
        if links:
            self.bags.add_links(
                [link.target_url for link in links], [link.anchor for link in links],
                [link.before for link in links], [link.after for link in links],
            )
        for record in records:
            if record.title:
                self.bags.add_title(record.url, record.title)
        self.absorbed_since_flush += len(records)
        if self.absorbed_since_flush >= self.flush_pages:
            self._flush()

    def _flush(self) -> None:
        started = time.monotonic()
        self.absorbed_since_flush = 0
        changed = self.bags.changed_signatures()
        if changed.urls:
            self.store.write_anchor_signatures(signature_rows(changed, self.params))
        self.stats.inc_value("mirrorscope/anchor_bags/signatures_written", len(changed.urls))
        self.stats.inc_value("mirrorscope/anchor_bags/snapshots", int(changed.refreshed))
        self.stats.inc_value("mirrorscope/anchor_bags/flush_seconds", round(time.monotonic() - started, 3))

    def _rebuild(self) -> None:
        self.bags = bags_from_store(self.store, self.params)
