"""The store: every SQL statement mirrorscope runs against its database.

Writes are batched (one transaction per batch) and idempotent: a page is keyed by its
URL, so fetching it again updates its row and replaces its links, never duplicates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import aliased

from mirrorscope.storage.db import ensure_schema, make_engine
from mirrorscope.storage.models import (
    AnchorCluster,
    AnchorPair,
    AnchorSignature,
    Containment,
    CrawlRun,
    DuplicateCluster,
    DuplicateClusterMember,
    DuplicatePair,
    Host,
    HostVerdict,
    Link,
    MirrorCluster,
    MirrorPair,
    Page,
    Sketch,
)
from mirrorscope.storage.records import PageRecord

_IN_CHUNK = 500  # bound parameters per IN (...) list: far below every backend's limit
_ANCHOR_SIGNATURE_COLUMNS = ("m", "seed", "window", "scale", "cap", "idf_bags", "terms", "data", "computed_at")
_PAGE_COLUMNS = (
    "host_id", "crawl_run_id", "path", "depth", "status", "outcome", "error", "content_type",
    "length", "fetched_at", "fingerprint", "title", "redirect_to", "duplicate_kind", "duplicate_score",
    "spam_score", "spam_reasons", "word_count",
)


def to_signed64(value: int | None) -> int | None:
    """Unsigned 64-bit fingerprint as the signed BIGINT both backends store."""
    if value is None:
        return None
    return value - (1 << 64) if value >= (1 << 63) else value


def from_signed64(value: int | None) -> int | None:
    if value is None:
        return None
    return value + (1 << 64) if value < 0 else value


def _chunks(items: Sequence[Any], size: int = _IN_CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Store:
    """A database holding mirrorscope's schema, brought to head when opened."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.engine: Engine = make_engine(url)
        if migrate:
            ensure_schema(self.engine)
        self._host_ids: dict[str, tuple[int, str | None]] = {}

    def close(self) -> None:
        self.engine.dispose()

    # -- runs ---------------------------------------------------------------------------

    def start_run(self, seeds: list[str], settings: dict[str, Any]) -> int:
        with self.engine.begin() as conn:
            return conn.execute(
                insert(CrawlRun)
                .values(started_at=_now(), status="running", seeds=seeds, settings=settings)
                .returning(CrawlRun.id)
            ).scalar_one()

    def resume_run(self, run_id: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(CrawlRun).where(CrawlRun.id == run_id).values(status="running", finished_at=None))

    def run_exists(self, run_id: int) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(CrawlRun.id).where(CrawlRun.id == run_id)).first() is not None

    def finish_run(self, run_id: int, status: str, stats: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(CrawlRun)
                .where(CrawlRun.id == run_id)
                .values(finished_at=_now(), status=status, stats=stats)
            )

    def runs(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(CrawlRun).order_by(CrawlRun.id)).mappings().all()
        return [dict(r) for r in rows]

    # -- writes -------------------------------------------------------------------------

    def write_pages(self, records: Sequence[PageRecord], run_id: int | None) -> None:
        """Store a batch of fetched pages with their hosts and links, in one transaction."""
        latest: dict[str, PageRecord] = {r.url: r for r in records}
        if not latest:
            return
        records = list(latest.values())
        with self.engine.begin() as conn:
            host_ids = self._upsert_hosts(conn, records)
            page_ids = self._upsert_pages(conn, records, host_ids, run_id)
            self._replace_links(conn, records, page_ids)
            self._replace_sketches(conn, records, page_ids)
            self._link_duplicates(conn, records, page_ids)

    def _upsert(self, conn: Connection, table: Any, rows: list[dict[str, Any]], key: str, columns: Sequence[str], keep_old: Sequence[str] = ()) -> None:
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        stmt = dialect.insert(table)
        updates = {c: stmt.excluded[c] for c in columns}
        for c in keep_old:  # a later fetch that learnt nothing must not erase what is known
            updates[c] = func.coalesce(stmt.excluded[c], table.c[c])
        conn.execute(stmt.on_conflict_do_update(index_elements=[key], set_=updates), rows)

    def _upsert_hosts(self, conn: Connection, records: list[PageRecord]) -> dict[str, int]:
        fresh: dict[str, dict[str, Any]] = {}
        for r in records:
            known = self._host_ids.get(r.host)
            if known is None or (r.ip is not None and known[1] != r.ip):
                fresh[r.host] = {
                    "name": r.host, "hostname": r.hostname, "port": r.port, "ip": r.ip,
                    "registrable_domain": r.registrable_domain, "first_seen_at": _now(),
                }
        if fresh:
            table = Host.__table__
            self._upsert(conn, table, list(fresh.values()), "name", (), keep_old=("ip", "registrable_domain"))
            for chunk in _chunks(list(fresh)):
                for hid, name, ip in conn.execute(select(Host.id, Host.name, Host.ip).where(Host.name.in_(chunk))):
                    self._host_ids[name] = (hid, ip)
        return {name: hid for name, (hid, _) in self._host_ids.items()}

    def _upsert_pages(self, conn: Connection, records: list[PageRecord], host_ids: dict[str, int], run_id: int | None) -> dict[str, int]:
        rows = [
            {
                "url": r.url, "host_id": host_ids[r.host], "crawl_run_id": run_id, "path": r.path,
                "depth": r.depth, "status": r.status, "outcome": r.outcome, "error": r.error,
                "content_type": r.content_type, "length": r.length, "fetched_at": r.fetched_at,
                "fingerprint": to_signed64(r.fingerprint), "title": r.title, "redirect_to": r.redirect_to,
                "duplicate_kind": r.duplicate_kind, "duplicate_score": r.duplicate_score,
                "spam_score": r.spam_score, "spam_reasons": r.spam_reasons, "word_count": r.word_count,
            }
            for r in records
        ]
        self._upsert(conn, Page.__table__, rows, "url", _PAGE_COLUMNS)
        ids: dict[str, int] = {}
        for chunk in _chunks([r.url for r in records]):
            ids.update({url: pid for pid, url in conn.execute(select(Page.id, Page.url).where(Page.url.in_(chunk)))})
        return ids

    def _replace_links(self, conn: Connection, records: list[PageRecord], page_ids: dict[str, int]) -> None:
        for chunk in _chunks([page_ids[r.url] for r in records]):
            conn.execute(delete(Link).where(Link.source_page_id.in_(chunk)))
        rows = [
            {
                "source_page_id": page_ids[r.url], "position": i, "target_url": link.target_url,
                "target_host": link.target_host, "anchor": link.anchor, "before": link.before,
                "after": link.after,
            }
            for r in records
            for i, link in enumerate(r.links)
        ]
        if rows:
            conn.execute(insert(Link), rows)

    def _replace_sketches(self, conn: Connection, records: list[PageRecord], page_ids: dict[str, int]) -> None:
        # A re-fetched page that is no longer HTML must lose its old sketch.
        for chunk in _chunks([page_ids[r.url] for r in records]):
            conn.execute(delete(Sketch).where(Sketch.page_id.in_(chunk)))
        rows = [
            {
                "page_id": page_ids[r.url], "scheme": k.scheme, "seed": to_signed64(k.seed), "w": k.w, "s": k.s,
                "m": k.m, "signature_size": k.signature_size, "super_groups": k.super_groups,
                "super_size": k.super_size, "token_count": k.token_count, "shingle_count": k.shingle_count,
                "too_short": k.too_short, "fingerprint": to_signed64(k.fingerprint), "data": k.data,
            }
            for r in records
            if (k := r.sketch) is not None
        ]
        if rows:
            conn.execute(insert(Sketch), rows)

    def _ids_of(self, conn: Connection, urls: Iterable[str], known: dict[str, int]) -> dict[str, int]:
        missing = sorted(set(urls) - set(known))
        found = dict(known)
        for chunk in _chunks(missing):
            found.update({url: pid for pid, url in conn.execute(select(Page.id, Page.url).where(Page.url.in_(chunk)))})
        return found

    def _link_duplicates(self, conn: Connection, records: list[PageRecord], page_ids: dict[str, int]) -> None:
        """Resolve duplicate-of and contained-in URLs (earlier pages, maybe this batch's) to ids."""
        referenced = [r.duplicate_of for r in records if r.duplicate_of] + [u for r in records for u, _ in r.contained_in]
        ids = self._ids_of(conn, referenced, page_ids) if referenced else page_ids
        updates = [
            {"pid": page_ids[r.url], "dup": ids.get(r.duplicate_of) if r.duplicate_of else None}
            for r in records
        ]
        conn.execute(update(Page).where(Page.id == bindparam("pid")).values(duplicate_of_id=bindparam("dup")), updates)
        for chunk in _chunks([page_ids[r.url] for r in records]):
            conn.execute(delete(Containment).where(Containment.page_id.in_(chunk)))
        rows = [
            {"page_id": page_ids[r.url], "container_id": ids[url], "containment": value, "source": "crawl"}
            for r in records
            for url, value in dict(r.contained_in).items()
            if url in ids and ids[url] != page_ids[r.url]
        ]
        if rows:
            conn.execute(insert(Containment), rows)

    def replace_duplicate_clusters(
        self,
        method: str,
        clusters: Sequence[tuple[int, Sequence[int], bool]],
        pairs: Sequence[tuple[int, int, float]],
        containments: Sequence[tuple[int, int, float]],
    ) -> None:
        """Replace one offline method's results: clusters as (representative page id,
        member page ids, identical), pairs (page a, page b, resemblance), containments
        (page, container, containment)."""
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(delete(DuplicateCluster).where(DuplicateCluster.method == method))
            conn.execute(delete(DuplicatePair).where(DuplicatePair.method == method))
            conn.execute(delete(Containment).where(Containment.source == method))
            for representative, members, identical in clusters:
                cid = conn.execute(
                    insert(DuplicateCluster)
                    .values(method=method, representative_id=representative, size=len(members), identical=identical, created_at=now)
                    .returning(DuplicateCluster.id)
                ).scalar_one()
                conn.execute(insert(DuplicateClusterMember), [{"cluster_id": cid, "page_id": m} for m in members])
            if pairs:
                conn.execute(insert(DuplicatePair), [{"page_a": a, "page_b": b, "method": method, "resemblance": r} for a, b, r in pairs])
            rows = [{"page_id": a, "container_id": b, "containment": c, "source": method} for a, b, c in containments]
            # A pair the crawl recorded already keeps the crawl's row.
            if rows:
                dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
                conn.execute(dialect.insert(Containment).on_conflict_do_nothing(), rows)

    def duplicate_clusters(self, method: str) -> list[dict[str, Any]]:
        """Clusters of one method, largest first, with member URLs (representative first)."""
        rep = aliased(Page)
        with self.engine.connect() as conn:
            clusters = conn.execute(
                select(DuplicateCluster.id, DuplicateCluster.size, DuplicateCluster.identical, rep.url)
                .join(rep, rep.id == DuplicateCluster.representative_id)
                .where(DuplicateCluster.method == method)
                .order_by(DuplicateCluster.size.desc(), rep.url)
            ).all()
            members = conn.execute(
                select(DuplicateClusterMember.cluster_id, Page.url)
                .join(Page, Page.id == DuplicateClusterMember.page_id)
                .join(DuplicateCluster, DuplicateCluster.id == DuplicateClusterMember.cluster_id)
                .where(DuplicateCluster.method == method)
                .order_by(Page.url)
            ).all()
        by_cluster: dict[int, list[str]] = {}
        for cid, url in members:
            by_cluster.setdefault(cid, []).append(url)
        return [
            {"size": size, "identical": identical, "representative": url, "members": [url] + [m for m in by_cluster.get(cid, []) if m != url]}
            for cid, size, identical, url in clusters
        ]

    def containment_pairs(self) -> list[dict[str, Any]]:
        container = aliased(Page)
        query = (
            select(Page.url.label("page"), container.url.label("container"), Containment.containment, Containment.source)
            .join(Page, Page.id == Containment.page_id)
            .join(container, container.id == Containment.container_id)
            .order_by(Containment.containment.desc(), Page.url)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def replace_mirrors(self, pairs: Sequence[dict[str, Any]], clusters: Sequence[Sequence[tuple[str, bool]]]) -> None:
        """Replace the mirror verdicts (rows of ``mirror_pairs`` columns) and clusters
        (lists of (URL root, canonical))."""
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(delete(MirrorPair))
            conn.execute(delete(MirrorCluster))
            if pairs:
                conn.execute(insert(MirrorPair), [dict(p, detected_at=now) for p in pairs])
            rows = [{"cluster": n, "url": url, "canonical": canonical} for n, members in enumerate(clusters, 1) for url, canonical in members]
            if rows:
                conn.execute(insert(MirrorCluster), rows)

    def replace_host_verdicts(self, verdicts: Sequence[dict[str, Any]], kind: str | None = None) -> None:
        """Replace the spam and trap verdicts (rows of ``host_verdicts`` columns), or only
        those of ``kind``."""
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(delete(HostVerdict) if kind is None else delete(HostVerdict).where(HostVerdict.kind == kind))
            if verdicts:
                conn.execute(insert(HostVerdict), [dict(v, detected_at=now) for v in verdicts])

    def host_verdicts(self, kind: str | None = None, flagged_only: bool = False) -> list[dict[str, Any]]:
        """Host verdicts, highest score first (``kind``: ``spam`` or ``trap``; all if None)."""
        query = select(*HostVerdict.__table__.c).order_by(HostVerdict.kind, HostVerdict.score.desc(), HostVerdict.host)
        if kind is not None:
            query = query.where(HostVerdict.kind == kind)
        if flagged_only:
            query = query.where(HostVerdict.flagged.is_(True))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def mirror_pairs(self, include_none: bool = False) -> list[dict[str, Any]]:
        query = select(*MirrorPair.__table__.c).order_by(MirrorPair.score.desc(), MirrorPair.url_a, MirrorPair.url_b)
        if not include_none:
            query = query.where(MirrorPair.level != "none")
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def mirror_clusters(self) -> list[list[dict[str, Any]]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(MirrorCluster.cluster, MirrorCluster.url, MirrorCluster.canonical)
                .order_by(MirrorCluster.cluster, MirrorCluster.canonical.desc(), MirrorCluster.url)
            ).all()
        clusters: dict[int, list[dict[str, Any]]] = {}
        for cluster, url, canonical in rows:
            clusters.setdefault(cluster, []).append({"url": url, "canonical": bool(canonical)})
        return list(clusters.values())

    def page_facts(self) -> list[dict[str, Any]]:
        """Per page: host, URL, path, outcome, host IP and sketch bytes (None when not HTML)."""
        query = (
            select(Host.name.label("host"), Host.ip, Page.url, Page.path, Page.outcome, Sketch.data)
            .join(Host, Host.id == Page.host_id)
            .outerjoin(Sketch, Sketch.page_id == Page.id)
            .order_by(Page.id)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

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
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=10_000).execute(query):
                yield tuple(row)  # type: ignore[misc]

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
        with self.engine.connect() as conn:
            return {name: count for name, count in conn.execute(query)}

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
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=10_000).execute(query):
                yield tuple(row)  # type: ignore[misc]

    def host_links(self) -> list[tuple[str, str | None, str]]:
        """Distinct (source host, target host, target URL) of every stored link."""
        query = (
            select(Host.name, Link.target_host, Link.target_url)
            .join(Page, Page.id == Link.source_page_id)
            .join(Host, Host.id == Page.host_id)
            .distinct()
        )
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(query)]

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
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(query)]

    # -- anchor bags (detectors.anchors) -------------------------------------------------

    def anchor_high_water(self) -> tuple[int, int]:
        """The largest link id and page id stored (0 when none): a resumed crawl's anchor
        worker reads up to these, since the pages stored after them reach it as messages."""
        with self.engine.connect() as conn:
            return (conn.scalar(select(func.coalesce(func.max(Link.id), 0))), conn.scalar(select(func.coalesce(func.max(Page.id), 0))))

    def link_fragment_batches(self, size: int = 50_000, up_to_id: int | None = None) -> Iterator[list[tuple[str, str, str, str]]]:
        """(target URL, anchor, before, after) of the stored links in storage order, in
        batches of ``size`` (one query each, by link id, so that millions of links are never
        held at once; 6 million took several GB as one list); only ids <= ``up_to_id`` if given.
        What anchor bags are built from (no joins)."""
        last = None
        while True:
            query = select(Link.id, Link.target_url, Link.anchor, Link.before, Link.after).order_by(Link.id).limit(size)
            if last is not None:
                query = query.where(Link.id > last)
            if up_to_id is not None:
                query = query.where(Link.id <= up_to_id)
            with self.engine.connect() as conn:
                rows = conn.execute(query).all()
            if not rows:
                return
            last = rows[-1][0]
            yield [tuple(r[1:]) for r in rows]

    def page_titles(self, up_to_id: int | None = None) -> list[tuple[str, str]]:
        """(URL, title) of every page with a non-empty title, by page id (only ids <=
        ``up_to_id`` if given)."""
        query = select(Page.url, Page.title).where(Page.title.is_not(None), Page.title != "").order_by(Page.id)
        if up_to_id is not None:
            query = query.where(Page.id <= up_to_id)
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(query)]

    def write_anchor_signatures(self, rows: Sequence[dict[str, Any]], replace_all: bool = False) -> None:
        """Insert or update anchor-bag signatures by URL (rows of ``anchor_signatures``
        columns, ``seed`` unsigned, ``computed_at`` optional), in one transaction; with
        ``replace_all`` every other stored signature is dropped first."""
        now = _now()
        values = [dict(r, seed=to_signed64(r["seed"]), computed_at=r.get("computed_at") or now) for r in rows]
        with self.engine.begin() as conn:
            if replace_all:
                conn.execute(delete(AnchorSignature))
            for chunk in _chunks(values, 5000):
                self._upsert(conn, AnchorSignature.__table__, list(chunk), "url", _ANCHOR_SIGNATURE_COLUMNS)

    def anchor_signature_blobs(self, m: int, seed: int, window: int, scale: float, cap: int) -> tuple[list[str], list[bytes]]:
        """URLs and signature bytes of the signatures made with these parameters, by URL."""
        query = (
            select(AnchorSignature.url, AnchorSignature.data)
            .where(
                AnchorSignature.m == m, AnchorSignature.seed == to_signed64(seed), AnchorSignature.window == window,
                AnchorSignature.scale == scale, AnchorSignature.cap == cap,
            )
            .order_by(AnchorSignature.url)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def anchor_signature(self, url: str) -> dict[str, Any] | None:
        """The stored signature row of ``url`` (``seed`` unsigned), or None."""
        with self.engine.connect() as conn:
            row = conn.execute(select(*AnchorSignature.__table__.c).where(AnchorSignature.url == url)).mappings().first()
        if row is None:
            return None
        return dict(row) | {"seed": from_signed64(row["seed"]), "data": bytes(row["data"])}

    def replace_anchor_clusters(self, pairs: Sequence[tuple[str, str, float]], members: Sequence[tuple[str, int, bool]]) -> None:
        """Replace the similar URL pairs (url a, url b, similarity) and the CENTER cluster
        memberships (url, cluster, is centre)."""
        with self.engine.begin() as conn:
            conn.execute(delete(AnchorPair))
            conn.execute(delete(AnchorCluster))
            for chunk in _chunks([{"url_a": a, "url_b": b, "similarity": s} for a, b, s in pairs], 5000):
                conn.execute(insert(AnchorPair), list(chunk))
            for chunk in _chunks([{"url": u, "cluster": c, "is_center": centre} for u, c, centre in members], 5000):
                conn.execute(insert(AnchorCluster), list(chunk))

    def anchor_pairs(self, url: str | None = None) -> list[dict[str, Any]]:
        """Similar URL pairs (of ``url`` when given), most similar first."""
        query = select(AnchorPair.url_a, AnchorPair.url_b, AnchorPair.similarity).order_by(
            AnchorPair.similarity.desc(), AnchorPair.url_a, AnchorPair.url_b
        )
        if url is not None:
            query = query.where((AnchorPair.url_a == url) | (AnchorPair.url_b == url))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def anchor_clusters(self) -> list[list[dict[str, Any]]]:
        """CENTER clusters, largest first, each centre first then members by URL."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(AnchorCluster.cluster, AnchorCluster.url, AnchorCluster.is_center)
                .order_by(AnchorCluster.cluster, AnchorCluster.is_center.desc(), AnchorCluster.url)
            ).all()
        clusters: dict[int, list[dict[str, Any]]] = {}
        for cluster, url, centre in rows:
            clusters.setdefault(cluster, []).append({"url": url, "is_center": bool(centre)})
        return sorted(clusters.values(), key=lambda members: (-len(members), members[0]["url"]))

    # -- reads --------------------------------------------------------------------------

    def fetched_urls(self, run_id: int | None = None) -> set[str]:
        query = select(Page.url)
        if run_id is not None:
            query = query.where(Page.crawl_run_id == run_id)
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def unfetched_targets(self, run_id: int, from_duplicates: bool = True) -> list[tuple[str, int]]:
        """Link targets found by ``run_id`` that no page row holds yet, with their depth.

        This is the crawl frontier as the store knows it: after a hard kill the crawl
        resumes from here, so nothing the killed process had queued is lost. Links on
        pages recorded as duplicates count only when ``from_duplicates``.
        """
        target = aliased(Page)
        query = (
            select(Link.target_url, func.min(Page.depth) + 1)
            .join(Page, Page.id == Link.source_page_id)
            .outerjoin(target, target.url == Link.target_url)
            .where(Page.crawl_run_id == run_id, target.id.is_(None))
            .group_by(Link.target_url)
            .order_by(func.min(Page.depth), Link.target_url)
        )
        if not from_duplicates:
            query = query.where(Page.duplicate_of_id.is_(None))
        with self.engine.connect() as conn:
            return [(url, depth) for url, depth in conn.execute(query)]

    def pages(self, run_id: int | None = None) -> list[dict[str, Any]]:
        query = (
            select(*Page.__table__.c, Host.name.label("host"))
            .join(Host, Host.id == Page.host_id)
            .order_by(Page.id)
        )
        if run_id is not None:
            query = query.where(Page.crawl_run_id == run_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [dict(r) | {"fingerprint": from_signed64(r["fingerprint"])} for r in rows]

    def sketches(self, scheme: str | None = None) -> list[dict[str, Any]]:
        """Every stored sketch with its page's URL and host (of one scheme when given)."""
        query = (
            select(Page.url, Host.name.label("host"), *Sketch.__table__.c)
            .join(Page, Page.id == Sketch.page_id)
            .join(Host, Host.id == Page.host_id)
            .order_by(Page.id)
        )
        if scheme is not None:
            query = query.where(Sketch.scheme == scheme)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [dict(r) | {"seed": from_signed64(r["seed"]), "fingerprint": from_signed64(r["fingerprint"]), "data": bytes(r["data"])} for r in rows]

    def sketch_blobs(self, scheme: str) -> tuple[list[int], list[bytes]]:
        """Page ids and sketch bytes of one scheme, for offline passes (no joins)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(Sketch.page_id, Sketch.data).where(Sketch.scheme == scheme).order_by(Sketch.page_id)).all()
        return [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def hosts(self) -> list[dict[str, Any]]:
        pages = func.count(Page.id).label("pages")
        query = (
            select(Host.name, Host.ip, Host.registrable_domain, pages)
            .outerjoin(Page, Page.host_id == Host.id)
            .group_by(Host.id)
            .order_by(Host.name)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def links(self) -> list[dict[str, Any]]:
        query = (
            select(Page.url.label("source_url"), Link.position, Link.target_url, Link.target_host, Link.anchor, Link.before, Link.after)
            .join(Page, Page.id == Link.source_page_id)
            .order_by(Page.url, Link.position)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def summary(self) -> dict[str, Any]:
        """Counts for the crawl report: hosts, pages by outcome, links, bytes."""
        with self.engine.connect() as conn:
            hosts = conn.execute(select(func.count(Host.id))).scalar_one()
            pages = conn.execute(select(func.count(Page.id))).scalar_one()
            links = conn.execute(select(func.count(Link.id))).scalar_one()
            size = conn.execute(select(func.coalesce(func.sum(Page.length), 0))).scalar_one()
            sketches = conn.execute(select(func.count(Sketch.page_id))).scalar_one()
            outcomes = dict(conn.execute(select(Page.outcome, func.count(Page.id)).group_by(Page.outcome)).all())
        return {"hosts": hosts, "pages": pages, "links": links, "bytes": int(size), "sketches": sketches, "outcomes": outcomes}
