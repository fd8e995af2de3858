"""The store: the one object callers open on a database, with every statement
mirrorscope runs against it.

The statements live with their tables, one module a concern: ``crawl`` (runs, hosts,
pages, links, and what a resumed crawl reads back), ``duplicates`` (sketches and the
offline passes' clusters), ``mirrors``, ``spam`` (host verdicts and their evidence),
``anchors`` (anchor-bag signatures, pairs and clusters), ``evidence`` (the report's
reads of what pages said), ``graph`` (the links read as a graph), ``collections``
(replicated collections, found bottom-up), ``changes`` (page change over re-crawls),
``terms`` (term vectors, the co-clustering and topic labels) and ``export`` (whole tables
streamed for the Parquet export). Reads return the row types of ``rows``.
"""

from __future__ import annotations

from mirrorscope.storage.anchors import AnchorTables
from mirrorscope.storage.changes import ChangeTables
from mirrorscope.storage.collections import CollectionTables
from mirrorscope.storage.crawl import CrawlTables
from mirrorscope.storage.db import Access, ensure_schema, make_engine
from mirrorscope.storage.duplicates import DuplicateTables
from mirrorscope.storage.evidence import EvidenceTables
from mirrorscope.storage.export import ExportTables
from mirrorscope.storage.graph import GraphTables
from mirrorscope.storage.mirrors import MirrorTables
from mirrorscope.storage.spam import SpamTables
from mirrorscope.storage.terms import TermTables


class Store(
    CrawlTables, DuplicateTables, MirrorTables, SpamTables, AnchorTables, EvidenceTables, GraphTables, CollectionTables,
    ChangeTables, TermTables, ExportTables,
):
    """A database holding mirrorscope's schema, brought to head when opened."""

    def __init__(self, url: str, *, migrate: bool = True, access: Access = "create") -> None:
        engine = make_engine(url, access)
        if migrate:
            ensure_schema(url, engine, access)
        super().__init__(engine)
        self.url = url

    def close(self) -> None:
        self.engine.dispose()
