"""The mirror tables: verdicts on pairs of URL roots and clusters of mirrors, and the
page facts and host links mirror detection reads."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy import delete, insert, select

from mirrorscope.storage.models import Host, Link, MirrorCluster, MirrorPair, Page, Sketch
from mirrorscope.storage.rows import MirrorClusterMember, MirrorPairRow, PageFacts
from mirrorscope.storage.sql import Tables, members_by_cluster, utc_now


class MirrorTables(Tables):
    """Mirror pairs and clusters."""

    def replace_mirrors(self, pairs: Sequence[dict[str, Any]], clusters: Sequence[Sequence[tuple[str, bool]]]) -> None:
        """Replace the mirror verdicts (rows of ``mirror_pairs`` columns) and clusters
        (lists of (URL root, canonical))."""
        now = utc_now()
        with self.engine.begin() as conn:
            conn.execute(delete(MirrorPair))
            conn.execute(delete(MirrorCluster))
            if pairs:
                conn.execute(insert(MirrorPair), [dict(p, detected_at=now) for p in pairs])
            rows = [{"cluster": n, "url": url, "canonical": canonical} for n, members in enumerate(clusters, 1) for url, canonical in members]
            if rows:
                conn.execute(insert(MirrorCluster), rows)

    def mirror_pairs(self, include_none: bool = False) -> list[MirrorPairRow]:
        """The verdicts, highest score first; those of level ``none`` only when asked."""
        query = select(*MirrorPair.__table__.c).order_by(MirrorPair.score.desc(), MirrorPair.url_a, MirrorPair.url_b)
        if not include_none:
            query = query.where(MirrorPair.level != "none")
        return cast(list[MirrorPairRow], self._dicts(query))

    def mirror_clusters(self) -> list[list[MirrorClusterMember]]:
        """The clusters in the order stored, each canonical root first, then by URL."""
        rows = self._tuples(
            select(MirrorCluster.cluster, MirrorCluster.url, MirrorCluster.canonical)
            .order_by(MirrorCluster.cluster, MirrorCluster.canonical.desc(), MirrorCluster.url)
        )
        return cast(list[list[MirrorClusterMember]], members_by_cluster(rows, "canonical"))

    def page_fact_batches(self) -> Iterator[list[PageFacts]]:
        """Per page in page order, a batch at a time: host, URL, path, outcome, host IP and
        sketch bytes (None when not HTML)."""
        columns = (Host.name.label("host"), Host.ip, Page.url, Page.path, Page.outcome, Sketch.data)
        query = (
            select(*columns)
            .join(Host, Host.id == Page.host_id)
            .outerjoin(Sketch, Sketch.page_id == Page.id)
            .order_by(Page.id)
        )
        names = [c.key for c in columns]
        for rows in self._batches(query):
            yield cast(list[PageFacts], [dict(zip(names, row)) for row in rows])

    def host_links(self) -> list[tuple[str, str | None, str]]:
        """Distinct (source host, target host, target URL) of every stored link."""
        query = (
            select(Host.name, Link.target_host, Link.target_url)
            .join(Page, Page.id == Link.source_page_id)
            .join(Host, Host.id == Page.host_id)
            .distinct()
        )
        return cast(list[tuple[str, str | None, str]], self._tuples(query))
