"""The duplicate tables: page sketches as the offline passes read them, and the passes'
clusters, pairs and containments (``mirror-report detect``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import Any, cast

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import aliased

from mirrorscope.storage.models import (
    Containment,
    DuplicateCluster,
    DuplicateClusterMember,
    DuplicatePair,
    Host,
    Page,
    Sketch,
)
from mirrorscope.storage.records import SketchRecord
from mirrorscope.storage.rows import ContainmentRow, DuplicateClusterRow, SketchRow
from mirrorscope.storage.sql import Tables, chunks, from_signed64, insert_new, utc_now


def _sketch_row(row: dict[str, Any]) -> SketchRow:
    record = {f.name: row[f.name] for f in fields(SketchRecord)}
    record |= {"seed": from_signed64(row["seed"]), "fingerprint": from_signed64(row["fingerprint"]), "data": bytes(row["data"])}
    return {"url": row["url"], "host": row["host"], "page_id": row["page_id"], "sketch": SketchRecord(**record)}


class DuplicateTables(Tables):
    """Sketches, duplicate clusters and pairs, containments."""

    def sketches(self, scheme: str | None = None) -> list[SketchRow]:
        """Every stored sketch with its page's id, URL and host (of one scheme when given)."""
        query = (
            select(Page.url, Host.name.label("host"), *Sketch.__table__.c)
            .join(Page, Page.id == Sketch.page_id)
            .join(Host, Host.id == Page.host_id)
            .order_by(Page.id)
        )
        if scheme is not None:
            query = query.where(Sketch.scheme == scheme)
        return [_sketch_row(r) for r in self._dicts(query)]

    def sketch_totals(self, scheme: str) -> tuple[int, int]:
        """How many sketches of one scheme are stored, and their bytes (to size arrays)."""
        query = select(func.count(), func.coalesce(func.sum(func.length(Sketch.data)), 0)).where(Sketch.scheme == scheme)
        count, size = self._tuples(query)[0]
        return int(count), int(size)

    def sketch_blob_batches(self, scheme: str) -> Iterator[tuple[list[int], list[bytes]]]:
        """Page ids and sketch bytes of one scheme in page order, a batch at a time, for
        offline passes (no joins; never all rows at once)."""
        query = select(Sketch.page_id, Sketch.data).where(Sketch.scheme == scheme).order_by(Sketch.page_id)
        for rows in self._batches(query):
            yield [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def replace_duplicate_clusters(
        self,
        method: str,
        clusters: Sequence[tuple[int, Sequence[int], bool]],
        pairs: Sequence[tuple[int, int, float]],
        containments: Sequence[tuple[int, int, float]],
    ) -> None:
        """Replace one offline method's results: clusters as (representative page id,
        member page ids, identical), pairs (page a, page b, resemblance), containments
        (page, container, containment). Written ``write_batch`` rows a statement, in
        one transaction."""
        now = utc_now()
        with self.engine.begin() as conn:
            conn.execute(delete(DuplicateCluster).where(DuplicateCluster.method == method))
            conn.execute(delete(DuplicatePair).where(DuplicatePair.method == method))
            conn.execute(delete(Containment).where(Containment.source == method))
            numbered = insert(DuplicateCluster).returning(DuplicateCluster.id, sort_by_parameter_order=True)
            for batch in chunks(clusters, self.write_batch):
                heads = [
                    {"method": method, "representative_id": rep, "size": len(members), "identical": identical, "created_at": now}
                    for rep, members, identical in batch
                ]
                ids = conn.execute(numbered, heads).scalars().all()
                members = [{"cluster_id": cid, "page_id": m} for cid, (_, group, _) in zip(ids, batch) for m in group]
                for rows in chunks(members, self.write_batch):
                    conn.execute(insert(DuplicateClusterMember), rows)
            for batch in chunks(pairs, self.write_batch):
                conn.execute(insert(DuplicatePair), [{"page_a": a, "page_b": b, "method": method, "resemblance": r} for a, b, r in batch])
            for batch in chunks(containments, self.write_batch):
                # A pair the crawl recorded already keeps the crawl's row.
                rows = [{"page_id": a, "container_id": b, "containment": c, "source": method} for a, b, c in batch]
                insert_new(conn, Containment.__table__, rows)

    def duplicate_clusters(self, method: str) -> list[DuplicateClusterRow]:
        """Clusters of one method, largest first, with member URLs (representative first)."""
        rep = aliased(Page)
        with self.engine.connect() as conn:  # one snapshot: a detect run may replace them meanwhile
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

    def duplicate_pairs(self, method: str) -> list[tuple[str, str, float]]:
        """(page a URL, page b URL, resemblance) of one method's pairs, by URLs."""
        other = aliased(Page)
        query = (
            select(Page.url, other.url, DuplicatePair.resemblance)
            .join(Page, Page.id == DuplicatePair.page_a)
            .join(other, other.id == DuplicatePair.page_b)
            .where(DuplicatePair.method == method)
            .order_by(Page.url, other.url)
        )
        return cast(list[tuple[str, str, float]], self._tuples(query))

    def containment_pairs(self) -> list[ContainmentRow]:
        """Every containment by page URL, highest first."""
        container = aliased(Page)
        query = (
            select(Page.url.label("page"), container.url.label("container"), Containment.containment, Containment.source)
            .join(Page, Page.id == Containment.page_id)
            .join(container, container.id == Containment.container_id)
            .order_by(Containment.containment.desc(), Page.url)
        )
        return cast(list[ContainmentRow], self._dicts(query))
