"""Anchor bags kept up to date during the crawl (Haveliwala, Gionis and Indyk, WebDB 2000).

``AnchorBagPipeline`` feeds every page's links (``PageRecord.links``: target URL, anchor
text, the words before and after) and its own title into URL-keyed anchor bags
(``detectors.url_bags.UrlBags``): a link updates only the bag of the URL it points to.
Every ``ANCHOR_BAGS_FLUSH_PAGES`` pages, when the crawl goes idle and when it closes,
the MH signatures of the bags changed since the last flush are computed and written to
the store (``anchor_signatures``), so signatures are never held in memory; the bags
themselves are (about 12 bytes per distinct (URL, term), and a cache entry per distinct
word). The idf snapshot is retaken, and every bag signed again, each time the number of
bags doubles (``UrlBags``).

The work runs in a process of its own (``crawler.anchor_worker.maintain_bags``, started with
``spawn``), fed batches of ``ANCHOR_BAGS_BATCH_SIZE`` pages (or what is pending after
``ANCHOR_BAGS_INTERVAL`` seconds) through a queue; the reactor only copies each page's
link strings into the batch. A process, not a thread: the bag work is Python per link
under the GIL, which on a thread slows the crawl itself (docs/MEASUREMENTS.md). The
worker writes through its own connection to the store; at close the pipeline waits for it (off the reactor) and adds its counters to the crawl's stats
(``mirrorscope/anchor_bags/*``). Pairs and CENTER clusters are not computed here:
``mirror-report detect`` recomputes everything offline (``jobs.similar``). Off with
``ANCHOR_BAGS_ENABLED = False``. A resumed crawl's worker first rebuilds the bags of what the
store held when the crawl opened (``Store.anchor_high_water``; later pages come as messages),
reading the links a batch at a time.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import time
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor, task, threads
from twisted.python.threadpool import ThreadPool

from mirrorscope.crawler.backlog import Backlog
from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.anchor_worker import maintain_bags
from mirrorscope.detectors.anchors import AnchorParams
from mirrorscope.storage.records import PageRecord

logger = logging.getLogger(__name__)

#: Seconds the close waits for the worker's last flush before giving up on it.
CLOSE_TIMEOUT = 600.0
#: Messages (batches of pages) the worker may have waiting: a few seconds of its work.
INBOX_MESSAGES = 4


class AnchorBagPipeline:
    """Incremental anchor bags and their signatures during the crawl (module docstring).

    Parameters: ``params`` (window from ``ANCHOR_WINDOW``, the rest the paper's),
    ``batch_size`` pages per message to the worker, ``flush_pages`` pages between
    signature flushes, ``interval`` seconds a partial batch may wait.
    """

    def __init__(self, crawler: Any, params: AnchorParams, batch_size: int, flush_pages: int, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.params = params
        self.batch_size = batch_size
        self.flush_pages = flush_pages
        self.interval = interval
        self.pending: list[PageRecord] = []
        self.sent_since_flush = 0
        self.timer = task.LoopingCall(self._dispatch_if_room)
        self.worker: Any = None
        # Messages go to the worker through a bounded queue, put from one thread of their
        # own (in order, off the reactor): a worker slower than the crawl makes every
        # ``process_item`` wait, so pages back up in Scrapy's bounded scraper slot instead
        # of in an unbounded queue in this process.
        self.sender = ThreadPool(minthreads=1, maxthreads=1, name="mirrorscope-anchor-sender")
        self.sending = Backlog(1)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "AnchorBagPipeline":
        settings = crawler.settings
        if not settings.getbool("ANCHOR_BAGS_ENABLED"):
            raise NotConfigured("ANCHOR_BAGS_ENABLED is off")
        params = AnchorParams(window=settings.getint("ANCHOR_WINDOW"))
        pipeline = cls(
            crawler, params, settings.getint("ANCHOR_BAGS_BATCH_SIZE"), settings.getint("ANCHOR_BAGS_FLUSH_PAGES"),
            settings.getfloat("ANCHOR_BAGS_INTERVAL"),
        )
        crawler.signals.connect(pipeline.spider_idle, signal=signals.spider_idle)
        return pipeline

    def open_spider(self) -> None:
        crawl = CrawlContext.of(self.crawler)
        context = multiprocessing.get_context("spawn")
        # Read before any page of this crawl is stored: those reach the worker as messages.
        resume_from = crawl.store.anchor_high_water() if crawl.resumed else None
        self.inbox, self.outbox = context.Queue(maxsize=INBOX_MESSAGES), context.Queue()
        self.sender.start()
        self.worker = context.Process(
            target=maintain_bags, name="mirrorscope-anchor-bags", daemon=True,
            args=(crawl.store.url, self.params, self.flush_pages, resume_from, self.inbox, self.outbox),
        )
        self.worker.start()
        self.timer.start(self.interval, now=False)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem):
            await self.sending.room()
            self.pending.append(item.record)
            if len(self.pending) >= self.batch_size:
                self._dispatch()
        return item

    def _send(self, message: tuple[Any, ...]) -> None:
        self.sending.add(threads.deferToThreadPool(reactor, self.sender, self.inbox.put, message))

    def spider_idle(self) -> None:
        self._dispatch()
        if self.sent_since_flush:
            self.sent_since_flush = 0
            self._send(("flush",))

    async def close_spider(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._dispatch()
        self._send(("close",))
        await self.sending.drain()
        self.sender.stop()
        result = await maybe_deferred_to_future(threads.deferToThread(self._finish))
        if "error" in result:
            self.stats.inc_value("mirrorscope/anchor_bags/errors")
            logger.error("anchor bags: the worker failed: %s", result["error"])
            return
        for name, value in result.items():
            self.stats.set_value(f"mirrorscope/anchor_bags/{name}", value)

    def _dispatch_if_room(self) -> None:
        if not self.sending.full():
            self._dispatch()

    def _dispatch(self) -> None:
        batch, self.pending = self.pending, []
        if not batch:
            return
        links = [link for record in batch for link in record.links]
        self._send((
            "pages", [link.target_url for link in links], [link.anchor for link in links],
            [link.before for link in links], [link.after for link in links],
            [(record.url, record.title) for record in batch if record.title], len(batch),
        ))
        self.sent_since_flush += len(batch)

    def _finish(self) -> dict[str, Any]:
        """The worker's counters once it has flushed and exited (on a thread)."""
        deadline = time.monotonic() + CLOSE_TIMEOUT
        result: dict[str, Any] | None = None
        while result is None and time.monotonic() < deadline:
            try:
                result = self.outbox.get(timeout=1.0)
            except queue.Empty:
                if not self.worker.is_alive():  # died without a word (killed, out of memory)
                    break
        if result is None:
            result = {"error": f"no answer from the worker (exit code {self.worker.exitcode})"}
        self.worker.join(timeout=30)
        if self.worker.is_alive():
            self.worker.terminate()
        return result
