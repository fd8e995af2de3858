"""SQLAlchemy 2 typed models of the store.

The schema itself is owned by the Alembic migrations in ``alembic/versions``; these
classes mirror it for queries, and ``tests/test_store.py`` checks that the two agree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    LargeBinary,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# SQLite only autoincrements a column declared exactly INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    pass


class CrawlRun(Base):
    """One invocation of the crawl: when, with which settings, and what it did."""

    __tablename__ = "crawl_runs"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(32))
    seeds: Mapped[list[str]] = mapped_column(JSON)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    stats: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class Host(Base):
    """A host (``name`` is the URL's netloc: hostname, and port when not the default)."""

    __tablename__ = "hosts"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(300), unique=True)
    hostname: Mapped[str] = mapped_column(String(255))
    port: Mapped[int | None] = mapped_column(Integer)
    ip: Mapped[str | None] = mapped_column(String(45), index=True)
    registrable_domain: Mapped[str | None] = mapped_column(String(255), index=True)
    first_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Page(Base):
    """A fetched URL and the outcome of fetching it (also failures: ``outcome`` says)."""

    __tablename__ = "pages"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    url: Mapped[str] = mapped_column(Text, unique=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id"), index=True)
    crawl_run_id: Mapped[int | None] = mapped_column(ForeignKey("crawl_runs.id"), index=True)
    path: Mapped[str] = mapped_column(Text)
    depth: Mapped[int] = mapped_column(Integer)
    status: Mapped[int | None] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    content_type: Mapped[str | None] = mapped_column(String(255))
    length: Mapped[int | None] = mapped_column(BigInteger)
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    fingerprint: Mapped[int | None] = mapped_column(BigInteger, index=True)
    title: Mapped[str | None] = mapped_column(Text)
    redirect_to: Mapped[str | None] = mapped_column(Text)
    #: The earlier page this one duplicates (``identical`` content or ``near``: resemblance
    #: above the crawl's threshold), found online during the crawl.
    duplicate_of_id: Mapped[int | None] = mapped_column(
        ForeignKey("pages.id", ondelete="SET NULL", name="fk_pages_duplicate_of"), index=True
    )
    duplicate_kind: Mapped[str | None] = mapped_column(String(16))
    duplicate_score: Mapped[float | None] = mapped_column(Float)
    #: The page's spam score in [0, 1] and the reasons that fired (``detectors.spam``).
    spam_score: Mapped[float | None] = mapped_column(Float)
    spam_reasons: Mapped[list[str] | None] = mapped_column(JSON)
    #: Canonical words on the page, counted with its spam score (host template evidence).
    word_count: Mapped[int | None] = mapped_column(Integer)
    #: The validators of the page's last fetch (``ETag``, ``Last-Modified`` as sent), which
    #: a re-crawl sends back in ``If-None-Match`` / ``If-Modified-Since``.
    etag: Mapped[str | None] = mapped_column(String(255))
    last_modified: Mapped[str | None] = mapped_column(String(64))


class Link(Base):
    """An ``<a href>`` on a page: its target and the words in and around the anchor."""

    __tablename__ = "links"
    __table_args__ = (
        UniqueConstraint("source_page_id", "position", name="uq_links_source_position"),
        Index("ix_links_target_url", "target_url"),
        Index("ix_links_target_host", "target_host"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    source_page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    target_url: Mapped[str] = mapped_column(Text)
    target_host: Mapped[str | None] = mapped_column(String(300))
    anchor: Mapped[str] = mapped_column(Text)
    before: Mapped[str] = mapped_column(Text)
    after: Mapped[str] = mapped_column(Text)


class Sketch(Base):
    """A page's document sketch (``detectors.sketch``) with the parameters it was made with.

    Sketches made with other parameters are never comparable, so the parameters are
    columns: a query can select only sketches of the scheme and seed it understands.
    """

    __tablename__ = "sketches"

    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    scheme: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int] = mapped_column(BigInteger)
    w: Mapped[int] = mapped_column(Integer)
    s: Mapped[int] = mapped_column(Integer)
    m: Mapped[int] = mapped_column(Integer)
    signature_size: Mapped[int] = mapped_column(Integer)
    super_groups: Mapped[int] = mapped_column(Integer)
    super_size: Mapped[int] = mapped_column(Integer)
    token_count: Mapped[int] = mapped_column(Integer)
    shingle_count: Mapped[int] = mapped_column(Integer)
    too_short: Mapped[bool] = mapped_column(Boolean)
    fingerprint: Mapped[int] = mapped_column(BigInteger, index=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Containment(Base):
    """Page ``page_id`` lies mostly inside page ``container_id`` (Broder's containment)."""

    __tablename__ = "containments"

    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    container_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    containment: Mapped[float] = mapped_column(Float)
    source: Mapped[str] = mapped_column(String(16))


class DuplicateCluster(Base):
    """A cluster of near-duplicate pages from an offline pass (``mirror-report detect``)."""

    __tablename__ = "duplicate_clusters"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    method: Mapped[str] = mapped_column(String(32), index=True)
    representative_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))
    size: Mapped[int] = mapped_column(Integer)
    identical: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DuplicateClusterMember(Base):
    __tablename__ = "duplicate_cluster_members"

    cluster_id: Mapped[int] = mapped_column(ForeignKey("duplicate_clusters.id", ondelete="CASCADE"), primary_key=True)
    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)


class DuplicatePair(Base):
    """Two pages whose estimated resemblance passed an offline pass's threshold."""

    __tablename__ = "duplicate_pairs"

    page_a: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    page_b: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    method: Mapped[str] = mapped_column(String(32), primary_key=True)
    resemblance: Mapped[float] = mapped_column(Float)


class MirrorPair(Base):
    """A validated (or transitively inferred) verdict on two URL roots with path prefixes."""

    __tablename__ = "mirror_pairs"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    url_a: Mapped[str] = mapped_column(Text)
    url_b: Mapped[str] = mapped_column(Text)
    level: Mapped[str] = mapped_column(String(16))
    score: Mapped[float] = mapped_column(Float)
    paths_checked: Mapped[int] = mapped_column(Integer)
    paths_matched: Mapped[int] = mapped_column(Integer)
    fraction_ab: Mapped[float | None] = mapped_column(Float)
    fraction_ba: Mapped[float | None] = mapped_column(Float)
    inferred: Mapped[bool] = mapped_column(Boolean)
    features: Mapped[dict[str, Any]] = mapped_column(JSON)
    reasons: Mapped[list[str]] = mapped_column(JSON)
    detected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MirrorCluster(Base):
    """Membership of a URL root in a cluster of mirrors; ``canonical`` marks the one kept."""

    __tablename__ = "mirror_clusters"

    cluster: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(Text, primary_key=True)
    canonical: Mapped[bool] = mapped_column(Boolean)


class ReplicatedCollection(Base):
    """A cluster of replicated collections found bottom-up (``detectors.collections``):
    ``cardinality`` replicas of ``size`` pages each."""

    __tablename__ = "replicated_collections"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    cardinality: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)
    detected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CollectionPage(Base):
    """Page ``position`` of replica ``replica`` of a replicated collection; pages of one
    position in all replicas are near duplicates of each other."""

    __tablename__ = "collection_pages"

    collection_id: Mapped[int] = mapped_column(ForeignKey("replicated_collections.id", ondelete="CASCADE"), primary_key=True)
    replica: Mapped[int] = mapped_column(Integer, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))


class HostVerdict(Base):
    """A host's spam or trap verdict (``kind``): score, whether it is flagged, and why."""

    __tablename__ = "host_verdicts"

    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    flagged: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float] = mapped_column(Float)
    pages: Mapped[int] = mapped_column(Integer)
    reasons: Mapped[list[str]] = mapped_column(JSON)
    features: Mapped[dict[str, Any]] = mapped_column(JSON)
    detected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AnchorSignature(Base):
    """A URL's anchor-bag MH signature (``detectors.anchors``): ``m`` uint32 min-hash
    values, little-endian, in ``data``, with the parameters and the idf snapshot's size
    (``idf_bags``) they were made with; ``terms`` counts the bag's distinct terms."""

    __tablename__ = "anchor_signatures"

    url: Mapped[str] = mapped_column(Text, primary_key=True)
    m: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    window: Mapped[int] = mapped_column(Integer)
    scale: Mapped[float] = mapped_column(Float)
    cap: Mapped[int] = mapped_column(Integer)
    idf_bags: Mapped[int] = mapped_column(BigInteger)
    terms: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AnchorPair(Base):
    """Two URLs whose anchor-bag signatures agree on at least the filter's share
    (``url_a < url_b``); ``similarity`` is the agreeing fraction."""

    __tablename__ = "anchor_pairs"

    url_a: Mapped[str] = mapped_column(Text, primary_key=True)
    url_b: Mapped[str] = mapped_column(Text, primary_key=True, index=True)
    similarity: Mapped[float] = mapped_column(Float)


class AnchorCluster(Base):
    """Membership of a URL in a CENTER cluster of anchor bags; ``is_center`` marks the centre."""

    __tablename__ = "anchor_clusters"

    url: Mapped[str] = mapped_column(Text, primary_key=True)
    cluster: Mapped[int] = mapped_column(Integer, index=True)
    is_center: Mapped[bool] = mapped_column(Boolean)


class Term(Base):
    """The term dictionary of the term vectors: a canonical word (or CJK bigram) and the
    pages that held it when their vectors were made (``detectors.term_vectors``)."""

    __tablename__ = "terms"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    term: Mapped[str] = mapped_column(String(255), unique=True)
    document_frequency: Mapped[int] = mapped_column(BigInteger)


class TermVector(Base):
    """A page's top tf·idf terms, ``terms`` of them, in the byte layout of
    ``detectors.term_vectors`` (4-bit frequencies, gap-encoded term ids)."""

    __tablename__ = "term_vectors"

    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True)
    terms: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Coclustering(Base):
    """The last co-clustering of the page-term matrix (``detectors.cocluster``): its
    parameters, loss per iteration and clusters with their terms, as the report shows them."""

    __tablename__ = "coclusterings"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TopicLabel(Base):
    """The topic terms of a group of pages (``kind``: mirror cluster, duplicate cluster
    or spam host; ``subject`` names it) over its ``pages`` pages with term vectors."""

    __tablename__ = "topic_labels"

    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(Text, primary_key=True)
    pages: Mapped[int] = mapped_column(Integer)
    terms: Mapped[list[str]] = mapped_column(JSON)


class PageChange(Base):
    """What a re-crawl run found of a stored page (``detectors.page_change``): ``kind`` is
    unchanged, changed (``resemblance`` of the old and new sketches), gone or moved
    (``moved_to``); ``last_modified`` is the version's date as its server gave it."""

    __tablename__ = "page_changes"

    crawl_run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"), primary_key=True)
    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True, index=True)
    kind: Mapped[str] = mapped_column(String(16))
    resemblance: Mapped[float | None] = mapped_column(Float)
    moved_to: Mapped[str | None] = mapped_column(Text)
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_modified: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
