"""Re-crawls: the stored pages fetched again with conditional requests, and each one's
change recorded (``detectors.page_change``).

``scrapy crawl web -a recrawl=1`` (``mirror-report crawl --recrawl``) starts a new crawl
run that requests every stored HTML page (each one with a sketch) again, sending back the
validators its last fetch stored: ``If-None-Match`` with the ``ETag``, else
``If-Modified-Since`` with the ``Last-Modified``. A 304 Not Modified is the page
unchanged, without a body: its row is only marked fetched by the new run (links, sketch
and title kept). Links to URLs the store does not hold are followed as in any crawl, so a
page that moved is found where its site now links to it.

:class:`ChangePipeline` (item pipeline 800, after the sketch, before the write) keeps the
stored sketches read when the run opened, holds each re-fetched page's new sketch or
outcome, and at close classifies them all at once: unchanged, changed (with the
resemblance of the two sketches), gone or moved (a gone page's old sketch on a page of its
host that the store did not hold), written to ``page_changes``. What a re-fetch could not
reach (a timeout, a 5xx, a refusal by the frontier) is not a change: the stored page is
kept as it was and nothing is recorded for it. Off (``NotConfigured``) unless ``RECRAWL``.

:class:`ConditionalAutoThrottle` is Scrapy's AutoThrottle, except that a 304 may lower a
host's delay as a 200 does. Scrapy lets only 200s lower it, because error pages are small
and fast and would drive the delay down; a 304 is the normal answer to a conditional
request, and a re-crawl made mostly of them never left the start delay.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import numpy as np
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.extensions.throttle import AutoThrottle

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.items import PageItem
from mirrorscope.detectors.page_change import FETCHED, KINDS, MISSING, NOT_MODIFIED, ChangeParams, classify
from mirrorscope.detectors.sketch import DocumentSketch
from mirrorscope.storage.rows import StoredVersionRow

logger = logging.getLogger(__name__)

#: The spider's request meta key of a stored page's re-fetch.
RECRAWL_META = "recrawl"
#: Outcomes of a re-fetched URL that say its page is no longer there as HTML.
_GONE = ("redirect", "non-html", "empty", "binary")


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The validators to send back: ``If-None-Match`` when an ``ETag`` is stored (a
    server evaluates it before ``If-Modified-Since``, RFC 9110 13.2.2), else
    ``If-Modified-Since`` with the stored ``Last-Modified``; none when neither is."""
    if etag:
        return {"If-None-Match": etag}
    if last_modified:
        return {"If-Modified-Since": last_modified}
    return {}


def http_date(value: str | None) -> datetime | None:
    """A ``Last-Modified`` header as a UTC datetime; None when absent or unreadable."""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def fetch_kind(outcome: str) -> int | None:
    """What a re-fetch's outcome says of the stored page (``detectors.page_change``
    fetch codes), None when it says nothing (a failure, a refusal)."""
    if outcome == "http-304":
        return NOT_MODIFIED
    if outcome == "ok":
        return FETCHED
    if outcome in _GONE or (outcome.startswith("http-4") and outcome != "http-429"):
        return MISSING
    return None


class ChangePipeline:
    """Records each stored page's change in a re-crawl (see the module docstring)."""

    def __init__(self, crawler: Any, params: ChangeParams):
        self.crawler = crawler
        self.params = params
        self.stored: dict[str, int] = {}
        self.versions: list[StoredVersionRow] = []
        # Index of a stored page -> (fetch code, its new sketch or None, Last-Modified, fetched at).
        self.seen: dict[int, tuple[int, DocumentSketch | None, str | None, datetime]] = {}
        # Pages the store did not hold: (URL, host, sketch).
        self.found: list[tuple[str, str, DocumentSketch]] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> "ChangePipeline":
        settings = crawler.settings
        if not settings.getbool("RECRAWL"):
            raise NotConfigured  # without a message: Scrapy then logs no warning for the default
        params = ChangeParams(
            move_threshold=settings.getfloat("CHANGE_MOVE_THRESHOLD"), complete_below=settings.getfloat("CHANGE_COMPLETE_BELOW"),
        )
        return cls(crawler, params)

    def open_spider(self) -> None:
        context = CrawlContext.of(self.crawler)
        self.versions = context.stored_versions
        self.stored = {row["url"]: i for i, row in enumerate(self.versions)}

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem):
            return item
        record = item.record
        index = self.stored.get(record.url)
        if index is None:
            if record.outcome == "ok" and item.sketch is not None:
                self.found.append((record.url, record.host, item.sketch))
            return item
        kind = fetch_kind(record.outcome)
        if kind == FETCHED and item.sketch is None:
            kind = None  # fetched, but not sketched (the sketch pipeline logged why)
        if kind is None:
            self.crawler.stats.inc_value("mirrorscope/recrawl/unreachable")
            raise DropItem(f"{record.url}: {record.outcome} on a re-fetch; the stored page is kept", log_level="DEBUG")
        self.seen[index] = (kind, item.sketch, record.last_modified, record.fetched_at)
        if kind == NOT_MODIFIED:
            self.crawler.stats.inc_value("mirrorscope/recrawl/not_modified")
            raise DropItem(f"{record.url}: 304 Not Modified", log_level="DEBUG")
        return item

    def changes(self) -> list[dict[str, Any]]:
        """The ``page_changes`` rows of what the re-crawl saw, classified all at once."""
        indices = sorted(self.seen)
        if not indices:
            return []
        old = [DocumentSketch.from_bytes(self.versions[i]["sketch"]) for i in indices]
        new = [self.seen[i][1] or sketch for i, sketch in zip(indices, old)]
        hosts = sorted({self.versions[i]["host"] for i in indices} | {host for _, host, _ in self.found})
        code = {host: k for k, host in enumerate(hosts)}
        signatures = np.stack([s.signature for s in old])
        found_signatures = np.stack([s.signature for _, _, s in self.found]) if self.found else np.zeros((0, signatures.shape[1]), dtype=np.uint64)
        result = classify(
            np.array([self.seen[i][0] for i in indices]),
            np.array([s.fingerprint for s in old], dtype=np.uint64), np.array([s.fingerprint for s in new], dtype=np.uint64),
            signatures, np.stack([s.signature for s in new]),
            np.array([code[self.versions[i]["host"]] for i in indices]),
            np.array([code[host] for _, host, _ in self.found], dtype=np.int64), found_signatures, self.params,
        )
        rows = []
        for k, i in enumerate(indices):
            _, _, modified, fetched_at = self.seen[i]
            kind = KINDS[result.kind[k]]
            resemblance = float(result.resemblance[k])
            moved_to = self.found[result.moved_to[k]][0] if result.moved_to[k] >= 0 else None
            rows.append({
                "page_id": self.versions[i]["page_id"], "kind": kind,
                "resemblance": None if np.isnan(resemblance) else round(resemblance, 4), "moved_to": moved_to,
                "fetched_at": fetched_at,
                "last_modified": http_date(modified) if self.seen[i][0] != NOT_MODIFIED else http_date(self.versions[i]["last_modified"]),
            })
        return rows

    def close_spider(self) -> None:
        context = CrawlContext.of(self.crawler)
        if context.finished:
            return
        rows = self.changes()
        store = context.store
        store.write_changes(context.run_id, rows)
        unchanged = [self.versions[i]["page_id"] for i, seen in self.seen.items() if seen[0] == NOT_MODIFIED]
        store.touch_pages(unchanged, context.run_id, datetime.now(timezone.utc))
        counts = {kind: sum(1 for r in rows if r["kind"] == kind) for kind in KINDS}
        for kind, count in counts.items():
            self.crawler.stats.set_value(f"mirrorscope/recrawl/{kind}", count)
        logger.info(
            "re-crawl of %d stored pages: %s",
            len(self.versions), ", ".join(f"{count} {kind}" for kind, count in counts.items()),
        )


class ConditionalAutoThrottle(AutoThrottle):
    """AutoThrottle where a 304 adjusts a host's delay as a 200 does (module docstring)."""

    def __init__(self, crawler: Any):
        super().__init__(crawler)
        self.not_modified_lowers = crawler.settings.getbool("AUTOTHROTTLE_304_LOWERS_DELAY")

    def _adjust_delay(self, slot: Any, latency: float, response: Any) -> None:
        if response.status != 304 or not self.not_modified_lowers:
            super()._adjust_delay(slot, latency, response)
            return
        # Scrapy's rule for a 200: the mean of the old delay and latency / concurrency,
        # never below the latter, within [DOWNLOAD_DELAY, AUTOTHROTTLE_MAX_DELAY].
        target = latency / self.target_concurrency
        slot.delay = min(max(self.mindelay, max(target, (slot.delay + target) / 2.0)), self.maxdelay)
