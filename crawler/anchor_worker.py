"""The crawl's anchor-bag worker: a process of its own that keeps the stored signatures
of the anchor bags new links touch up to date (``crawler.anchor_bags.AnchorBagPipeline``
starts it with ``spawn`` and feeds it through a queue).

Haveliwala, Gionis and Indyk's URL bags (WebDB 2000), incrementally
(``detectors.url_bags.UrlBags``): the worker absorbs each batch of pages' links and
titles, and every ``flush_pages`` pages, on ``("flush",)`` and at close writes the
signatures of the bags changed since its last flush. Pairs and clusters are left to
``mirror-report detect`` (``jobs.similar``). Scrapy-free, so the spawned process
imports little.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading
import time
import traceback
from typing import Any

from mirrorscope.detectors.anchors import AnchorParams
from mirrorscope.detectors.url_bags import UrlBags
from mirrorscope.jobs.similar import bags_from_store, signature_rows
from mirrorscope.storage.store import Store

__all__ = ["maintain_bags"]


def leave_with_the_crawl() -> None:
    """In a worker process (the anchor-bag worker, the page parsers), end the process as
    soon as the crawl's process is gone.

    A crawl killed with SIGKILL never sends ``close``, and the worker may then be blocked
    anywhere: in a store write, or half-way through a message whose rest never comes (the
    worker holds the inbox pipe's write end too, so no end of file arrives). A thread that
    waits on the parent's sentinel ends it wherever it is; what it had not flushed is
    rebuilt from the store on resume, and a store write cut short is rolled back.
    """
    parent = multiprocessing.parent_process()
    if parent is None:  # called in the crawl's own process (tests): nothing to outlive
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="mirrorscope-parent-watch", daemon=True).start()


class _Worker:
    """The worker's bags, store and counters between messages."""

    def __init__(self, store: Store, bags: UrlBags, params: AnchorParams, flush_pages: int) -> None:
        self.store, self.bags, self.params, self.flush_pages = store, bags, params, flush_pages
        self.since = 0
        self.stats: dict[str, float] = {
            "absorb_cpu_seconds": 0.0, "flush_seconds": 0.0, "signatures_written": 0, "snapshots": 0, "urls": 0,
            "pages": 0,
        }

    def absorb(self, targets: Any, anchors: Any, befores: Any, afters: Any, titles: Any, pages: int) -> None:
        """Add one batch's links and titles; flush once ``flush_pages`` pages have come."""
        started = time.process_time()
        if targets:
            self.bags.add_links(targets, anchors, befores, afters)
        for url, title in titles:
            self.bags.add_title(url, title)
        self.stats["absorb_cpu_seconds"] += time.process_time() - started
        self.stats["pages"] += pages
        self.since += pages
        if self.since >= self.flush_pages:
            self.flush()

    def flush(self) -> None:
        """Store the signatures of the bags changed since the last flush."""
        started = time.monotonic()
        self.since = 0
        changed = self.bags.changed_signatures()
        if changed.urls:
            self.store.write_anchor_signatures(signature_rows(changed, self.params))
        self.stats["signatures_written"] += len(changed.urls)
        self.stats["snapshots"] += int(changed.refreshed)
        self.stats["flush_seconds"] += time.monotonic() - started

    def counters(self) -> dict[str, float]:
        self.stats["urls"] = len(self.bags)
        return {name: round(value, 3) if isinstance(value, float) else value for name, value in self.stats.items()}


def maintain_bags(
    database_url: str, params: AnchorParams, flush_pages: int, resume_from: tuple[int, int] | None, inbox: Any, outbox: Any
) -> None:
    """The worker's main: takes messages from ``inbox`` until ``("close",)``, then puts its
    counters (or ``{"error": text}``) on ``outbox``.

    ``("pages", targets, anchors, befores, afters, titles, pages)``: one entry per link,
    (URL, title) pairs and the number of pages they came from; ``("flush",)``: store the
    signatures of the bags changed since the last flush (also every ``flush_pages`` pages
    and at close). A resumed crawl (``resume_from``: the store's high water when the crawl
    opened) first rebuilds the bags of what the store held then; the pages stored since
    arrive as messages and are not counted twice.
    """
    leave_with_the_crawl()
    store = None
    try:
        store = Store(database_url, migrate=False)
        bags = bags_from_store(store, params, resume_from) if resume_from is not None else UrlBags(params)
        worker = _Worker(store, bags, params, flush_pages)
        while (message := inbox.get())[0] != "close":
            if message[0] == "pages":
                worker.absorb(*message[1:])
            elif message[0] == "flush":
                worker.flush()
        worker.flush()
        outbox.put(worker.counters())
    except Exception:
        outbox.put({"error": traceback.format_exc(limit=5)})
    finally:
        if store is not None:
            store.close()
