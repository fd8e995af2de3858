"""The item the spider yields: the page's record for the store and what detectors need."""

from __future__ import annotations

from dataclasses import dataclass

from storage.records import PageRecord


@dataclass(slots=True)
class PageItem:
    """``record`` goes to the store; ``tokens`` (canonical, HTML pages only) feed the
    sketch pipeline and are not stored themselves."""

    record: PageRecord
    tokens: list[str] | None = None
