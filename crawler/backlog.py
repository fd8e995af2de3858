"""A bound on the work a pipeline hands to a slower consumer (a writer thread, a worker).

Scrapy bounds what a crawl holds in memory by the responses in its scraper slot
(``SCRAPER_SLOT_MAX_ACTIVE_SIZE``): a response stays there until every item it produced
has passed the item pipelines. A pipeline that queues pages for a thread and returns
at once takes its pages out of that bound. When the consumer is slower than the crawl
(SQLite writing 300 links a page, the anchor-bag worker), the queue grows with the
crawl (docs/MEASUREMENTS.md: 2,154 pages waiting for the store at 0.8 GB).

:class:`Backlog` makes every item wait while the consumer is ``limit`` units behind, so
pages back up in Scrapy's bounded slot and the downloads pause.
"""

from __future__ import annotations

from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer


class Backlog:
    """Deferreds of work in flight, at most ``limit`` before :meth:`room` makes callers wait."""

    def __init__(self, limit: int):
        self.limit = limit
        self.running: set[defer.Deferred] = set()
        self._waiters: list[defer.Deferred] = []

    def __len__(self) -> int:
        return len(self.running)

    def full(self) -> bool:
        return len(self.running) >= self.limit

    def add(self, work: defer.Deferred) -> defer.Deferred:
        """Track ``work`` until it fires (its result passes through unchanged)."""
        self.running.add(work)
        work.addBoth(self._done, work)
        return work

    async def room(self) -> None:
        """Return once fewer than ``limit`` pieces of work are in flight."""
        while self.full():
            waiter: defer.Deferred = defer.Deferred()
            self._waiters.append(waiter)
            await maybe_deferred_to_future(waiter)

    async def drain(self) -> None:
        """Return once all work in flight has fired."""
        while self.running:
            await maybe_deferred_to_future(defer.DeferredList(list(self.running), consumeErrors=True))

    def _done(self, result: Any, work: defer.Deferred) -> Any:
        self.running.discard(work)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(None)
        return result
