"""The links as a graph: (source URL, target URL) pairs read in chunks, and the size the
``links`` table takes on disk (what the compact graph of ``detectors.linkgraph`` is
measured against)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError

from mirrorscope.storage.models import Link, Page
from mirrorscope.storage.sql import STREAM_BATCH, Tables

#: Each backend's statement for the bytes a table and its indexes take.
_TABLE_BYTES = {
    "postgresql": "SELECT pg_total_relation_size(:name)",
    "sqlite": "SELECT SUM(pgsize) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = :name)",
}


class GraphTables(Tables):
    """The link graph's reads."""

    def link_chunks(self, size: int = STREAM_BATCH) -> Iterator[tuple[list[str], list[str]]]:
        """Every stored link as (source URLs, target URLs) lists of at most ``size``
        links, in the order they were stored (streamed)."""
        query = select(Page.url, Link.target_url).join(Page, Page.id == Link.source_page_id).order_by(Link.id)
        with self.engine.connect() as conn:
            for rows in conn.execution_options(yield_per=size).execute(query).partitions(size):
                yield [r[0] for r in rows], [r[1] for r in rows]

    def links_table_bytes(self) -> int | None:
        """Bytes the ``links`` table and its indexes take on disk; None where the backend
        cannot say (SQLite built without ``dbstat``)."""
        statement = _TABLE_BYTES.get(self.engine.dialect.name)
        if statement is None:
            return None
        with self.engine.connect() as conn:
            try:
                value = conn.execute(text(statement), {"name": Link.__tablename__}).scalar()
            except OperationalError as exc:  # dbstat is a compile-time option of SQLite
                if "dbstat" not in str(exc):
                    raise
                return None
        return None if value is None else int(value)
