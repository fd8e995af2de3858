"""The anchor tables (``detectors.anchors``): the link fragments and titles anchor bags
are built from, the bags' signatures, and the similar pairs and CENTER clusters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy import delete, func, insert, select

from mirrorscope.storage.models import AnchorCluster, AnchorPair, AnchorSignature, Link, Page
from mirrorscope.storage.rows import AnchorClusterMember, AnchorPairRow, AnchorSignatureRow
from mirrorscope.storage.sql import Tables, chunks, from_signed64, members_by_cluster, to_signed64, upsert, utc_now

#: What storing a signature again overwrites (all but the URL it is keyed by).
_SIGNATURE_COLUMNS = ("m", "seed", "window", "scale", "cap", "idf_bags", "terms", "data", "computed_at")


class AnchorTables(Tables):
    """Anchor-bag sources, signatures, pairs and clusters."""

    def anchor_high_water(self) -> tuple[int, int]:
        """The largest link id and page id stored (0 when none): a resumed crawl's anchor
        worker reads up to these, since the pages stored after them reach it as messages."""
        with self.engine.connect() as conn:
            return (conn.scalar(select(func.coalesce(func.max(Link.id), 0))), conn.scalar(select(func.coalesce(func.max(Page.id), 0))))

    def link_fragment_batches(self, size: int = 50_000, up_to_id: int | None = None) -> Iterator[list[tuple[str, str, str, str]]]:
        """(target URL, anchor, before, after) of the stored links in storage order, in
        batches of ``size`` (one query each, by link id, so that millions of links are never
        held at once); only ids <= ``up_to_id`` if given.
        What anchor bags are built from (no joins)."""
        last = None
        while True:
            query = select(Link.id, Link.target_url, Link.anchor, Link.before, Link.after).order_by(Link.id).limit(size)
            if last is not None:
                query = query.where(Link.id > last)
            if up_to_id is not None:
                query = query.where(Link.id <= up_to_id)
            rows = self._tuples(query)
            if not rows:
                return
            last = rows[-1][0]
            yield [cast(tuple[str, str, str, str], r[1:]) for r in rows]

    def page_titles(self, up_to_id: int | None = None) -> list[tuple[str, str]]:
        """(URL, title) of every page with a non-empty title, by page id (only ids <=
        ``up_to_id`` if given)."""
        query = select(Page.url, Page.title).where(Page.title.is_not(None), Page.title != "").order_by(Page.id)
        if up_to_id is not None:
            query = query.where(Page.id <= up_to_id)
        return cast(list[tuple[str, str]], self._tuples(query))

    def write_anchor_signatures(self, rows: Sequence[dict[str, Any]], replace_all: bool = False) -> None:
        """Insert or update anchor-bag signatures by URL (rows of ``anchor_signatures``
        columns, ``seed`` unsigned, ``computed_at`` optional), in one transaction; with
        ``replace_all`` every other stored signature is dropped first."""
        now = utc_now()
        values = [dict(r, seed=to_signed64(r["seed"]), computed_at=r.get("computed_at") or now) for r in rows]
        with self.engine.begin() as conn:
            if replace_all:
                conn.execute(delete(AnchorSignature))
            for chunk in chunks(values, self.write_batch):
                upsert(conn, AnchorSignature.__table__, list(chunk), "url", _SIGNATURE_COLUMNS)

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
        rows = self._tuples(query)
        return [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def anchor_signature(self, url: str) -> AnchorSignatureRow | None:
        """The stored signature row of ``url`` (``seed`` unsigned), or None."""
        rows = self._dicts(select(*AnchorSignature.__table__.c).where(AnchorSignature.url == url))
        if not rows:
            return None
        row = rows[0]
        return cast(AnchorSignatureRow, row | {"seed": from_signed64(row["seed"]), "data": bytes(row["data"])})

    def replace_anchor_clusters(self, pairs: Sequence[tuple[str, str, float]], members: Sequence[tuple[str, int, bool]]) -> None:
        """Replace the similar URL pairs (url a, url b, similarity) and the CENTER cluster
        memberships (url, cluster, is centre)."""
        with self.engine.begin() as conn:
            conn.execute(delete(AnchorPair))
            conn.execute(delete(AnchorCluster))
            for chunk in chunks([{"url_a": a, "url_b": b, "similarity": s} for a, b, s in pairs], self.write_batch):
                conn.execute(insert(AnchorPair), list(chunk))
            for chunk in chunks([{"url": u, "cluster": c, "is_center": centre} for u, c, centre in members], self.write_batch):
                conn.execute(insert(AnchorCluster), list(chunk))

    def anchor_pairs(self, url: str | None = None) -> list[AnchorPairRow]:
        """Similar URL pairs (of ``url`` when given), most similar first."""
        query = select(AnchorPair.url_a, AnchorPair.url_b, AnchorPair.similarity).order_by(
            AnchorPair.similarity.desc(), AnchorPair.url_a, AnchorPair.url_b
        )
        if url is not None:
            query = query.where((AnchorPair.url_a == url) | (AnchorPair.url_b == url))
        return cast(list[AnchorPairRow], self._dicts(query))

    def anchor_clusters(self) -> list[list[AnchorClusterMember]]:
        """CENTER clusters, largest first, each centre first then members by URL."""
        rows = self._tuples(
            select(AnchorCluster.cluster, AnchorCluster.url, AnchorCluster.is_center)
            .order_by(AnchorCluster.cluster, AnchorCluster.is_center.desc(), AnchorCluster.url)
        )
        clusters = cast(list[list[AnchorClusterMember]], members_by_cluster(rows, "is_center"))
        return sorted(clusters, key=lambda members: (-len(members), members[0]["url"]))
