"""What the spider reads from an HTML page, computed in worker processes off the reactor.

One lxml parse per page (``detectors.canonical``) gives the tokens, title and anchors;
from them come the page's links with their anchor text and windows, and, when the spam
pipeline scores pages, the page's content features (``detectors.spam_content``, which
reads the tree). Profiled on the real-page world, this was half of the reactor's CPU:
the walk over the tree runs Python per element, holds the GIL, and a page of a thousand
links takes tens of milliseconds, during which no download progresses. So the spider
hands each page's text to a pool of ``PARSE_PROCESSES`` processes and awaits the
:class:`PageAnalysis`; the result is the same function of the same text as on the
reactor (``PARSE_PROCESSES = 0`` analyses inline), so the crawl's records do not change.

The tree never leaves the worker (lxml trees do not pickle); what comes back is plain
data: tokens, title, link records, the count of anchors past ``LINKS_PER_PAGE_MAX``, and
the spam features.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from mirrorscope.crawler.anchor_worker import leave_with_the_crawl
from mirrorscope.crawler.hosts import normalize_url, url_host
from mirrorscope.detectors.canonical import CanonicalDocument, canonical_document
from mirrorscope.detectors.spam_content import PageFeatures, page_features
from mirrorscope.storage.records import LinkRecord

logger = logging.getLogger(__name__)

__all__ = ["AnalysisOptions", "PageAnalysis", "PageAnalyser", "analyse_page", "page_links"]

_REFRESH_URL = re.compile(r"""url\s*=\s*['"]?\s*([^'"\s>]+)""", re.IGNORECASE)


def _refresh_target(content: str | None) -> str | None:
    """The URL of a ``<meta http-equiv="refresh" content="5; url=...">``, if it names one."""
    match = _REFRESH_URL.search(content) if content else None
    return match.group(1) if match else None


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """The settings a page's analysis depends on (``ANCHOR_WINDOW``, ``URL_MAX_LENGTH``,
    ``LINKS_PER_PAGE_MAX``; ``spam``: whether pages are scored; ``blocks``: whether the
    boilerplate filter wants the page's blocks)."""

    window: int
    url_max_length: int
    links_max: int
    spam: bool = False
    blocks: bool = False


@dataclass(slots=True)
class PageAnalysis:
    """A page as the spider and the pipelines need it (module docstring). ``unread``:
    anchors past ``LINKS_PER_PAGE_MAX``; ``spam_error``: why the spam features could not
    be measured (the page is then stored without a score)."""

    unparsed: bool
    title: str = ""
    tokens: list[str] | None = None
    blocks: list[list[str]] | None = None
    links: list[LinkRecord] | None = None
    unread: int = 0
    features: PageFeatures | None = None
    spam_error: str | None = None


def page_links(doc: CanonicalDocument, url: str, options: AnalysisOptions) -> tuple[list[LinkRecord], int]:
    """Every link of the page with its anchor text and the words either side, then its
    meta refresh's target as a link (the page itself is kept: a doorway's words are the
    evidence against it, and where it sends browsers is followed); and the number of
    anchors past ``links_max``, which are not read."""
    base = (normalize_url(url, doc.base_href) if doc.base_href else url) or url
    anchors, targets, read = [], [], 0
    for anchor in doc.anchors:
        if len(targets) == options.links_max:
            break
        read += 1
        target = normalize_url(base, anchor.href, options.url_max_length)
        if target is not None:
            anchors.append(anchor)
            targets.append(target)
    links = [
        LinkRecord(target_url=target, target_host=url_host(target), anchor=text, before=before, after=after)
        for target, (text, before, after) in zip(targets, doc.link_texts(anchors, options.window))
    ]
    refresh = _refresh_target(doc.meta_refresh)
    if refresh is not None and (target := normalize_url(base, refresh, options.url_max_length)) is not None:
        links.append(LinkRecord(target_url=target, target_host=url_host(target), anchor="", before="", after=""))
    return links, len(doc.anchors) - read


def analyse_page(html: str, url: str, options: AnalysisOptions) -> PageAnalysis:
    """The analysis of the page at ``url`` whose decoded text is ``html``."""
    doc = canonical_document(html)
    if doc.unparsed:
        return PageAnalysis(unparsed=True)
    links, unread = page_links(doc, url, options)
    analysis = PageAnalysis(unparsed=False, title=doc.title, tokens=doc.tokens, links=links, unread=unread,
                            blocks=doc.blocks() if options.blocks else None)
    if options.spam:
        try:
            analysis.features = page_features(doc, len(html))
        except Exception as exc:  # hostile markup: the page is stored without a score, and said why
            analysis.spam_error = f"{type(exc).__name__}: {exc}"
    return analysis


class PageAnalyser:
    """Runs :func:`analyse_page` in ``processes`` worker processes (inline with 0).

    A pool whose worker died (killed, out of memory) is replaced, the page it was given is
    analysed inline, and the crawl counts it in ``mirrorscope/parse_pool_restarts``
    (logged each time: it should never happen)."""

    def __init__(self, processes: int, options: AnalysisOptions, stats: Any) -> None:
        self.processes = processes
        self.options = options
        self.stats = stats
        self.pool: ProcessPoolExecutor | None = self._pool()

    def _pool(self) -> ProcessPoolExecutor | None:
        if not self.processes:
            return None
        # spawn: the crawl's process has threads (the store's, the sketches'), which fork does
        # not copy safely. A pool's workers do not notice a killed parent; the watch ends them.
        return ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"), initializer=leave_with_the_crawl)

    async def analyse(self, html: str, url: str) -> PageAnalysis:
        if self.pool is None:
            return analyse_page(html, url, self.options)
        pool = self.pool
        try:
            return await asyncio.wrap_future(pool.submit(analyse_page, html, url, self.options))
        except BrokenProcessPool as exc:
            # Every page the pool held fails at once: the first to see it replaces the pool.
            if self.pool is pool:
                self.stats.inc_value("mirrorscope/parse_pool_restarts")
                logger.error("the page parser's worker process died (%s) at %s; its pool is started again", exc, url)
                pool.shutdown(wait=False, cancel_futures=True)
                self.pool = self._pool()
            return analyse_page(html, url, self.options)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
