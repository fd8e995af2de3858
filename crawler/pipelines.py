"""Item pipelines: what happens to a page between the spider and the store."""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, reactor, task, threads
from twisted.python.threadpool import ThreadPool

from storage.records import PageRecord

logger = logging.getLogger(__name__)


class StorePipeline:
    """Writes pages to the spider's store in batches, on a thread of its own.

    A batch is written when ``STORE_BATCH_SIZE`` pages are pending or
    ``STORE_FLUSH_INTERVAL`` seconds have passed, and at close. One writer thread keeps
    batches in order and keeps the database's latency off the reactor. A batch that
    fails is logged and counted (``mirrorscope/store_errors``); the crawl goes on.
    """

    def __init__(self, crawler: Any, batch_size: int, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.batch_size = batch_size
        self.interval = interval
        self.pending: list[PageRecord] = []
        self.writes: set[defer.Deferred] = set()
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="mirrorscope-store")
        self.last_flush = time.monotonic()
        self.timer = task.LoopingCall(self._flush_if_due)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "StorePipeline":
        settings = crawler.settings
        return cls(crawler, settings.getint("STORE_BATCH_SIZE"), settings.getfloat("STORE_FLUSH_INTERVAL"))

    def open_spider(self) -> None:
        # The spider owns the store and the run: it opens both before anything is queued.
        self.store = self.crawler.spider.store
        self.run_id = self.crawler.spider.run_id
        self.pool.start()
        self.timer.start(self.interval / 2, now=False)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageRecord):
            self.pending.append(item)
            if len(self.pending) >= self.batch_size:
                self._flush()
        return item

    def _flush_if_due(self) -> None:
        if self.pending and time.monotonic() - self.last_flush >= self.interval:
            self._flush()

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        self.last_flush = time.monotonic()
        if not batch:
            return
        d = threads.deferToThreadPool(reactor, self.pool, self.store.write_pages, batch, self.run_id)
        d.addCallbacks(self._written, self._failed, callbackArgs=(len(batch),), errbackArgs=(len(batch),))
        self.writes.add(d)
        d.addBoth(self._forget, d)

    def _written(self, _: Any, count: int) -> None:
        self.stats.inc_value("mirrorscope/page_writes", count)

    def _failed(self, failure: Any, count: int) -> None:
        self.stats.inc_value("mirrorscope/store_errors")
        logger.error("could not store %d pages: %s", count, failure.getErrorMessage())

    def _forget(self, _: Any, d: defer.Deferred) -> None:
        self.writes.discard(d)

    async def close_spider(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._flush()
        try:
            await maybe_deferred_to_future(defer.DeferredList(list(self.writes)))
        finally:
            self.pool.stop()
