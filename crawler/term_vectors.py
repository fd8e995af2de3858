"""The term vector pipeline: each HTML page's top tf·idf terms stored with the page.

``detectors.term_vectors`` makes the vectors; this pipeline feeds it a batch of pages at
a time on a thread of its own (``BatchThreadPipeline``), keeps the term dictionary
(term -> id, as the ``terms`` table numbers them) and the document frequencies the
crawl has counted, and hands each page's vector to the store on its record, so the
vector is written in its page's transaction. New terms are added to ``terms`` from the
pipeline's thread as they appear (the table gives the ids, so crawls sharing a store
agree on them); document frequencies are added to it every ``TERM_VECTORS_FLUSH_PAGES``
pages and at close, as increments.

Per page the work is a ``Counter`` over its tokens and dict look-ups of its distinct
words only (C loops), then numpy over the batch. It runs before the sketch pipeline,
which drops the tokens once sketched.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from scrapy.exceptions import NotConfigured

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.pipelines import BatchThreadPipeline
from mirrorscope.detectors.stopwords import STOPWORDS
from mirrorscope.detectors.term_vectors import DocumentFrequencies, encode_many, vectors_of
from mirrorscope.storage.storable import storable_text

logger = logging.getLogger(__name__)


def _is_term(word: str) -> bool:
    """A content word (``detectors.canonical.content_bag``'s rule) a ``terms`` row holds
    as it is."""
    return len(word) > 1 and word not in STOPWORDS and storable_text(word) == word


def make_vectors(
    token_lists: Sequence[Iterable[str]], ids: dict[str, int], frequencies: DocumentFrequencies,
    register: Callable[[list[str]], list[int]],
) -> list[tuple[int, bytes]]:
    """(terms, bytes) of each page's term vector; ``ids`` (term -> id) grows by the new
    terms, numbered by ``register``, and ``frequencies`` counts the pages."""
    counts = [Counter(tokens) for tokens in token_lists]
    # A word in the dictionary is a term already: one dict look-up for most words.
    words = [[w for w in c if w in ids or _is_term(w)] for c in counts]
    new = sorted({w for page in words for w in page} - ids.keys())
    if new:
        ids.update(zip(new, register(new)))
    term_ids = np.fromiter((ids[w] for page in words for w in page), dtype=np.int64)
    tf = np.fromiter((c[w] for c, page in zip(counts, words) for w in page), dtype=np.int64)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    rows = np.repeat(np.arange(len(words), dtype=np.int64), sizes)
    vectors = vectors_of(rows, term_ids, len(words), frequencies, tf)
    return list(zip(vectors.sizes.tolist(), encode_many(vectors)))


class TermVectorPipeline(BatchThreadPipeline):
    """Stores each HTML page's term vector (module docstring); off with
    ``TERM_VECTORS_ENABLED = False``. A batch that fails is logged and its pages are
    stored without vectors."""

    thread_name = "mirrorscope-terms"

    def __init__(self, crawler: Any, batch_size: int, interval: float, flush_pages: int):
        super().__init__(batch_size, interval)
        self.crawler = crawler
        self.flush_pages = flush_pages
        self.ids: dict[str, int] = {}
        self.frequencies = DocumentFrequencies()
        self.since_flush = 0

    @classmethod
    def from_crawler(cls, crawler: Any) -> "TermVectorPipeline":
        settings = crawler.settings
        if not settings.getbool("TERM_VECTORS_ENABLED"):
            raise NotConfigured("TERM_VECTORS_ENABLED is off")
        return cls(
            crawler, settings.getint("SKETCH_BATCH_SIZE"), settings.getfloat("SKETCH_BATCH_INTERVAL"),
            settings.getint("TERM_VECTORS_FLUSH_PAGES"),
        )

    def open_spider(self) -> None:
        self.store = CrawlContext.of(self.crawler).store
        # Earlier crawls' terms keep their ids, and their counts weigh this crawl's pages.
        dictionary = self.store.term_dictionary()
        self.ids = {term: tid for tid, term, _ in dictionary}
        df = np.zeros(max(self.ids.values(), default=-1) + 1, dtype=np.int64)
        for tid, _, count in dictionary:
            df[tid] = count
        self.frequencies = DocumentFrequencies(df, self.store.term_vector_count())
        super().open_spider()

    def wants(self, item: PageItem) -> bool:
        return item.tokens is not None

    def work(self, items: list[PageItem]) -> None:
        try:
            self._vectors(items)
        except Exception:
            logger.exception("could not make the term vectors of a batch of %d pages; stored without", len(items))
            self.crawler.stats.inc_value("mirrorscope/term_vectors/errors", len(items))

    def _vectors(self, items: list[PageItem]) -> None:
        made = make_vectors([item.tokens or () for item in items], self.ids, self.frequencies, self.store.term_ids)
        for item, vector in zip(items, made):
            item.record.term_vector = vector
        self.crawler.stats.inc_value("mirrorscope/term_vectors/pages", len(items))
        self.since_flush += len(items)
        if self.since_flush >= self.flush_pages:
            self._flush_frequencies()

    def _flush_frequencies(self) -> None:
        self.since_flush = 0
        ids, increments = self.frequencies.take_pending()
        self.store.add_document_frequencies(ids.tolist(), increments.tolist())

    async def close_spider(self) -> None:
        await super().close_spider()
        try:
            self._flush_frequencies()
        except Exception:
            logger.exception("could not store the term document frequencies")
