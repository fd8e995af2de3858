"""The item the spider yields: the page's record for the store and what detectors need."""

from __future__ import annotations

from dataclasses import dataclass, field

from mirrorscope.detectors.canonical import CanonicalDocument
from mirrorscope.detectors.sketch import DocumentSketch
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
    #: (the parsed page, its HTML's length in characters) for the page's spam score;
    #: dropped once scored.
    spam_input: tuple[CanonicalDocument, int] | None = None
