"""Scrapy's downloader with its per-host concurrency limit actually enforced.

Scrapy 2.18/2.19 under the asyncio reactor: ``Downloader._process_queue`` pops queued
requests while ``slot.free_transfer_slots() > 0``, but a popped request joins
``slot.transferring`` only when its download task first runs, which asyncio does after
the loop. With no download delay the loop therefore empties the slot's whole queue at
once, whatever ``CONCURRENT_REQUESTS_PER_DOMAIN`` says. This subclass reserves the transfer slot at the
moment the request is popped. Politeness is a promise to other people's servers;
``tests/test_crawl.py`` measures it on a real server.

It also drops, as it pops them, requests whose host was blocked (spam, a trap) after
they had left the scheduler: up to ``CONCURRENT_REQUESTS`` requests wait in the
downloader's per-host queues, and a link farm found while its members' pages arrive
has most of them. They fail with outcome ``blocked``, counted in
``frontier/dropped/downloader-blocked``.

On a shared frontier (``FRONTIER_REDIS_URL``, ``crawler.shared``) every request, robots.txt
included, first takes one of its host's ``CONCURRENT_REQUESTS_PER_DOMAIN`` slots in Redis,
so that the limit holds across every process of the crawl; a request whose host has them
all waits in its slot and is tried again every ``SLOT_RETRY`` seconds.
"""

from __future__ import annotations

from time import monotonic
from typing import Any

from scrapy import Request, signals
from scrapy.utils.httpobj import urlparse_cached

from scrapy.core.downloader import Downloader, Slot
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import _schedule_coro
from twisted.python.failure import Failure

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.middlewares import RefusedRequest

#: Seconds between tries for a crawl-wide in-flight slot of a host whose slots are taken.
SLOT_RETRY = 0.05
#: Request meta key: the crawl-wide in-flight slot a request holds (shared frontier).
SHARED_SLOT = "mirrorscope_shared_slot"


class PoliteDownloader(Downloader):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        context = CrawlContext.of(crawler)
        self.policy = context.policy if crawler.settings.getbool("FRONTIER_ADMISSION") else None
        self.shared = context.shared
        if self.shared is not None:
            crawler.signals.connect(self._left, signal=signals.request_left_downloader)

    def _take_slot(self, request: Request) -> bool:
        """A crawl-wide in-flight slot for ``request``'s host (always, off a shared frontier)."""
        if self.shared is None or SHARED_SLOT in request.meta:
            return True
        host = urlparse_cached(request).hostname or ""
        token = f"{id(request):x}-{monotonic():.6f}"
        if not self.shared.acquire(host, token):
            return False
        request.meta[SHARED_SLOT] = (host, token)
        return True

    def _left(self, request: Request) -> None:
        """The download ended: its crawl-wide slot is free for any process."""
        held = request.meta.pop(SHARED_SLOT, None)
        if held is not None and self.shared is not None:
            self.shared.free(*held)

    def _refused(self, request: Any) -> RefusedRequest | None:
        reason = self.policy.blocked(request.url) if self.policy is not None else None
        if reason is None:
            return None
        self.crawler.stats.inc_value("frontier/dropped/downloader-blocked")
        return RefusedRequest("blocked", f"host blocked: {reason}")

    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall:
            return
        now = monotonic()
        delay = slot.download_delay()
        if delay:
            penalty = delay - now + slot.lastseen
            if penalty > 0:
                slot.latercall = call_later(penalty, self._latercall, slot)
                return
        while slot.queue and slot.free_transfer_slots() > 0:
            request, queue_dfd = slot.queue[0]
            blocked = self.policy is not None and self.policy.blocked(request.url) is not None
            if not blocked and not self._take_slot(request):
                # Every crawl-wide slot of the host is taken (by this or another process).
                slot.latercall = call_later(SLOT_RETRY, self._latercall, slot)
                return
            slot.lastseen = now
            slot.queue.popleft()
            if (refused := self._refused(request)) is not None:
                queue_dfd.errback(Failure(refused))
                continue
            # Reserve now; Downloader._download adds it again (a set) and removes it
            # when the response or the failure arrives.
            slot.transferring.add(request)
            _schedule_coro(self._wait_for_download(slot, request, queue_dfd))
            if delay:
                self._process_queue(slot)
                break
