"""The item the spider yields: the page's record for the store and what detectors need."""

from __future__ import annotations

from dataclasses import dataclass, field

from mirrorscope.detectors.sketch import DocumentSketch
from mirrorscope.detectors.spam_content import PageFeatures
from mirrorscope.storage.records import PageRecord


@dataclass(slots=True)
class PageItem:
    """``record`` goes to the store. The rest is for the pipelines and is not stored as is:
    ``tokens`` (canonical, HTML pages only) for the sketch, ``sketch`` for the duplicate
    index, ``outlinks`` ((URL, depth) not yet seen) to expand once the page is known not to
    be a duplicate; ``spam_input`` for the spam score."""

    record: PageRecord
    tokens: list[str] | None = None
    sketch: DocumentSketch | None = None
    outlinks: list[tuple[str, int]] = field(default_factory=list)
    #: (the page's content features or None, why they could not be measured, its word
    #: count) for the page's spam score (``crawler.page_analysis``); dropped once scored.
    spam_input: tuple[PageFeatures | None, str | None, int] | None = None
