"""The rows the store's reads return: dicts with declared keys (``row["url"]``).

Fingerprints and seeds are unsigned here, as the detectors make them; the tables hold
them signed (``storage.sql.to_signed64``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from mirrorscope.storage.records import SketchRecord


class CrawlRunRow(TypedDict):
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str
    seeds: list[str]
    settings: dict[str, Any]
    stats: dict[str, Any] | None


class PageRow(TypedDict):
    """A ``pages`` row with its host's name."""

    id: int
    url: str
    host_id: int
    crawl_run_id: int | None
    path: str
    depth: int
    status: int | None
    outcome: str
    error: str | None
    content_type: str | None
    length: int | None
    fetched_at: datetime
    fingerprint: int | None
    title: str | None
    redirect_to: str | None
    duplicate_of_id: int | None
    duplicate_kind: str | None
    duplicate_score: float | None
    spam_score: float | None
    spam_reasons: list[str] | None
    word_count: int | None
    etag: str | None
    last_modified: str | None
    host: str


class HostRow(TypedDict):
    """A host and how many pages it has stored."""

    name: str
    ip: str | None
    registrable_domain: str | None
    pages: int


class LinkRow(TypedDict):
    source_url: str
    position: int
    target_url: str
    target_host: str | None
    anchor: str
    before: str
    after: str


class CrawlSummary(TypedDict):
    """Counts for the crawl report; ``outcomes`` counts pages by outcome."""

    hosts: int
    pages: int
    links: int
    bytes: int
    sketches: int
    outcomes: dict[str, int]


class SketchRow(TypedDict):
    """A stored sketch as the crawl wrote it, with its page's id, URL and host."""

    url: str
    host: str
    page_id: int
    sketch: SketchRecord


class CollectionRow(TypedDict):
    """A cluster of replicated collections: ``replicas`` are lists of page URLs, the
    pages of one position in every replica near duplicates of each other."""

    cardinality: int
    size: int
    replicas: list[list[str]]


class DuplicateClusterRow(TypedDict):
    """A cluster of one offline method; ``members`` are URLs, the representative first."""

    size: int
    identical: bool
    representative: str
    members: list[str]


class ContainmentRow(TypedDict):
    """Page ``page`` lies mostly inside page ``container`` (both URLs); ``source`` is
    ``crawl`` or the offline method that found it."""

    page: str
    container: str
    containment: float
    source: str


class MirrorPairRow(TypedDict):
    id: int
    url_a: str
    url_b: str
    level: str
    score: float
    paths_checked: int
    paths_matched: int
    fraction_ab: float | None
    fraction_ba: float | None
    inferred: bool
    features: dict[str, Any]
    reasons: list[str]
    detected_at: datetime


class MirrorClusterMember(TypedDict):
    url: str
    canonical: bool


class PageFacts(TypedDict):
    """What mirror detection knows of a page; ``data`` is its sketch (None when not HTML)."""

    host: str
    ip: str | None
    url: str
    path: str
    outcome: str
    data: bytes | None


class HostVerdictRow(TypedDict):
    host: str
    kind: str
    flagged: bool
    score: float
    pages: int
    reasons: list[str]
    features: dict[str, Any]
    detected_at: datetime


class AnchorSignatureRow(TypedDict):
    url: str
    m: int
    seed: int
    window: int
    scale: float
    cap: int
    idf_bags: int
    terms: int
    data: bytes
    computed_at: datetime


class AnchorPairRow(TypedDict):
    url_a: str
    url_b: str
    similarity: float


class AnchorClusterMember(TypedDict):
    url: str
    is_center: bool


class StoredVersionRow(TypedDict):
    """A stored page as a re-crawl sees it: what to ask for and the sketch to compare with."""

    page_id: int
    url: str
    host: str
    depth: int
    etag: str | None
    last_modified: str | None
    sketch: bytes


class PageChangeRow(TypedDict):
    """A ``page_changes`` row with its page's URL and host."""

    crawl_run_id: int
    page_id: int
    url: str
    host: str
    kind: str
    resemblance: float | None
    moved_to: str | None
    fetched_at: datetime
    last_modified: datetime | None
