"""Anchor bags keyed by URL, kept up to date link by link during a crawl.

The incremental side of Haveliwala, Gionis and Indyk's pipeline ("Scalable techniques
for clustering the Web", WebDB 2000; ``detectors.anchors``): links and titles update
only the bags of the URLs they name, and only those bags are signed again, against an
idf snapshot retaken when the collection has grown by a factor ``growth`` (default 2),
so each bag is signed O(1) times per doubling besides the times it changes
(``detectors.tfidf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from mirrorscope.detectors.anchor_bags import BagBuilder
from mirrorscope.detectors.anchors import DEFAULT_PARAMS, AnchorParams
from mirrorscope.detectors.tfidf import Idf, multiplicities
from mirrorscope.detectors.weighted_minhash import minhash_signatures

__all__ = ["SIGN_SLICE_BAGS", "ChangedSignatures", "UrlBags"]


class ChangedSignatures(NamedTuple):
    """MH signatures of the bags that changed, by URL, with what they were made from."""

    urls: list[str]
    signatures: np.ndarray  # (n, m) uint32
    terms: np.ndarray  # (n,) distinct terms per bag
    idf: Idf  # the snapshot the multiplicities used
    refreshed: bool  # True when the snapshot was retaken (every bag is then in ``urls``)


#: Bags signed (or counted for an idf snapshot) at a time by ``UrlBags``: the temporaries
#: of one slice, not of every bag at once (a link-heavy host's bags hold hundreds of
#: terms of multiplicity up to 255: tens of thousands of elements a bag).
SIGN_SLICE_BAGS = 256


class UrlBags:
    """Anchor bags keyed by URL, kept up to date link by link, giving the MH signatures
    of only the bags that changed (the incremental side of Haveliwala, Gionis and
    Indyk's pipeline; see the module docstring's "Idf snapshots").

    ``add_links`` and ``add_title`` update the bags their URLs name (a ``BagBuilder``
    underneath, URLs numbered in order of first sight). ``changed_signatures`` returns
    the signatures of the bags touched since its last call, weighted against the current
    ``Idf`` snapshot; the snapshot is retaken, and every bag signed again, when the
    number of bags has grown by ``growth`` (2: doubled) since it was taken, so each bag
    is signed O(1) times per doubling besides the times it changes. The first call
    takes the first snapshot: fed every stored link and title once and asked once, it
    gives exactly the signatures of a full recompute (``cluster_bags``). Signatures are
    not kept: the caller stores them. Memory is the bags' (~12 bytes per distinct (URL,
    term)) and one string per URL.

    Parameters: ``params`` (window, scale, cap, m, seed: ``AnchorParams``) and
    ``growth`` (> 1).
    """

    def __init__(self, params: AnchorParams = DEFAULT_PARAMS, growth: float = 2.0) -> None:
        if growth <= 1.0:
            raise ValueError("growth must exceed 1")
        self.params = params
        self.growth = growth
        self.builder = BagBuilder(params.window)
        self.urls: list[str] = []
        self._ids: dict[str, int] = {}
        self.idf = Idf(0, np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64))
        self._urls_at_snapshot = 0

    def __len__(self) -> int:
        return len(self.urls)

    def _id(self, url: str) -> int:
        ids = self._ids
        found = ids.get(url)
        if found is None:
            found = ids[url] = len(self.urls)
            self.urls.append(url)
        return found

    def add_links(self, targets: Sequence[str], anchors: Sequence[str], befores: Sequence[str], afters: Sequence[str]) -> None:
        """One fragment per link to ``targets[i]``: anchor text and the words either side."""
        ids = self._ids
        missing = [url for url in targets if url not in ids]
        for url in missing:
            self._id(url)
        self.builder.add_fragments([ids[url] for url in targets], anchors, befores, afters)

    def add_title(self, url: str, title: str) -> None:
        """Set the title of ``url`` (raw text), replacing any earlier one."""
        self.builder.add_title(self._id(url), title)

    def stale(self) -> bool:
        """True when the next ``changed_signatures`` will retake the snapshot."""
        taken = self._urls_at_snapshot
        return bool(self.urls) and (taken == 0 or len(self.urls) >= self.growth * taken)

    def changed_signatures(self) -> ChangedSignatures:
        """Signatures of the bags changed since the last call (all of them when the
        snapshot is retaken), in URL order of first sight."""
        changed = self.builder.changed()
        refreshed = self.stale()
        keys = self.builder.vocabulary.keys
        # Merged first, so that each slice of bags below is a cheap selection.
        self.builder.merge()
        if refreshed:
            changed = np.arange(len(self.urls), dtype=np.int64)
            self.idf = self._snapshot(changed, keys)
            self._urls_at_snapshot = len(self.urls)
        params = self.params
        signatures, sizes = [np.empty((0, params.m), dtype=np.uint32)], [np.empty(0, dtype=np.int64)]
        for start in range(0, changed.size, SIGN_SLICE_BAGS):
            bags = self.builder.bags(changed[start : start + SIGN_SLICE_BAGS])
            weighted = multiplicities(bags, keys, self.idf, params.scale, params.cap)
            signatures.append(minhash_signatures(weighted, keys, params.m, params.seed))
            sizes.append(bags.sizes)
        urls = [self.urls[i] for i in changed.tolist()]
        return ChangedSignatures(urls, np.concatenate(signatures), np.concatenate(sizes), self.idf, refreshed)

    def _snapshot(self, url_ids: np.ndarray, keys: np.ndarray) -> Idf:
        """``Idf.of`` every bag, summed a slice of bags at a time."""
        df = np.zeros(keys.size, dtype=np.int64)
        n_bags = 0
        for start in range(0, url_ids.size, SIGN_SLICE_BAGS):
            bags = self.builder.bags(url_ids[start : start + SIGN_SLICE_BAGS])
            df += np.bincount(bags.term_ids, minlength=keys.size)
            n_bags += int(np.count_nonzero(bags.sizes))
        present = np.flatnonzero(df)
        order = np.argsort(keys[present], kind="stable")
        return Idf(n_bags, keys[present][order], df[present][order])
