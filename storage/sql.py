"""What every part of the store shares: the engine it runs on, 64-bit fingerprints as
both backends store them, bounded IN lists, upserts, and reading rows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Executable, Table, func
from sqlalchemy.dialects import postgresql, sqlite

#: Bound parameters per IN (...) list: far below every backend's limit.
IN_LIST_SIZE = 500
#: Rows a streamed read fetches at a time, so that millions of rows are never held at once.
STREAM_BATCH = 10_000
#: Rows one INSERT of a bulk write sends: its parameters are built a batch at a time.
WRITE_BATCH = 10_000

Item = TypeVar("Item")


def to_signed64(value: int | None) -> int | None:
    """Unsigned 64-bit fingerprint as the signed BIGINT both backends store."""
    if value is None:
        return None
    return value - (1 << 64) if value >= (1 << 63) else value


def from_signed64(value: int | None) -> int | None:
    """A stored signed BIGINT as the unsigned 64-bit fingerprint it holds."""
    if value is None:
        return None
    return value + (1 << 64) if value < 0 else value


def chunks(items: Sequence[Item], size: int = IN_LIST_SIZE) -> Iterable[Sequence[Item]]:
    """``items`` in consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def dialect_insert(conn: Connection, table: Table) -> Any:
    """The backend's own INSERT, which knows ON CONFLICT."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def upsert(
    conn: Connection, table: Table, rows: list[dict[str, Any]], key: str, columns: Sequence[str], keep_old: Sequence[str] = ()
) -> None:
    """Insert ``rows``; a row whose ``key`` is stored already updates ``columns``, and
    ``keep_old`` columns only where the new value is not NULL."""
    stmt = dialect_insert(conn, table)
    updates = {c: stmt.excluded[c] for c in columns}
    for c in keep_old:  # a later fetch that learnt nothing must not erase what is known
        updates[c] = func.coalesce(stmt.excluded[c], table.c[c])
    conn.execute(stmt.on_conflict_do_update(index_elements=[key], set_=updates), rows)


def insert_new(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows``, leaving every row whose key is stored already as it is."""
    conn.execute(dialect_insert(conn, table).on_conflict_do_nothing(), rows)


def members_by_cluster(rows: Iterable[tuple[int, str, Any]], flag: str) -> list[list[dict[str, Any]]]:
    """(cluster, URL, flag) rows as clusters in row order, each a list of members
    ``{"url": URL, flag: bool}`` in row order."""
    clusters: dict[int, list[dict[str, Any]]] = {}
    for cluster, url, value in rows:
        clusters.setdefault(cluster, []).append({"url": url, flag: bool(value)})
    return list(clusters.values())


class Tables:
    """One part of the store: the statements on some of its tables, over one engine."""

    #: Rows a batched read fetches and a bulk write sends at a time (tests make them small).
    stream_batch = STREAM_BATCH
    write_batch = WRITE_BATCH

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _dicts(self, query: Executable) -> list[dict[str, Any]]:
        """The rows of ``query`` as dicts keyed by column label."""
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def _tuples(self, query: Executable) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(query)]

    def _stream(self, query: Executable) -> Iterator[tuple[Any, ...]]:
        """The rows of ``query`` as tuples, fetched ``stream_batch`` at a time."""
        for batch in self._batches(query):
            yield from batch

    def _batches(self, query: Executable) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of ``query`` as lists of at most ``stream_batch`` tuples, fetched a
        list at a time (a server-side cursor on PostgreSQL, ``fetchmany`` on SQLite)."""
        with self.engine.connect() as conn:
            for rows in conn.execution_options(yield_per=self.stream_batch).execute(query).partitions():
                yield [tuple(row) for row in rows]

