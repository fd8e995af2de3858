"""crawler.backlog: callers wait while the consumer is ``limit`` pieces of work behind.

Run on an asyncio loop, as Scrapy's pipelines are (``TWISTED_REACTOR`` is asyncio's)."""

from __future__ import annotations

import asyncio

from twisted.internet import defer

from mirrorscope.crawler.backlog import Backlog


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_callers_wait_while_the_backlog_is_full_and_go_on_when_work_finishes() -> None:
    async def scenario() -> None:
        backlog = Backlog(2)
        first, second = defer.Deferred(), defer.Deferred()
        backlog.add(first)
        await asyncio.wait_for(backlog.room(), 1)  # room for one more
        backlog.add(second)
        waiting = [asyncio.ensure_future(backlog.room()) for _ in range(3)]
        await _settle()
        assert backlog.full() and not any(w.done() for w in waiting)
        first.callback("written")
        await _settle()
        assert all(w.done() for w in waiting) and len(backlog) == 1

    asyncio.run(scenario())


def test_results_and_failures_pass_through_unchanged() -> None:
    backlog = Backlog(1)
    work, failing = defer.Deferred(), defer.Deferred()
    seen: list[object] = []
    backlog.add(work).addCallback(seen.append)
    backlog.add(failing).addErrback(lambda failure: seen.append(failure.value))
    work.callback(3)
    error = RuntimeError("disk full")
    failing.errback(error)
    assert seen == [3, error] and len(backlog) == 0


def test_drain_waits_for_all_work_in_flight_failed_or_not() -> None:
    async def scenario() -> None:
        backlog = Backlog(4)
        works = [defer.Deferred() for _ in range(3)]
        for work in works:
            backlog.add(work)
        drained = asyncio.ensure_future(backlog.drain())
        works[0].callback(None)
        works[1].errback(RuntimeError("lost"))
        await _settle()
        assert not drained.done()
        works[2].callback(None)
        await _settle()
        assert drained.done() and drained.exception() is None and len(backlog) == 0

    asyncio.run(scenario())
