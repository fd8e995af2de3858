"""The reads of ``mirror-report export --parquet``: whole tables a batch at a time, by id,
so that a store of any size is exported in bounded memory (``jobs.export``)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import select

from mirrorscope.storage.models import Host, Link, Page
from mirrorscope.storage.sql import Tables

#: The columns each exported table carries: what the detection jobs read (ids, URLs,
#: hosts, outcomes, titles, the link fragments anchor bags are made of), not the
#: crawl's bookkeeping.
EXPORT_COLUMNS = {
    "hosts": (Host.id, Host.name, Host.hostname, Host.port, Host.ip, Host.registrable_domain),
    "pages": (Page.id, Page.url, Page.host_id, Page.path, Page.depth, Page.status, Page.outcome, Page.fingerprint,
              Page.title, Page.redirect_to, Page.word_count),
    "links": (Link.id, Link.source_page_id, Link.position, Link.target_url, Link.target_host, Link.anchor, Link.before,
              Link.after),
}


class ExportTables(Tables):
    """Hosts, pages and links, streamed for the Parquet export."""

    def export_batches(self, table: str) -> Iterator[list[tuple[object, ...]]]:
        """Rows of ``table`` (a key of ``EXPORT_COLUMNS``: its columns, in that order) by
        id, at most ``stream_batch`` at a time."""
        columns = EXPORT_COLUMNS[table]
        yield from self._batches(select(*columns).order_by(columns[0]))
