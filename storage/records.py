"""Plain records the crawl hands to the store (the store knows nothing of Scrapy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(slots=True)
class LinkRecord:
    target_url: str
    target_host: str | None
    anchor: str
    before: str
    after: str


@dataclass(slots=True)
class SketchRecord:
    """A document sketch as the store keeps it: its parameters and its bytes."""

    scheme: str
    seed: int
    w: int
    s: int
    m: int
    signature_size: int
    super_groups: int
    super_size: int
    token_count: int
    shingle_count: int
    too_short: bool
    fingerprint: int
    data: bytes


@dataclass(slots=True)
class PageRecord:
    """One fetched URL with its outcome; ``links`` replace the page's stored links."""

    url: str
    host: str
    hostname: str
    port: int | None
    path: str
    depth: int
    outcome: str
    fetched_at: datetime
    status: int | None = None
    ip: str | None = None
    registrable_domain: str | None = None
    error: str | None = None
    content_type: str | None = None
    length: int | None = None
    fingerprint: int | None = None
    title: str | None = None
    redirect_to: str | None = None
    links: list[LinkRecord] = field(default_factory=list)
    sketch: SketchRecord | None = None
    #: URL of the earlier page this one duplicates, how ("identical" or "near") and the
    #: estimated resemblance.
    duplicate_of: str | None = None
    duplicate_kind: str | None = None
    duplicate_score: float | None = None
    #: Spam score in [0, 1] and the reasons that fired (``detectors.spam.page_verdict``).
    spam_score: float | None = None
    spam_reasons: list[str] | None = None
    #: Canonical words on the page (set with the spam score).
    word_count: int | None = None
    #: (container URL, containment) for earlier pages this one lies mostly inside.
    contained_in: list[tuple[str, float]] = field(default_factory=list)
    #: (terms, bytes) of the page's term vector (``detectors.term_vectors``).
    term_vector: tuple[int, bytes] | None = None
    #: The response's ``ETag`` and ``Last-Modified`` headers, for a re-crawl's conditional requests.
    etag: str | None = None
    last_modified: str | None = None


@dataclass(slots=True)
class WriteResult:
    """What became of a batch of pages: how many were stored as crawled, and the
    (URL, one-line error) of those the store refused, stored as ``store-error`` rows
    (``errors``) or, when even that failed, not at all (``lost``)."""

    stored: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    lost: list[tuple[str, str]] = field(default_factory=list)
