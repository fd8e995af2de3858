"""The crawl's shared state: one object per crawl that the components find in ``from_crawler``.

``CrawlContext`` is a Scrapy extension (``EXTENSIONS``, built by Scrapy once per crawl,
after the spider and before the engine's components). It owns what several components
share: the store and the crawl run, the hosts file's name -> address map, the frontier
policy (traps, blocks, budgets), the spam monitor, and the store writer. Components reach
it with ``CrawlContext.of(crawler)``; a component that is switched off raises
``NotConfigured`` in its own ``from_crawler`` and is simply absent here (``writer`` None,
``outlinks_deferred`` False).

The DNS resolver is the one exception: Scrapy builds it for the process, not for a crawl,
so it reads ``HOSTS_FILE`` itself (``crawler.resolver``).
"""

from __future__ import annotations

import json
import logging
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.utils.job import job_dir

from mirrorscope.crawler.hosts import read_hosts_file
from mirrorscope.storage.db import StoreError, resolve_database_url
from mirrorscope.storage.store import Store

if TYPE_CHECKING:
    from mirrorscope.crawler.frontier import FrontierPolicy
    from mirrorscope.crawler.pipelines import StorePipeline
    from mirrorscope.crawler.shared import PolicyLog, SharedFrontier
    from mirrorscope.crawler.spam import SpamMonitor
    from mirrorscope.storage.rows import StoredVersionRow

logger = logging.getLogger(__name__)

#: The file in ``JOBDIR`` that names the crawl run a resumed crawl continues.
RUN_MARKER = "mirrorscope-run.json"
#: Settings recorded with each crawl run, beside the spider's arguments.
RUN_SETTINGS = ("DEPTH_LIMIT", "CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_MAXSIZE", "ANCHOR_WINDOW", "ALLOW_PRIVATE_ADDRESSES")
#: The stats that count pages not stored as crawled (``StorePipeline``).
LOSS_STATS = ("mirrorscope/store_errors", "mirrorscope/pages_lost")
#: The status of a crawl run that did not store every page as crawled, whatever closed
#: it (Scrapy's reason stays in the run's stats as ``finish_reason``): a lost write is
#: never a clean finish.
LOST_WRITES = "lost-writes"


class CrawlSetupError(Exception):
    """Input the crawl cannot start with; the message is one line."""


class CrawlContext:
    """What the components of one crawl share (see the module docstring)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        settings = crawler.settings
        path = settings.get("HOSTS_FILE")
        #: Name -> address from ``HOSTS_FILE`` (empty without one).
        self.hosts: dict[str, str] = read_hosts_file(path) if path else {}
        #: The store pipeline, once built (None when it is off).
        self.writer: StorePipeline | None = None
        #: Whether a page's outlinks wait for the duplicate pipeline's verdict before they
        #: are scheduled (set by ``DuplicatePipeline``; else the spider schedules them).
        self.outlinks_deferred = False
        #: Whether pages are scored for spam (set by ``SpamScorePipeline``): the spider
        #: then hands each page's parse to the pipeline.
        self.spam_scoring = False
        #: Mirrored locations (``host/prefix``) -> their cluster's canonical location, as the
        #: mirror rounds last judged (set by ``MirrorMiddleware``; empty when it is off).
        self.mirror_sides: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlContext:
        return cls(crawler)

    @classmethod
    def of(cls, crawler: Any) -> CrawlContext:
        """The crawl's context; a crawl whose settings leave it out cannot run."""
        context = crawler.get_extension(cls)
        if context is None:
            raise RuntimeError("mirrorscope.crawler.context.CrawlContext is missing from EXTENSIONS")
        return context

    @classmethod
    def lost_writes_of(cls, crawler: Any) -> str | None:
        """:meth:`lost_writes` of a crawl that has run; None for one that never started."""
        try:
            context = crawler.get_extension(cls)
        except RuntimeError:  # no extensions yet: the crawl never started, nothing was written
            return None
        return context.lost_writes() if context is not None else None

    @cached_property
    def store(self) -> Store:
        """The crawl's store, opened by the first component that needs it."""
        try:
            return Store(resolve_database_url(None, self.crawler.settings.get("DATABASE_URL")))
        except StoreError as exc:
            raise CrawlSetupError(str(exc)) from None

    @cached_property
    def run(self) -> tuple[int, bool, bool]:
        """(run id, resumed, finished before) of the crawl run, opened before anything is queued."""
        return self._open_run(self.crawler.spider, job_dir(self.crawler.settings))

    @property
    def run_id(self) -> int:
        return self.run[0]

    @property
    def resumed(self) -> bool:
        """Whether this crawl continues a run its ``JOBDIR`` names."""
        return self.run[1]

    @property
    def finished(self) -> bool:
        """Whether the run ``JOBDIR`` names had finished (its frontier ran out): the crawl
        then fetches and writes nothing, and the run keeps its record."""
        return self.run[2]

    @cached_property
    def shared(self) -> SharedFrontier | None:
        """The frontier's state in Redis when ``FRONTIER_REDIS_URL`` is set (``crawler.shared``),
        else None: the frontier is this process's own."""
        from mirrorscope.crawler.shared import SharedFrontier

        return SharedFrontier.from_settings(self.crawler.settings)

    @cached_property
    def policy_log(self) -> PolicyLog | None:
        """The shared frontier's log of policy changes (None without one)."""
        from mirrorscope.crawler.shared import PolicyLog

        return PolicyLog(self.shared) if self.shared is not None else None

    @cached_property
    def policy(self) -> FrontierPolicy:
        """Admission to the frontier, shared by the queue, the downloader, the middlewares
        and the spam monitor (and, on a shared frontier, with the other processes)."""
        from mirrorscope.crawler.frontier import FrontierPolicy

        log = self.policy_log
        if log is None:
            return FrontierPolicy.from_settings(self.crawler.settings, self.crawler.stats, self.hosts)
        from mirrorscope.crawler.shared import SharedHostBudget, SharedTrapMonitor

        return FrontierPolicy.from_settings(
            self.crawler.settings, self.crawler.stats, self.hosts,
            budget_cls=lambda policy: SharedHostBudget(policy, log=log),
            traps_cls=lambda limits: SharedTrapMonitor(limits, log=log),
        )

    @cached_property
    def spam(self) -> SpamMonitor:
        """The crawl's spam monitor, built by the first spam component that asks."""
        from mirrorscope.crawler.spam import SpamMonitor

        return SpamMonitor.connected(self.crawler, self)

    @property
    def recrawl(self) -> bool:
        """Whether this crawl re-fetches the stored pages (``RECRAWL``, ``crawler.recrawl``)."""
        return self.crawler.settings.getbool("RECRAWL")

    @cached_property
    def stored_versions(self) -> list[StoredVersionRow]:
        """The stored pages a re-crawl fetches again, with their validators and sketches
        (read once: the spider asks for them, the change pipeline compares with them)."""
        from mirrorscope.detectors.sketch import SCHEME

        return self.store.stored_versions(SCHEME) if self.recrawl else []

    def first_claim(self, kind: str, key: str) -> bool:
        """Whether this process is the first of the crawl to claim ``key`` for ``kind`` (a
        host's cloaking check): always on an in-process frontier; on a shared one, once
        for all processes."""
        return self.shared is None or self.shared.claim(kind, key)

    def unwritten_pages(self) -> bool:
        """Whether the store pipeline holds pages that are not in the store yet."""
        return self.writer is not None and self.writer.holds_pages()

    def lost_writes(self) -> str | None:
        """One line saying how many pages were not stored as crawled; None when none."""
        stats = self.crawler.stats
        errors, lost = (stats.get_value(name, 0) for name in LOSS_STATS)
        if not errors and not lost:
            return None
        return (f"{errors} pages were stored as store-error rows and {lost} not at all "
                f"(the run's status is {LOST_WRITES}; the log says why)")

    def run_status(self, reason: str) -> str:
        """The status a crawl run that Scrapy closed for ``reason`` ends with."""
        return LOST_WRITES if self.lost_writes() else reason

    async def store_written(self) -> None:
        """Write the pending pages now; return once every batch is in the store."""
        if self.writer is not None:
            await self.writer.written()

    def _open_run(self, spider: Any, jobdir: str | None) -> tuple[int, bool, bool]:
        """(run id, resumed, finished before): the run named in ``JOBDIR`` when the store
        still has it, else a new run recorded there."""
        marker = Path(jobdir, RUN_MARKER) if jobdir else None
        if marker is not None and marker.exists():
            run_id = json.loads(marker.read_text()).get("run_id")
            status = self.store.run_status(run_id) if isinstance(run_id, int) else None
            if status == "finished":
                logger.info("crawl run %d of %s finished already: nothing to crawl (another JOBDIR crawls again)", run_id, jobdir)
                return run_id, True, True
            if status is not None:
                self.store.resume_run(run_id)
                logger.info("resuming crawl run %d from the store", run_id)
                return run_id, True, False
        chosen = {name: self.crawler.settings.get(name) for name in RUN_SETTINGS}
        chosen.update(getattr(spider, "run_arguments", dict)())
        if self.shared is not None:
            # Every process of a shared crawl writes to one run: the first starts it.
            run_id = self.shared.shared_run(lambda: self.store.start_run(getattr(spider, "seed_urls", []), chosen))
            return run_id, False, False
        run_id = self.store.start_run(getattr(spider, "seed_urls", []), chosen)
        if marker is not None:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(json.dumps({"run_id": run_id}))
        return run_id, False, False
