"""crawler.pipelines.StorePipeline: batches bounded by pages and by links, written to the
real store (SQLite here; the store's own tests cover PostgreSQL)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy.exceptions import DontCloseSpider
from twisted.internet import reactor

from tests.helpers import project_crawler
from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.frontier import FrontierMiddleware
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.pipelines import StorePipeline
from mirrorscope.storage.store import Store
from tests.helpers import page


def test_a_batch_is_written_once_its_pages_hold_store_batch_links(tmp_path: Path) -> None:
    crawler = project_crawler(STORE_BATCH_SIZE=200, STORE_BATCH_LINKS=1000)
    pipeline = StorePipeline.from_crawler(crawler)
    pipeline.store, pipeline.run_id = Store(f"sqlite:///{tmp_path}/pipeline.db"), None
    pipeline.pool.start()
    heavy = [page(f"http://docs.test/{n}", links=tuple(f"http://docs.test/{n}/{i}" for i in range(300))) for n in range(5)]

    async def feed() -> list[int]:
        pending = []
        for record in heavy:
            await pipeline.process_item(PageItem(record))
            pending.append(len(pipeline.pending))
        return pending

    try:
        # Four pages hold 1,200 links: the batch goes then, not at 200 pages.
        assert asyncio.run(feed()) == [1, 2, 3, 0, 1]
    finally:
        pipeline.pool.stop()  # waits for the write on the pool's thread
    assert [p["url"] for p in pipeline.store.pages()] == [r.url for r in heavy[:4]]
    pipeline.store.close()


def test_an_idle_crawl_stays_open_until_its_pages_are_written_and_then_refills(tmp_path: Path) -> None:
    crawler = project_crawler(STORE_BATCH_SIZE=200, HOSTS_FILE=None)
    pipeline = StorePipeline.from_crawler(crawler)
    pipeline.store, pipeline.run_id = Store(f"sqlite:///{tmp_path}/pipeline.db"), None
    middleware = FrontierMiddleware.from_crawler(crawler)
    stored = lambda: [p["url"] for p in pipeline.store.pages()]  # noqa: E731
    expanded: list[tuple[list[tuple[str, int]], list[str]]] = []
    # The spider reads parked links from the store: the refill must see the page's link there.
    def expand(urls: list[tuple[str, int]]) -> int:  # as WebSpider.expand: the requests it made
        expanded.append((urls, stored()))
        return len(urls)

    crawler.spider = SimpleNamespace(unfetched=lambda: iter([("http://docs.test/parked", 2)]), expand=expand)
    crawler.stats.set_value("frontier/dropped/queue-host-cap", 1)
    assert not CrawlContext.of(crawler).unwritten_pages()
    pipeline.pool.start()
    try:
        asyncio.run(pipeline.process_item(PageItem(page("http://docs.test/", links=("http://docs.test/parked",)))))
        assert CrawlContext.of(crawler).unwritten_pages()
        with pytest.raises(DontCloseSpider):
            middleware.spider_idle()
        assert expanded == [] and pipeline.pending == [] and len(pipeline.writes) == 1
        with pytest.raises(DontCloseSpider):  # still waiting: one write, one refill
            middleware.spider_idle()
    finally:
        pipeline.pool.stop()  # waits for the write on the pool's thread
    # The write's result reaches the reactor thread by callFromThread: deliver it.
    reactor.runUntilCurrent()
    assert not CrawlContext.of(crawler).unwritten_pages()
    assert expanded == [([("http://docs.test/parked", 2)], ["http://docs.test/"])]
    middleware.spider_idle()  # nothing dropped since: the crawl may close
    pipeline.store.close()
