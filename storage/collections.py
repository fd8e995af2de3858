"""The replicated-collection tables (``detectors.collections``): what the bottom-up mirror
job reads (near-duplicate clusters with their pages' URLs) and writes."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select

from mirrorscope.storage.models import CollectionPage, DuplicateCluster, DuplicateClusterMember, Page, ReplicatedCollection
from mirrorscope.storage.rows import CollectionRow
from mirrorscope.storage.sql import Tables, chunks, utc_now


class CollectionTables(Tables):
    """Replicated collections and the near-duplicate clusters they grow from."""

    def duplicate_cluster_pages(self, method: str) -> list[tuple[int, int, str]]:
        """(cluster id, page id, URL) of every member of ``method``'s clusters, by cluster."""
        return self._tuples(
            select(DuplicateClusterMember.cluster_id, Page.id, Page.url)
            .join(Page, Page.id == DuplicateClusterMember.page_id)
            .join(DuplicateCluster, DuplicateCluster.id == DuplicateClusterMember.cluster_id)
            .where(DuplicateCluster.method == method)
            .order_by(DuplicateClusterMember.cluster_id, Page.id)
        )

    def replace_collections(self, collections: Sequence[Sequence[Sequence[int]]]) -> None:
        """Replace the stored collections: each a list of replicas, each the page ids of
        its pages, aligned by position across replicas."""
        now = utc_now()
        with self.engine.begin() as conn:
            conn.execute(delete(CollectionPage))
            conn.execute(delete(ReplicatedCollection))
            if not collections:
                return
            numbered = insert(ReplicatedCollection).returning(ReplicatedCollection.id, sort_by_parameter_order=True)
            heads = [{"cardinality": len(c), "size": len(c[0]), "detected_at": now} for c in collections]
            ids = conn.execute(numbered, heads).scalars().all()
            rows = [
                {"collection_id": cid, "replica": r, "position": k, "page_id": page}
                for cid, replicas in zip(ids, collections) for r, pages in enumerate(replicas) for k, page in enumerate(pages)
            ]
            for batch in chunks(rows, self.write_batch):
                conn.execute(insert(CollectionPage), list(batch))

    def replicated_collections(self) -> list[CollectionRow]:
        """The stored collections, largest first, each replica's page URLs by position."""
        with self.engine.connect() as conn:  # one snapshot: a detect run may replace them meanwhile
            heads = conn.execute(
                select(ReplicatedCollection.id, ReplicatedCollection.cardinality, ReplicatedCollection.size)
                .order_by((ReplicatedCollection.cardinality * ReplicatedCollection.size).desc(), ReplicatedCollection.id)
            ).all()
            pages = conn.execute(
                select(CollectionPage.collection_id, CollectionPage.replica, Page.url)
                .join(Page, Page.id == CollectionPage.page_id)
                .order_by(CollectionPage.collection_id, CollectionPage.replica, CollectionPage.position)
            ).all()
        replicas: dict[int, dict[int, list[str]]] = {}
        for cid, replica, url in pages:
            replicas.setdefault(cid, {}).setdefault(replica, []).append(url)
        return [
            {"cardinality": cardinality, "size": size, "replicas": list(replicas.get(cid, {}).values())}
            for cid, cardinality, size in heads
        ]
