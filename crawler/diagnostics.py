"""Where a crawl waits: a sampler of the engine's queues, off unless asked for.

``-s CRAWL_SAMPLE_FILE=path`` writes one JSON line every ``CRAWL_SAMPLE_INTERVAL``
seconds: requests in the downloader (in flight and queued, per host), each busy host's
download delay (AutoThrottle's), the scheduler's length and the depths and domains it
holds, Scrapy's scraper slot (responses waiting for the spider and the item pipelines),
the store writer's and the anchor-bag sender's backlogs, robots.txt files pending, and
the CPU seconds of the process and of the reactor's thread. ``benchmarks/crawl.py``
reads the file to say what the crawl waited on; a crawl without the setting does not
build the sampler at all (``NotConfigured``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import IO, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import defer, task


class CrawlSampler:
    """A Scrapy extension writing the crawl's queues to ``CRAWL_SAMPLE_FILE`` (module docstring)."""

    def __init__(self, crawler: Any, path: str, interval: float) -> None:
        self.crawler = crawler
        self.path = path
        self.interval = interval
        self.out: IO[str] | None = None
        self.started = time.monotonic()
        self.idle_signals = 0
        self.timer = task.LoopingCall(self.sample)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlSampler:
        path = crawler.settings.get("CRAWL_SAMPLE_FILE")
        if not path:
            raise NotConfigured  # without a message: Scrapy then logs no warning for the default
        return cls(crawler, path, crawler.settings.getfloat("CRAWL_SAMPLE_INTERVAL"))

    def spider_opened(self) -> None:
        self.out = open(self.path, "w", encoding="utf-8")
        self.timer.start(self.interval, now=True)

    def spider_idle(self) -> None:
        self.idle_signals += 1

    def spider_closed(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self.sample()
        if self.out is not None:
            self.out.close()
            self.out = None

    def sample(self) -> None:
        if self.out is None:
            return
        engine = self.crawler.engine
        row = {
            "t": round(time.monotonic() - self.started, 3),
            "cpu": round(time.process_time(), 3),
            "reactor_cpu": round(time.thread_time(), 3),
            "idle_signals": self.idle_signals,
            "pages": self.crawler.stats.get_value("response_received_count", 0),
            **self._downloader(engine.downloader),
            **self._scheduler(engine),
            **self._scraper(engine.scraper.slot),
            **self._backlogs(),
        }
        self.out.write(json.dumps(row) + "\n")

    @staticmethod
    def _downloader(downloader: Any) -> dict[str, Any]:
        in_flight = {key: len(slot.transferring) for key, slot in downloader.slots.items() if slot.transferring}
        queued = {key: len(slot.queue) for key, slot in downloader.slots.items() if slot.queue}
        busy = in_flight.keys() | queued.keys()
        delays = {key: round(downloader.slots[key].delay, 4) for key in busy}
        return {"active": len(downloader.active), "in_flight": in_flight, "slot_queued": queued, "delays": delays}

    @staticmethod
    def _scheduler(engine: Any) -> dict[str, Any]:
        scheduler = engine._slot.scheduler if engine._slot is not None else None
        queue = getattr(scheduler, "mqs", None)
        if queue is None:
            return {"scheduled": 0}
        levels = getattr(queue, "levels", {})
        return {
            "scheduled": len(queue),
            "domains_by_depth": {str(priority): len(slots) for priority, slots in sorted(levels.items())},
            "hosts_queued": dict(Counter(getattr(queue, "host_len", {})).most_common(8)),
        }

    @staticmethod
    def _scraper(slot: Any) -> dict[str, Any]:
        if slot is None:
            return {}
        return {"scraper_queue": len(slot.queue), "scraper_active": len(slot.active), "scraper_bytes": slot.active_size,
                "items_in_pipelines": slot.itemproc_size}

    def _backlogs(self) -> dict[str, Any]:
        pipelines = {type(p).__name__: p for p in self.crawler.engine.scraper.itemproc.middlewares}
        row: dict[str, Any] = {}
        if (store := pipelines.get("StorePipeline")) is not None:
            row["store_batches"] = len(store.writes)
            row["store_pending"] = len(store.pending)
        if (anchors := pipelines.get("AnchorBagPipeline")) is not None:
            row["anchor_sending"] = len(anchors.sending)
        if (sketches := pipelines.get("SketchPipeline")) is not None:
            row["sketch_pending"] = len(sketches.pending)
            row["sketch_running"] = len(sketches.running)
        robots = [m for m in self.crawler.engine.downloader.middleware.middlewares if hasattr(m, "_parsers")]
        if robots:
            row["robots_pending"] = sum(isinstance(p, defer.Deferred) for p in robots[0]._parsers.values())
        return row
