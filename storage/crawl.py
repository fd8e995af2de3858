"""The crawl's tables: runs, hosts, pages and links, and what a resumed crawl reads back.

Writes are batched (one transaction per batch) and idempotent: a page is keyed by its
URL, so fetching it again updates its row and replaces its links, never duplicates them.
A fetched page also brings its sketch and the duplicate and containment links the crawl
found online; they are written in the page's transaction. Values are made storable first
(``storage.storable``); a batch the database still refuses is written again page by
page, so one bad page costs only itself: it is stored as a ``store-error`` row, with the
database's reason, and the write says so (``WriteResult``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Connection, Engine, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import aliased

from mirrorscope.storage.models import Containment, CrawlRun, Host, Link, Page, Sketch
from mirrorscope.storage.records import PageRecord, SketchRecord, WriteResult
from mirrorscope.storage.rows import CrawlRunRow, CrawlSummary, HostRow, LinkRow, PageRow
from mirrorscope.storage.sql import Tables, chunks, from_signed64, to_signed64, upsert, utc_now
from mirrorscope.storage.storable import storable, storable_text
from mirrorscope.storage.terms import replace_term_vectors

#: The outcome of a page the database refused to store as crawled.
STORE_ERROR = "store-error"
#: Characters of a database error kept as a page's error (its first line: the reason,
#: without the statement and its parameters, which can be a whole page's links).
_ERROR_CHARS = 500
#: What a refused write raises: the database's errors, and encoding errors some
#: drivers raise unwrapped.
_REFUSED = (SQLAlchemyError, ValueError)

#: What a later fetch of a stored URL overwrites.
_PAGE_COLUMNS = (
    "host_id", "crawl_run_id", "path", "depth", "status", "outcome", "error", "content_type",
    "length", "fetched_at", "fingerprint", "title", "redirect_to", "duplicate_kind", "duplicate_score",
    "spam_score", "spam_reasons", "word_count", "etag", "last_modified",
)


def _one_line(exc: BaseException) -> str:
    """The database's reason for refusing a write, on one line."""
    reason = exc.orig if isinstance(exc, DBAPIError) else exc
    text = (str(reason).strip().splitlines() or [type(reason).__name__])[0]
    return storable_text(f"{type(reason).__name__}: {text}")[:_ERROR_CHARS]


def _error_record(record: PageRecord, error: str) -> PageRecord:
    """What is stored of a page the database refused: its URL, host and fetch, and why."""
    return PageRecord(
        url=record.url, host=record.host, hostname=record.hostname, port=record.port, path=record.path,
        depth=record.depth, outcome=STORE_ERROR, fetched_at=record.fetched_at, status=record.status,
        ip=record.ip, registrable_domain=record.registrable_domain, error=error,
    )


def _page_row(r: PageRecord, host_id: int, run_id: int | None) -> dict[str, Any]:
    """The ``pages`` row of a record."""
    return {
        "url": r.url, "host_id": host_id, "crawl_run_id": run_id, "path": r.path,
        "depth": r.depth, "status": r.status, "outcome": r.outcome, "error": r.error,
        "content_type": r.content_type, "length": r.length, "fetched_at": r.fetched_at,
        "fingerprint": to_signed64(r.fingerprint), "title": r.title, "redirect_to": r.redirect_to,
        "duplicate_kind": r.duplicate_kind, "duplicate_score": r.duplicate_score,
        "spam_score": r.spam_score, "spam_reasons": r.spam_reasons, "word_count": r.word_count,
        "etag": r.etag, "last_modified": r.last_modified,
    }


def _sketch_row(page_id: int, k: SketchRecord) -> dict[str, Any]:
    """The ``sketches`` row of a page's sketch."""
    return {
        "page_id": page_id, "scheme": k.scheme, "seed": to_signed64(k.seed), "w": k.w, "s": k.s,
        "m": k.m, "signature_size": k.signature_size, "super_groups": k.super_groups,
        "super_size": k.super_size, "token_count": k.token_count, "shingle_count": k.shingle_count,
        "too_short": k.too_short, "fingerprint": to_signed64(k.fingerprint), "data": k.data,
    }


def _page_ids(conn: Connection, urls: Sequence[str]) -> dict[str, int]:
    """The ids of the stored pages among ``urls``."""
    ids: dict[str, int] = {}
    for chunk in chunks(urls):
        ids.update({url: pid for pid, url in conn.execute(select(Page.id, Page.url).where(Page.url.in_(chunk)))})
    return ids


class CrawlTables(Tables):
    """Runs, hosts, pages and links."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        # Host ids (and the IP last stored) by name: most batches name no new host.
        self._host_ids: dict[str, tuple[int, str | None]] = {}

    # -- runs ---------------------------------------------------------------------------

    def start_run(self, seeds: list[str], settings: dict[str, Any]) -> int:
        with self.engine.begin() as conn:
            return conn.execute(
                insert(CrawlRun)
                .values(started_at=utc_now(), status="running", seeds=seeds, settings=settings)
                .returning(CrawlRun.id)
            ).scalar_one()

    def resume_run(self, run_id: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(CrawlRun).where(CrawlRun.id == run_id).values(status="running", finished_at=None))

    def run_status(self, run_id: int) -> str | None:
        """The run's status (``running``, ``finished``, another close reason), None when the store has no such run."""
        with self.engine.connect() as conn:
            return conn.execute(select(CrawlRun.status).where(CrawlRun.id == run_id)).scalar_one_or_none()

    def finish_run(self, run_id: int, status: str, stats: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(CrawlRun)
                .where(CrawlRun.id == run_id)
                .values(finished_at=utc_now(), status=status, stats=stats)
            )

    def runs(self) -> list[CrawlRunRow]:
        return cast(list[CrawlRunRow], self._dicts(select(CrawlRun).order_by(CrawlRun.id)))

    # -- writes -------------------------------------------------------------------------

    def write_pages(self, records: Sequence[PageRecord], run_id: int | None) -> WriteResult:
        """Store a batch of fetched pages with their hosts, links, sketches and
        duplicate links, in one transaction; when the database refuses it, page by page."""
        # In URL order (hosts in name order, _upsert_hosts): writers of one PostgreSQL
        # store (the processes of a shared crawl) then lock rows in one order, and two
        # batches holding the same host or page wait for each other instead of deadlocking.
        # (Written in crawl order, the 3-process test of tests/test_shared_frontier.py
        # stored no mirror pair, 3 runs of 3; not traced.)
        batch = sorted((storable(r) for r in {r.url: r for r in records}.values()), key=lambda r: r.url)
        if not batch:
            return WriteResult()
        try:
            self._write(batch, run_id)
        except _REFUSED:
            return self._write_each(batch, run_id)
        return WriteResult(stored=len(batch))

    def insert_new_pages(self, records: Sequence[PageRecord], run_id: int | None = None) -> int:
        """Bulk-load pages that are not stored yet, with their hosts and sketches and
        nothing else (no links, no duplicate links): plain INSERTs of ``write_batch``
        rows, in one transaction. For filling a large store fast (``benchmarks/cluster.py``);
        a page stored already makes the database refuse the whole call. Returns the pages
        stored."""
        batch = [storable(r) for r in records]
        with self.engine.begin() as conn:
            fresh = self._upsert_hosts(conn, batch)
            hosts = self._host_ids | fresh
            # Ids read back by URL: SQLite would insert row by row to return them in order.
            for part in chunks(batch, self.write_batch):
                conn.execute(insert(Page), [_page_row(r, hosts[r.host][0], run_id) for r in part])
            ids = _page_ids(conn, [r.url for r in batch])
            sketches = [_sketch_row(ids[r.url], r.sketch) for r in batch if r.sketch is not None]
            for rows in chunks(sketches, self.write_batch):
                conn.execute(insert(Sketch), rows)
        self._host_ids.update(fresh)
        return len(batch)

    def _write_each(self, batch: list[PageRecord], run_id: int | None) -> WriteResult:
        """Each page in a transaction of its own; one the database refuses is stored as a
        ``store-error`` row, or counted lost when even that is refused."""
        result = WriteResult()
        for record in batch:
            try:
                self._write([record], run_id)
                result.stored += 1
                continue
            except _REFUSED as exc:
                error = _one_line(exc)
            try:
                self._write([_error_record(record, error)], run_id)
                result.errors.append((record.url, error))
            except _REFUSED as exc:
                result.lost.append((record.url, _one_line(exc)))
        return result

    def _write(self, batch: list[PageRecord], run_id: int | None) -> None:
        with self.engine.begin() as conn:
            fresh = self._upsert_hosts(conn, batch)
            ids = self._upsert_pages(conn, batch, self._host_ids | fresh, run_id)
            self._replace_links(conn, batch, ids)
            self._replace_sketches(conn, batch, ids)
            replace_term_vectors(conn, batch, ids)
            self._link_duplicates(conn, batch, ids)
        # Known only once committed: a refused batch's hosts were rolled back with it.
        self._host_ids.update(fresh)

    def _upsert_hosts(self, conn: Connection, records: list[PageRecord]) -> dict[str, tuple[int, str | None]]:
        """Store the hosts of ``records`` not stored yet, or with a new address; their
        (id, address) by name."""
        fresh: dict[str, dict[str, Any]] = {}
        for r in records:
            known = self._host_ids.get(r.host)
            if r.host in fresh and r.ip is None:
                continue  # a page without an address (refused, failed) must not erase one
            if known is None or (r.ip is not None and known[1] != r.ip):
                fresh[r.host] = {
                    "name": r.host, "hostname": r.hostname, "port": r.port, "ip": r.ip,
                    "registrable_domain": r.registrable_domain, "first_seen_at": utc_now(),
                }
        ids: dict[str, tuple[int, str | None]] = {}
        if fresh:
            rows = [fresh[name] for name in sorted(fresh)]
            upsert(conn, Host.__table__, rows, "name", (), keep_old=("ip", "registrable_domain"))
            for chunk in chunks(list(fresh)):
                for hid, name, ip in conn.execute(select(Host.id, Host.name, Host.ip).where(Host.name.in_(chunk))):
                    ids[name] = (hid, ip)
        return ids

    def _upsert_pages(
        self, conn: Connection, records: list[PageRecord], host_ids: dict[str, tuple[int, str | None]], run_id: int | None
    ) -> dict[str, int]:
        rows = [_page_row(r, host_ids[r.host][0], run_id) for r in records]
        upsert(conn, Page.__table__, rows, "url", _PAGE_COLUMNS)
        return _page_ids(conn, [r.url for r in records])

    def _replace_links(self, conn: Connection, records: list[PageRecord], ids: dict[str, int]) -> None:
        for chunk in chunks([ids[r.url] for r in records]):
            conn.execute(delete(Link).where(Link.source_page_id.in_(chunk)))
        rows = [
            {
                "source_page_id": ids[r.url], "position": i, "target_url": link.target_url,
                "target_host": link.target_host, "anchor": link.anchor, "before": link.before,
                "after": link.after,
            }
            for r in records
            for i, link in enumerate(r.links)
        ]
        if rows:
            conn.execute(insert(Link), rows)

    def _replace_sketches(self, conn: Connection, records: list[PageRecord], ids: dict[str, int]) -> None:
        # A re-fetched page that is no longer HTML must lose its old sketch.
        for chunk in chunks([ids[r.url] for r in records]):
            conn.execute(delete(Sketch).where(Sketch.page_id.in_(chunk)))
        rows = [_sketch_row(ids[r.url], r.sketch) for r in records if r.sketch is not None]
        if rows:
            conn.execute(insert(Sketch), rows)

    def _link_duplicates(self, conn: Connection, records: list[PageRecord], ids: dict[str, int]) -> None:
        """Resolve duplicate-of and contained-in URLs (earlier pages, maybe this batch's) to ids."""
        referenced = [r.duplicate_of for r in records if r.duplicate_of] + [u for r in records for u, _ in r.contained_in]
        known = ids | _page_ids(conn, sorted(set(referenced) - set(ids)))
        updates = [
            {"pid": ids[r.url], "dup": known.get(r.duplicate_of) if r.duplicate_of else None}
            for r in records
        ]
        conn.execute(update(Page).where(Page.id == bindparam("pid")).values(duplicate_of_id=bindparam("dup")), updates)
        for chunk in chunks([ids[r.url] for r in records]):
            conn.execute(delete(Containment).where(Containment.page_id.in_(chunk)))
        rows = [
            {"page_id": ids[r.url], "container_id": known[url], "containment": value, "source": "crawl"}
            for r in records
            for url, value in dict(r.contained_in).items()
            if url in known and known[url] != ids[r.url]
        ]
        if rows:
            conn.execute(insert(Containment), rows)

    # -- reads --------------------------------------------------------------------------

    def fetched_urls(self, run_id: int | None = None) -> set[str]:
        query = select(Page.url)
        if run_id is not None:
            query = query.where(Page.crawl_run_id == run_id)
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def unfetched_targets(
        self, run_id: int, from_duplicates: bool = True, spam_below: float | None = None, spam_own_links: int = 0
    ) -> list[tuple[str, int]]:
        """Link targets found by ``run_id`` that no page row holds yet, with their depth.

        This is the crawl frontier as the store knows it: after a hard kill the crawl
        resumes from here, so nothing the killed process had queued is lost. Links on
        pages recorded as duplicates count only when ``from_duplicates``; with
        ``spam_below``, a page scored that high counts only for its first
        ``spam_own_links`` links to its own host: the links the live crawl follows to
        confirm a spam host (``crawler.spam``), not the hundreds a farm page holds.
        """
        target = aliased(Page)
        candidates = select(Link.target_url.label("url"), Page.depth.label("depth"), Link.source_page_id.label("source")).join(
            Page, Page.id == Link.source_page_id
        ).where(Page.crawl_run_id == run_id)
        if not from_duplicates:
            candidates = candidates.where(Page.duplicate_of_id.is_(None))
        if spam_below is not None:
            spam_page = Page.spam_score >= spam_below
            own_rank = func.row_number().over(partition_by=Link.source_page_id, order_by=Link.position).label("rank")
            own = candidates.add_columns(own_rank).join(Host, Host.id == Page.host_id).where(
                spam_page, Link.target_host == Host.name
            ).subquery()
            candidates = candidates.where(or_(Page.spam_score.is_(None), ~spam_page)).union_all(
                select(own.c.url, own.c.depth, own.c.source).where(own.c.rank <= spam_own_links)
            )
        found = candidates.subquery()
        query = (
            select(found.c.url, func.min(found.c.depth) + 1)
            .outerjoin(target, target.url == found.c.url)
            .where(target.id.is_(None))
            .group_by(found.c.url)
            .order_by(func.min(found.c.depth), found.c.url)
        )
        return cast(list[tuple[str, int]], self._tuples(query))

    def duplicate_outlinks(self, run_id: int, hosts: Sequence[str]) -> list[tuple[str, str, str, int]]:
        """(page URL, its original's URL, link target, target depth) of the links on the
        pages of ``hosts`` that ``run_id`` recorded as duplicates, whose targets no page
        row holds yet: what the crawl did not follow because the original's links were
        to be followed instead."""
        original, target = aliased(Page), aliased(Page)
        query = (
            select(Page.url, original.url, Link.target_url, Page.depth + 1)
            .join(Link, Link.source_page_id == Page.id)
            .join(original, original.id == Page.duplicate_of_id)
            .join(Host, Host.id == Page.host_id)
            .outerjoin(target, target.url == Link.target_url)
            .where(Page.crawl_run_id == run_id, Host.name.in_(list(hosts)), target.id.is_(None))
            .order_by(Page.depth, Link.target_url)
        )
        return cast(list[tuple[str, str, str, int]], self._tuples(query))

    def same_host_links(self) -> list[tuple[str, str, str]]:
        """(host, source URL, target URL) of every stored link to its own page's host, by page."""
        query = (
            select(Host.name, Page.url, Link.target_url)
            .join(Page, Page.id == Link.source_page_id)
            .join(Host, Host.id == Page.host_id)
            .where(Link.target_host == Host.name)
            .order_by(Page.id, Link.position)
        )
        return cast(list[tuple[str, str, str]], self._tuples(query))

    def pages(self, run_id: int | None = None) -> list[PageRow]:
        query = (
            select(*Page.__table__.c, Host.name.label("host"))
            .join(Host, Host.id == Page.host_id)
            .order_by(Page.id)
        )
        if run_id is not None:
            query = query.where(Page.crawl_run_id == run_id)
        rows = self._dicts(query)
        return [cast(PageRow, r | {"fingerprint": from_signed64(r["fingerprint"])}) for r in rows]

    def hosts(self) -> list[HostRow]:
        pages = func.count(Page.id).label("pages")
        query = (
            select(Host.name, Host.ip, Host.registrable_domain, pages)
            .outerjoin(Page, Page.host_id == Host.id)
            .group_by(Host.id)
            .order_by(Host.name)
        )
        return cast(list[HostRow], self._dicts(query))

    def links(self) -> list[LinkRow]:
        query = (
            select(Page.url.label("source_url"), Link.position, Link.target_url, Link.target_host, Link.anchor, Link.before, Link.after)
            .join(Page, Page.id == Link.source_page_id)
            .order_by(Page.url, Link.position)
        )
        return cast(list[LinkRow], self._dicts(query))

    def page_count(self) -> int:
        """Pages stored, of every outcome."""
        with self.engine.connect() as conn:
            return conn.execute(select(func.count(Page.id))).scalar_one()

    def summary(self) -> CrawlSummary:
        """Counts for the crawl report: hosts, pages by outcome, links, bytes."""
        with self.engine.connect() as conn:
            hosts = conn.execute(select(func.count(Host.id))).scalar_one()
            pages = conn.execute(select(func.count(Page.id))).scalar_one()
            links = conn.execute(select(func.count(Link.id))).scalar_one()
            size = conn.execute(select(func.coalesce(func.sum(Page.length), 0))).scalar_one()
            sketches = conn.execute(select(func.count(Sketch.page_id))).scalar_one()
            outcomes = dict(conn.execute(select(Page.outcome, func.count(Page.id)).group_by(Page.outcome)).all())
        return {"hosts": hosts, "pages": pages, "links": links, "bytes": int(size), "sketches": sketches, "outcomes": outcomes}
