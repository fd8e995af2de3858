"""The spam tables: host verdicts (spam and trap), and the page evidence and host graph
they are judged on."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import aliased

from mirrorscope.storage.models import Host, HostVerdict, Link, Page
from mirrorscope.storage.rows import HostVerdictRow
from mirrorscope.storage.sql import Tables, dialect_insert, utc_now


class SpamTables(Tables):
    """Host verdicts and the evidence for them."""

    def replace_host_verdicts(self, verdicts: Sequence[dict[str, Any]], kind: str | None = None) -> None:
        """Replace the spam and trap verdicts (rows of ``host_verdicts`` columns), or only
        those of ``kind``."""
        now = utc_now()
        with self.engine.begin() as conn:
            conn.execute(delete(HostVerdict) if kind is None else delete(HostVerdict).where(HostVerdict.kind == kind))
            if verdicts:
                conn.execute(insert(HostVerdict), [dict(v, detected_at=now) for v in verdicts])

    def merge_host_verdicts(self, verdicts: Sequence[dict[str, Any]]) -> None:
        """Merge verdicts judged by one of several crawl processes into those stored by the
        others: a host's row is replaced by a flagged one, or by an unflagged one judged on
        as many pages or more; a flag is never taken back. Rows are written in (kind, host)
        order, so that concurrent merges lock rows in one order and cannot deadlock."""
        if not verdicts:
            return
        now = utc_now()
        rows = sorted(({**v, "detected_at": now} for v in verdicts), key=lambda v: (v["kind"], v["host"]))
        table = HostVerdict.__table__
        with self.engine.begin() as conn:
            stmt = dialect_insert(conn, table)
            new = stmt.excluded
            stmt = stmt.on_conflict_do_update(
                index_elements=["host", "kind"],
                set_={c: new[c] for c in ("flagged", "score", "pages", "reasons", "features", "detected_at")},
                where=new.flagged | (~table.c.flagged & (new.pages >= table.c.pages)),
            )
            conn.execute(stmt, rows)

    def host_verdicts(self, kind: str | None = None, flagged_only: bool = False) -> list[HostVerdictRow]:
        """Host verdicts, highest score first (``kind``: ``spam`` or ``trap``; all if None)."""
        query = select(*HostVerdict.__table__.c).order_by(HostVerdict.kind, HostVerdict.score.desc(), HostVerdict.host)
        if kind is not None:
            query = query.where(HostVerdict.kind == kind)
        if flagged_only:
            query = query.where(HostVerdict.flagged.is_(True))
        return cast(list[HostVerdictRow], self._dicts(query))

    def page_spam_evidence(self) -> Iterator[tuple[str, float | None, int | None, int]]:
        """Per page in fetch order: (host, spam score, word count, distinct link targets).

        Streamed, because a resumed crawl reads it for every page it has stored."""
        degrees = (
            select(Link.source_page_id, func.count(func.distinct(Link.target_url)).label("degree"))
            .group_by(Link.source_page_id)
            .subquery()
        )
        query = (
            select(Host.name, Page.spam_score, Page.word_count, func.coalesce(degrees.c.degree, 0))
            .join(Host, Host.id == Page.host_id)
            .outerjoin(degrees, degrees.c.source_page_id == Page.id)
            .order_by(Page.id)
        )
        return cast(Iterator[tuple[str, float | None, int | None, int]], self._stream(query))

    def same_host_duplicates(self) -> dict[str, int]:
        """Per host: its pages that duplicate another page of the same host."""
        original = aliased(Page)
        query = (
            select(Host.name, func.count(Page.id))
            .join(Host, Host.id == Page.host_id)
            .join(original, original.id == Page.duplicate_of_id)
            .where(original.host_id == Page.host_id)
            .group_by(Host.name)
        )
        return {name: count for name, count in self._tuples(query)}

    def spam_page_links(self, min_score: float) -> Iterator[tuple[str, str | None, str, str]]:
        """(source host, target host, target URL, anchor) of the links on pages scored at
        least ``min_score``, in the order they were stored (streamed)."""
        query = (
            select(Host.name, Link.target_host, Link.target_url, Link.anchor)
            .join(Page, Page.id == Link.source_page_id)
            .join(Host, Host.id == Page.host_id)
            .where(Page.spam_score >= min_score)
            .order_by(Link.id)
        )
        return cast(Iterator[tuple[str, str | None, str, str]], self._stream(query))

    def host_graph(self) -> list[tuple[str, str | None, str | None, str]]:
        """Distinct (source host, its IP, its registrable domain, target host) of every
        stored link to another host: the graph the crawl budgets are earned on."""
        query = (
            select(Host.name, Host.ip, Host.registrable_domain, Link.target_host)
            .join(Page, Page.id == Link.source_page_id)
            .join(Host, Host.id == Page.host_id)
            .where(Link.target_host.is_not(None), Link.target_host != Host.name)
            .distinct()
        )
        return cast(list[tuple[str, str | None, str | None, str]], self._tuples(query))
