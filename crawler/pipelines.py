"""Item pipelines: what happens to a page between the spider and the store."""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer, reactor, task, threads
from twisted.python.threadpool import ThreadPool

from mirrorscope.crawler.backlog import Backlog
from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.items import PageItem
from mirrorscope.detectors.lsh import LSHIndex
from mirrorscope.detectors.spam import page_verdict
from mirrorscope.detectors.sketch import SCHEME, DocumentSketch, SketchParams, containment_mod_m, resemblance_min_s, sketch_many
from mirrorscope.jobs.mirrors import supersedes
from mirrorscope.storage.records import PageRecord, SketchRecord, WriteResult

logger = logging.getLogger(__name__)

#: Batches of pages the store's writer thread may have in hand (one written, one waiting)
#: before pages wait in Scrapy's scraper slot (``crawler.backlog``).
MAX_PENDING_WRITES = 2

def sketch_record(sketch: DocumentSketch) -> SketchRecord:
    """The store's form of a detector's sketch: parameters as columns, arrays as bytes."""
    p = sketch.params
    return SketchRecord(
        scheme=p.scheme, seed=p.seed, w=p.w, s=p.s, m=p.m, signature_size=p.signature_size,
        super_groups=p.super_groups, super_size=p.super_size, token_count=sketch.token_count,
        shingle_count=sketch.shingle_count, too_short=sketch.too_short, fingerprint=sketch.fingerprint,
        data=sketch.to_bytes(),
    )


class BatchThreadPipeline:
    """Base of the pipelines whose work is CPU-bound: items wait in a batch
    (``batch_size`` items, or whatever is pending after ``interval`` seconds), and each
    batch is worked on a thread of the pipeline's own by :meth:`work`. One pass over many
    pages costs less than one per page, numpy's kernels and lxml's parser release the
    GIL, and the reactor keeps downloading meanwhile. An item moves on once its batch is
    done, so the pipelines after it see the work's results."""

    thread_name = "mirrorscope-batch"

    def __init__(self, batch_size: int, interval: float):
        self.batch_size = batch_size
        self.interval = interval
        self.pending: list[tuple[PageItem, defer.Deferred]] = []
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name=self.thread_name)
        self.running: set[defer.Deferred] = set()
        self.timer = task.LoopingCall(self._flush)

    def wants(self, item: PageItem) -> bool:
        """True when ``item`` has work for this pipeline."""
        raise NotImplementedError

    def work(self, items: list[PageItem]) -> None:
        """Do the work of one batch (on the pipeline's thread)."""
        raise NotImplementedError

    def open_spider(self) -> None:
        self.pool.start()
        self.timer.start(self.interval, now=False)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem) and self.wants(item):
            done: defer.Deferred = defer.Deferred()
            self.pending.append((item, done))
            if len(self.pending) >= self.batch_size:
                self._flush()
            await maybe_deferred_to_future(done)
        return item

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        if not batch:
            return
        work = threads.deferToThreadPool(reactor, self.pool, self.work, [item for item, _ in batch])
        self.running.add(work)
        work.addBoth(self._release, work, batch)

    def _release(self, _: Any, work: defer.Deferred, batch: list[tuple[PageItem, defer.Deferred]]) -> None:
        self.running.discard(work)
        for _, done in batch:
            done.callback(None)

    async def close_spider(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._flush()
        try:
            await maybe_deferred_to_future(defer.DeferredList(list(self.running)))
        finally:
            self.pool.stop()


class SketchPipeline(BatchThreadPipeline):
    """Sketches every HTML page from its canonical tokens (``detectors.sketch``).

    Parameters come from the settings ``SHINGLE_SIZE``, ``SKETCH_MIN_S``, ``SKETCH_MOD_M``
    and ``SKETCH_SEED``; the signature (84 values in 6 super-shingles of 14) is Henzinger's.
    Pages are sketched in batches of ``SKETCH_BATCH_SIZE`` (or whatever is pending after
    ``SKETCH_BATCH_INTERVAL`` seconds) on a thread of their own. A page that cannot be
    sketched is logged and stored without a sketch.
    """

    thread_name = "mirrorscope-sketch"

    def __init__(self, params: SketchParams, batch_size: int, interval: float):
        super().__init__(batch_size, interval)
        self.params = params

    @classmethod
    def from_crawler(cls, crawler: Any) -> "SketchPipeline":
        settings = crawler.settings
        params = SketchParams(
            seed=settings.getint("SKETCH_SEED"), w=settings.getint("SHINGLE_SIZE"),
            s=settings.getint("SKETCH_MIN_S"), m=settings.getint("SKETCH_MOD_M"),
        )
        return cls(params, settings.getint("SKETCH_BATCH_SIZE"), settings.getfloat("SKETCH_BATCH_INTERVAL"))

    def wants(self, item: PageItem) -> bool:
        return item.tokens is not None

    def work(self, items: list[PageItem]) -> None:
        try:
            sketches = sketch_many([item.tokens or [] for item in items], self.params)
        except Exception:
            logger.exception("could not sketch a batch of %d pages; they are stored without sketches", len(items))
            return
        for item, sketch in zip(items, sketches):
            item.record.sketch = sketch_record(sketch)
            item.sketch = sketch
            item.tokens = None


class SpamScorePipeline:
    """Scores every HTML page for spam (``detectors.spam.page_verdict``: keyword stuffing,
    hidden text, doorways, stuffed titles and anchors, ...) and records the score and its
    reasons on the page. The page's features, the markup pass over its tree included,
    were measured where it was parsed (``crawler.page_analysis``, in a worker process);
    the verdict from them is a few comparisons. Runs before the sketch pipeline, as the
    spam pipeline's host verdicts read the scores.
    """

    @classmethod
    def from_crawler(cls, crawler: Any) -> "SpamScorePipeline":
        # The spider measures each page's features only when someone scores them.
        CrawlContext.of(crawler).spam_scoring = True
        return cls()

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem) or item.spam_input is None:
            return item
        (features, error, words), item.spam_input = item.spam_input, None
        record = item.record
        if features is None:
            logger.error("could not score %s for spam; stored without a score: %s", record.url, error)
            return item
        try:
            verdict = page_verdict(features)
        except Exception:
            logger.exception("could not score %s for spam; stored without a score", record.url)
            return item
        record.spam_score = verdict.score
        record.spam_reasons = verdict.messages
        record.word_count = words
        return item


class DuplicatePipeline:
    """The online near-duplicate index: each sketched page is checked against the pages
    before it, then expanded (its outlinks scheduled) unless it is a duplicate.

    Exact duplicates (same token-sequence fingerprint) short-circuit. Otherwise LSH
    banding over the 84-value signature (``detectors.lsh.LSHIndex``, bands chosen for
    ``DUPLICATE_THRESHOLD``) gives candidates, each confirmed by the MIN_s resemblance
    estimate; the best at or above the threshold is the page's ``duplicate_of``.
    Candidates whose MOD_m containment of the new page is at least
    ``CONTAINMENT_THRESHOLD`` are recorded as containers (only among LSH candidates: a
    page much shorter than its container has low resemblance and may not be one).
    Duplicates' outlinks are not followed unless ``EXPAND_DUPLICATES``, or unless the page
    lies on the canonical side of a mirror whose other side holds its original
    (``crawler.mirrors``: the crawl refuses that side's links). Pages without a
    sketch (non-HTML, failures) are only expanded.
    """

    def __init__(self, crawler: Any, threshold: float, containment: float, expand_duplicates: bool):
        self.crawler = crawler
        self.threshold = threshold
        self.containment = containment
        self.expand_duplicates = expand_duplicates
        self.index = LSHIndex(threshold=threshold)
        self.exact: dict[int, str] = {}
        self.urls: list[str] = []
        self.sketches: list[DocumentSketch] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DuplicatePipeline":
        settings = crawler.settings
        # This pipeline schedules the outlinks of pages that are not duplicates.
        CrawlContext.of(crawler).outlinks_deferred = True
        return cls(
            crawler, settings.getfloat("DUPLICATE_THRESHOLD"), settings.getfloat("CONTAINMENT_THRESHOLD"),
            settings.getbool("EXPAND_DUPLICATES"),
        )

    def open_spider(self) -> None:
        context = CrawlContext.of(self.crawler)
        if context.policy_log is not None:
            context.policy_log.attach(self)
        if context.resumed:
            # Sketches of an earlier scheme (a crawl resumed across an upgrade) compare with none made now.
            for row in context.store.sketches(SCHEME):
                self._index(row["url"], DocumentSketch.from_bytes(row["sketch"].data))

    def replay(self, event: tuple[Any, ...]) -> None:
        """A page another process of a shared crawl fetched (``PolicyLog``): indexed as
        this process indexes its own originals."""
        if event[0] != "page":
            return
        record, sketch = event[1], event[2]
        if sketch is not None and record.outcome == "ok" and record.duplicate_of is None and sketch.fingerprint not in self.exact:
            self._index(record.url, sketch)

    def _index(self, url: str, sketch: DocumentSketch) -> None:
        self.exact.setdefault(sketch.fingerprint, url)
        self.index.insert(len(self.urls), sketch.signature)
        self.urls.append(url)
        self.sketches.append(sketch)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem):
            return item
        if item.sketch is not None:
            self._check(item.record, item.sketch)
        if (log := CrawlContext.of(self.crawler).policy_log) is not None:
            # A shared frontier: the other processes index this page and see it in their
            # mirror view (crawler.shared.PolicyLog), as if they had fetched it.
            log.record("page", item.record, item.sketch)
        if item.record.duplicate_of is None or self.expand_duplicates or self._supersedes(item.record):
            self.crawler.spider.expand(item.outlinks)
        elif item.outlinks:
            self.crawler.stats.inc_value("mirrorscope/duplicate_links_not_followed", len(item.outlinks))
        return item

    def _supersedes(self, record: PageRecord) -> bool:
        """A duplicate on the canonical side of a mirror whose original lies on the mirror
        side: the crawl refuses the original's links, so this page's are followed."""
        sides = CrawlContext.of(self.crawler).mirror_sides
        return bool(sides) and supersedes(sides, record.url, record.duplicate_of)

    def _check(self, record: PageRecord, sketch: DocumentSketch) -> None:
        original = self.exact.get(sketch.fingerprint)
        if original is not None and original != record.url and sketch.token_count:
            record.duplicate_of, record.duplicate_kind, record.duplicate_score = original, "identical", 1.0
            self.crawler.stats.inc_value("mirrorscope/duplicates/identical")
            return
        best, best_score = None, self.threshold
        for candidate in self.index.query(sketch.signature).tolist():
            other = self.sketches[candidate]
            if self.urls[candidate] == record.url:
                continue
            score = resemblance_min_s(sketch, other)
            if score >= best_score:
                best, best_score = candidate, score
            elif sketch.mod_m.size and (inside := containment_mod_m(sketch, other)) >= self.containment:
                record.contained_in.append((self.urls[candidate], round(inside, 4)))
        if best is not None:
            record.duplicate_of, record.duplicate_kind, record.duplicate_score = self.urls[best], "near", round(best_score, 4)
            self.crawler.stats.inc_value("mirrorscope/duplicates/near")
        else:
            self._index(record.url, sketch)


class StorePipeline:
    """Writes pages to the spider's store in batches, on a thread of its own.

    A batch is written when ``STORE_BATCH_SIZE`` pages or ``STORE_BATCH_LINKS`` links are
    pending or ``STORE_FLUSH_INTERVAL`` seconds have passed, at close, and when
    :func:`store_written` asks. One writer thread keeps batches in order and keeps the
    database's latency off the reactor. The store writes a batch it refuses page by page
    (``storage.crawl``): pages it stored as ``store-error`` rows are counted in
    ``mirrorscope/store_errors``, pages not stored at all in ``mirrorscope/pages_lost``,
    each batch's once in the log; the crawl goes on, and its run does not end clean
    (``CrawlContext.lost_writes``).
    """

    def __init__(self, crawler: Any, batch_size: int, batch_links: int, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.batch_size, self.batch_links = batch_size, batch_links
        self.interval = interval
        self.pending: list[PageRecord] = []
        self.pending_links = 0
        self.writes = Backlog(MAX_PENDING_WRITES)
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="mirrorscope-store")
        self.last_flush = time.monotonic()
        self.timer = task.LoopingCall(self._flush_if_due)
        #: The shared frontier's extension (``crawler.shared.SharedCrawl``), when there is one.
        self.shared: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "StorePipeline":
        settings = crawler.settings
        writer = cls(
            crawler, settings.getint("STORE_BATCH_SIZE"), settings.getint("STORE_BATCH_LINKS"), settings.getfloat("STORE_FLUSH_INTERVAL")
        )
        CrawlContext.of(crawler).writer = writer
        return writer

    def open_spider(self) -> None:
        context = CrawlContext.of(self.crawler)
        self.store, self.run_id = context.store, context.run_id
        if context.shared is not None:
            from mirrorscope.crawler.shared import SharedCrawl

            self.shared = self.crawler.get_extension(SharedCrawl)
        self.pool.start()
        self.timer.start(self.interval / 2, now=False)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem):
            # A database slower than the crawl makes every page wait here, in Scrapy's
            # bounded scraper slot, not in an unbounded backlog of batches.
            await self.writes.room()
            self.pending.append(item.record)
            self.pending_links += len(item.record.links)
            if len(self.pending) >= self.batch_size or self.pending_links >= self.batch_links:
                self._flush()
        return item

    def _flush_if_due(self) -> None:
        if self.pending and not self.writes.full() and time.monotonic() - self.last_flush >= self.interval:
            self._flush()

    def _flush(self) -> None:
        batch, self.pending, self.pending_links = self.pending, [], 0
        self.last_flush = time.monotonic()
        if not batch:
            return
        d = threads.deferToThreadPool(reactor, self.pool, self.store.write_pages, batch, self.run_id)
        d.addCallbacks(self._written, self._failed, errbackArgs=(batch,))
        if self.shared is not None:
            # The shared frontier's leases on these URLs end once they are stored (or lost:
            # fetching them again would not store them either).
            d.addBoth(self._stored, [r.url for r in batch])
        self.writes.add(d)

    def _stored(self, result: Any, urls: list[str]) -> Any:
        try:
            self.shared.stored(urls)  # type: ignore[union-attr]
        except Exception as exc:  # Redis down: the leases expire with this process
            logger.error("frontier: ending the leases of %d stored pages failed: %s", len(urls), exc)
        return result

    def _written(self, result: WriteResult) -> None:
        self.stats.inc_value("mirrorscope/page_writes", result.stored)
        if result.errors:
            self.stats.inc_value("mirrorscope/store_errors", len(result.errors))
            url, error = result.errors[0]
            logger.error("the store refused %d pages, stored as store-error rows; first %r: %r", len(result.errors), url, error)
        if result.lost:
            self._lost(len(result.lost), *result.lost[0])

    def _failed(self, failure: Any, batch: list[PageRecord]) -> None:
        # The first line: the rest is the statement and its parameters, a batch's links.
        self._lost(len(batch), batch[0].url, failure.getErrorMessage().split("\n", 1)[0])

    def _lost(self, count: int, url: str, error: str) -> None:
        self.stats.inc_value("mirrorscope/pages_lost", count)
        logger.error("%d pages could not be stored at all; first %r: %r", count, url, error)

    def holds_pages(self) -> bool:
        """Whether pages are pending or being written."""
        return bool(self.pending or self.writes.running)

    async def written(self) -> None:
        """Write the pending pages now; return once every batch is in the store."""
        self._flush()
        await self.writes.drain()

    async def close_spider(self) -> None:
        if self.timer.running:
            self.timer.stop()
        try:
            await self.written()
        finally:
            self.pool.stop()
