"""The page-change tables (``detectors.page_change``): what a re-crawl reads of the stored
pages (their sketches and the validators its conditional requests send back) and the
change rows it writes, one per page per re-crawl run."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import bindparam, delete, insert, select, update

from mirrorscope.storage.models import CrawlRun, Host, Page, PageChange, Sketch
from mirrorscope.storage.rows import PageChangeRow, StoredVersionRow
from mirrorscope.storage.sql import Tables, chunks


class ChangeTables(Tables):
    """Stored versions to re-fetch, and the changes re-crawls found."""

    def stored_versions(self, scheme: str) -> list[StoredVersionRow]:
        """Every stored page with a sketch of ``scheme`` (the HTML the crawls fetched last):
        its id, URL, host, depth, validators and sketch bytes, by page id."""
        query = (
            select(Page.id, Page.url, Host.name, Page.depth, Page.etag, Page.last_modified, Sketch.data)
            .join(Sketch, Sketch.page_id == Page.id)
            .join(Host, Host.id == Page.host_id)
            .where(Sketch.scheme == scheme)
            .order_by(Page.id)
        )
        return [
            {"page_id": pid, "url": url, "host": host, "depth": depth, "etag": etag, "last_modified": modified, "sketch": bytes(data)}
            for pid, url, host, depth, etag, modified, data in self._stream(query)
        ]

    def touch_pages(self, page_ids: Sequence[int], run_id: int, fetched_at: datetime) -> None:
        """Pages a server answered 304 Not Modified: fetched again by ``run_id``, all else
        (links, sketch, title) kept."""
        if not page_ids:
            return
        with self.engine.begin() as conn:
            stmt = update(Page).where(Page.id == bindparam("pid")).values(crawl_run_id=run_id, fetched_at=fetched_at)
            for part in chunks(list(page_ids), self.write_batch):
                conn.execute(stmt, [{"pid": pid} for pid in part])

    def write_changes(self, run_id: int, rows: Sequence[dict[str, Any]]) -> None:
        """Replace ``run_id``'s change rows with ``rows`` (``page_changes`` columns but the run)."""
        with self.engine.begin() as conn:
            conn.execute(delete(PageChange).where(PageChange.crawl_run_id == run_id))
            for part in chunks([dict(r, crawl_run_id=run_id) for r in rows], self.write_batch):
                conn.execute(insert(PageChange), list(part))

    def page_changes(self, run_id: int | None = None) -> list[PageChangeRow]:
        """Change rows with their page's URL and host, by run then page (one run's when given)."""
        query = (
            select(
                PageChange.crawl_run_id, PageChange.page_id, Page.url, Host.name.label("host"), PageChange.kind,
                PageChange.resemblance, PageChange.moved_to, PageChange.fetched_at, PageChange.last_modified,
            )
            .join(Page, Page.id == PageChange.page_id)
            .join(Host, Host.id == Page.host_id)
            .order_by(PageChange.crawl_run_id, PageChange.page_id)
        )
        if run_id is not None:
            query = query.where(PageChange.crawl_run_id == run_id)
        return cast(list[PageChangeRow], self._dicts(query))

    def change_runs(self) -> list[tuple[int, datetime]]:
        """(run id, started at) of the runs that recorded changes, oldest first."""
        query = (
            select(CrawlRun.id, CrawlRun.started_at)
            .where(CrawlRun.id.in_(select(PageChange.crawl_run_id).distinct()))
            .order_by(CrawlRun.id)
        )
        return cast(list[tuple[int, datetime]], self._tuples(query))
