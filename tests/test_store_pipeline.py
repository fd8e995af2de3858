"""crawler.pipelines.StorePipeline: batches bounded by pages and by links, written to the
real store (SQLite here; the store's own tests cover PostgreSQL)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scrapy import Spider
from scrapy.utils.test import get_crawler

from crawler.items import PageItem
from crawler.pipelines import StorePipeline
from storage.store import Store
from tests.test_store import page


def test_a_batch_is_written_once_its_pages_hold_store_batch_links(tmp_path: Path) -> None:
    crawler = get_crawler(Spider, settings_dict={"STORE_BATCH_SIZE": 200, "STORE_BATCH_LINKS": 1000})
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
