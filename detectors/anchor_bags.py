"""Anchor bags: a URL described by what the pages linking to it say.

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000)
describe a URL not by its own text but by the words of the links to it. Every link gives
a bag fragment: its anchor text plus a window of the words just before and just after it
(``window`` = 8 each side, the paper's choice and the store's ``ANCHOR_WINDOW``),
stopwords and one-character words dropped as in content bags
(``detectors.canonical.content_bag``). The window is cut in the page's words first, then
filtered, so it covers the same stretch of the page whatever the words are. A URL's bag
is the multiset union of the fragments of all links to it, plus the words of its own
title once it is fetched (a later title replaces the earlier one). Fragment inputs are
canonical words separated by spaces (``detectors.canonical``, as the store keeps them);
titles are raw text and are tokenised here.

Bags are kept in CSR form (``Bags``: term ids and counts per bag), built from rows by
one sort (``bags_from_arrays``) and joined a slice of bags at a time (``merge_bags``);
``BagBuilder`` grows them link by link during a crawl. Their weights are
``detectors.tfidf``'s, their signatures ``detectors.weighted_minhash``'s.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice, repeat

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.canonical import WINDOW, content_bag, tokenize
from mirrorscope.detectors.rabin import RABIN64
from mirrorscope.detectors.runs import ramp, run_starts, runs

__all__ = [
    "MERGE_SLICE_ENTRIES",
    "WINDOW",
    "BagBuilder",
    "Bags",
    "Vocabulary",
    "bags_from_arrays",
    "fragment_terms",
    "merge_bags",
    "title_terms",
]

# add_fragments' marker tokens (control characters: never in a canonical word, and not
# whitespace to str.split) and their codes, beside term ids >= 0.
_LINK, _FIELD = "\x02", "\x03"
_DROPPED, _LINK_CODE, _FIELD_CODE, _UNSEEN = -1, -2, -3, -4


def fragment_terms(anchor: str, before: str, after: str, window: int = WINDOW) -> list[str]:
    """The bag fragment of one link: the last ``window`` words of ``before``, the anchor
    text and the first ``window`` words of ``after``, stopwords and one-character words
    dropped. Inputs are canonical words separated by spaces."""
    if window < 0:
        raise ValueError("window must not be negative")
    words = before.split()
    words = words[max(len(words) - window, 0) :] if window else []
    words += anchor.split()
    words += after.split()[:window]
    return content_bag(words)


def title_terms(title: str) -> list[str]:
    """A title's bag words: canonical tokens, stopwords and one-character words dropped."""
    return content_bag(tokenize(title))


class Vocabulary:
    """Term -> id (dense, in order of first sight) and each id's 64-bit term key.

    Ids index arrays; keys (Rabin fingerprints of the UTF-8 bytes) feed the min-hash,
    so two vocabularies that met the words in different orders give equal signatures.
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._keys = np.empty(0, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self._ids)

    def ids(self, terms: Iterable[str]) -> list[int]:
        """Ids of ``terms``, new terms added."""
        ids = self._ids
        # len(ids) is read before setdefault inserts: a new term gets the next id.
        return [ids.setdefault(term, len(ids)) for term in terms]

    def terms(self) -> list[str]:
        """Every term, by id."""
        return list(self._ids)

    @property
    def keys(self) -> np.ndarray:
        """(len,) uint64 term keys by id, fingerprinting only terms added since last time."""
        if self._keys.size < len(self._ids):
            new = [term.encode("utf-8") for term in islice(self._ids, self._keys.size, None)]
            self._keys = np.concatenate((self._keys, RABIN64.fingerprint_many(new)))
        return self._keys


@dataclass(frozen=True, slots=True)
class Bags:
    """Many bags in CSR form: bag ``bag_ids[b]`` holds terms ``term_ids[offsets[b] :
    offsets[b + 1]]`` (ascending, distinct) with ``counts`` (tf, or multiplicities after
    ``multiplicities``). ``bag_ids`` ascending and distinct; a bag may be empty."""

    bag_ids: np.ndarray  # (n,) int64
    offsets: np.ndarray  # (n + 1,) int64
    term_ids: np.ndarray  # (total,) int32: 12 bytes an entry with the counts, not 16
    counts: np.ndarray  # (total,) int32

    def __len__(self) -> int:
        return int(self.bag_ids.size)

    @property
    def sizes(self) -> np.ndarray:
        """Distinct terms per bag."""
        return np.diff(self.offsets)

    def select(self, bag_ids: ArrayLike) -> Bags:
        """The bags ``bag_ids`` (sorted, deduplicated); ids not held come out empty."""
        wanted = np.unique(np.asarray(bag_ids, dtype=np.int64))
        if not len(self):
            return Bags(wanted, np.zeros(wanted.size + 1, dtype=np.int64), self.term_ids, self.counts)
        where = np.minimum(np.searchsorted(self.bag_ids, wanted), len(self) - 1)
        lengths = np.where(self.bag_ids[where] == wanted, self.sizes[where], 0)
        entries = np.repeat(self.offsets[where], lengths) + ramp(lengths)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return Bags(wanted, offsets, self.term_ids[entries], self.counts[entries])


def bags_from_arrays(
    bag_ids: ArrayLike, term_ids: ArrayLike, counts: ArrayLike | None = None, include: ArrayLike | None = None
) -> Bags:
    """CSR bags from rows (bag, term[, count]) in any order; rows of the same bag and term
    are merged, counts summed (each row counts 1 without ``counts``). Bags listed in
    ``include`` but without rows come out empty."""
    bags = np.asarray(bag_ids, dtype=np.int64).ravel()
    terms = np.asarray(term_ids, dtype=np.int64).ravel()
    if bags.shape != terms.shape:
        raise ValueError("bag_ids and term_ids differ in length")
    if terms.size and (terms.min() < 0 or terms.max() >= 2**31):
        raise ValueError("term ids must lie in [0, 2^31)")
    if bags.size and (bags[1:] >= bags[:-1]).all():  # rows grouped by bag already (the common case)
        ids = bags[run_starts(bags)]
    else:
        ids = np.unique(bags)
    if include is not None:
        ids = np.union1d(ids, np.asarray(include, dtype=np.int64))
    vocabulary = int(terms.max()) + 1 if terms.size else 1
    if ids.size * vocabulary >= 2**63:
        raise ValueError("too many bags times terms to pack (bag, term) into 63 bits")
    key = np.searchsorted(ids, bags) * vocabulary + terms
    if counts is None:
        key.sort()
        starts, lengths = runs(key)
        merged = lengths.astype(np.int32)
        del lengths  # 8 bytes an entry: freed before the keys are cut, as the peak is here
    else:
        weights = np.asarray(counts, dtype=np.int64).ravel()
        if weights.shape != terms.shape:
            raise ValueError("counts and term_ids differ in length")
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(run_starts(key))
        merged = np.add.reduceat(weights[order], starts).astype(np.int32) if key.size else np.empty(0, np.int32)
    key = key[starts]
    offsets = np.searchsorted(key // vocabulary, np.arange(ids.size + 1)).astype(np.int64)
    return Bags(ids, offsets, (key % vocabulary).astype(np.int32), merged)


#: Entries (of both inputs) joined per slice by ``merge_bags``: ~12 MB of temporaries.
MERGE_SLICE_ENTRIES = 1 << 18


def merge_bags(first: Bags, second: Bags, slice_entries: int = MERGE_SLICE_ENTRIES) -> Bags:
    """The union of two sets of bags, counts of shared (bag, term) entries summed.

    Equal to ``bags_from_arrays`` over both inputs' rows, but built a slice of bag ids
    at a time (about ``slice_entries`` entries each) into arrays sized for both inputs
    and shrunk in place at the end, so that beyond the inputs and the result only one
    slice's temporaries are held."""
    ids = np.union1d(first.bag_ids, second.bag_ids)
    entries = np.zeros(ids.size, dtype=np.int64)
    for bags in (first, second):
        entries[np.searchsorted(ids, bags.bag_ids)] += bags.sizes
    total = int(entries.sum())
    ends = np.searchsorted(np.cumsum(entries), np.arange(slice_entries, total + slice_entries, slice_entries), side="right")
    bounds = np.unique(np.concatenate(([0], np.minimum(np.maximum(ends, 1), ids.size), [ids.size])))
    offsets = np.zeros(ids.size + 1, dtype=np.int64)
    terms, counts = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.int32)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        part = [bags.select(ids[lo:hi]) for bags in (first, second)]
        joined = bags_from_arrays(
            np.concatenate([np.repeat(p.bag_ids, p.sizes) for p in part]), np.concatenate([p.term_ids for p in part]),
            np.concatenate([p.counts for p in part]), include=ids[lo:hi],
        )
        start = int(offsets[lo])
        offsets[lo + 1 : hi + 1] = start + joined.offsets[1:]
        terms[start : start + joined.term_ids.size] = joined.term_ids
        counts[start : start + joined.counts.size] = joined.counts
    # Shared entries were summed: fewer than both inputs'. resize() shrinks in place
    # (realloc), where slicing and copying would hold the result twice.
    for column in (terms, counts):
        column.resize(int(offsets[-1]), refcheck=False)
    return Bags(ids, offsets, terms, counts)


class BagBuilder:
    """Bags built link by link during a crawl; ``changed()`` names the bags to recompute.

    Fragments are kept as (bag, term) rows (16 bytes each), merged into a CSR of counts
    (12 bytes per distinct (bag, term)) whenever the unmerged rows outnumber both a
    quarter of the merged entries and ``merge_floor`` (2^20 rows, 16 MB). A merge sorts
    only the new rows and joins them to the merged bags a slice of bags at a time
    (``merge_bags``), so it costs O(merged) time and little memory beyond the result,
    where one sort of both would hold every entry twice over. Each ``add_fragment`` adds
    one link: feed every stored link once (a re-crawled page whose links are fed again
    counts them twice). Titles are few (one per fetched page) and
    stay as rows.
    """

    def __init__(self, window: int = WINDOW, vocabulary: Vocabulary | None = None, merge_floor: int = 1 << 20) -> None:
        if window < 0:
            raise ValueError("window must not be negative")
        self.window = window
        # Unmerged rows held before the first merge (16 bytes each): merging sorts every
        # entry, so a floor well above a batch's rows keeps merges few.
        self.merge_floor = merge_floor
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self._merged = bags_from_arrays([], [])
        self._rows_bag = array("q")
        self._rows_term = array("q")
        # Titles: one row per word with the serial of its add_title call; the latest
        # serial per bag (also for an empty title) says which rows are current.
        self._title_bag = array("q")
        self._title_term = array("q")
        self._title_row_serial = array("q")
        self._title_owner = array("q")
        # The current title rows sorted by bag, and the add_title calls they cover: every
        # slice of ``bags`` reads them, and recomputing them per slice is quadratic.
        self._current: tuple[int, np.ndarray, np.ndarray] | None = None
        self._touched = array("q")
        self._reported = 0
        # Every token add_fragments met: its term id, or a marker or dropped code.
        self._codes: dict[str, int] = {_LINK: _LINK_CODE, _FIELD: _FIELD_CODE}

    def add_fragment(self, url_id: int, anchor: str, before: str, after: str) -> None:
        """Add one link to ``url_id``: its anchor text and the words before and after."""
        ids = self.vocabulary.ids(fragment_terms(anchor, before, after, self.window))
        self._rows_bag.extend(repeat(url_id, len(ids)))
        self._rows_term.extend(ids)
        self._touched.append(url_id)
        if len(self._rows_term) > max(self._merged.term_ids.size // 4, self.merge_floor):
            self.merge()

    def add_fragments(
        self, url_ids: Sequence[int], anchors: Sequence[str], befores: Sequence[str], afters: Sequence[str]
    ) -> None:
        """``add_fragment`` for many links at once, with the same result.

        The links' words are joined into one string with a marker token opening each
        link and another between its three fields, split once, and mapped to term ids
        through a cache of every token met (kept or dropped); the window cut and the
        stopword filter are then numpy masks over token positions. About 2 us a link
        instead of ~25 us link by link: the crawl's pipeline feeds batches through here.
        The cache holds one entry per distinct token (about the vocabulary's size again).
        Inputs holding the marker characters (never canonical words) go link by link.
        """
        count = len(url_ids)
        if not count == len(anchors) == len(befores) == len(afters):
            raise ValueError("url_ids, anchors, befores and afters differ in length")
        if not count:
            return
        text = _LINK + " " + f" {_LINK} ".join(
            f"{b} {_FIELD} {a} {_FIELD} {f}" for a, b, f in zip(anchors, befores, afters)
        )
        if text.count(_LINK) != count or text.count(_FIELD) != 2 * count:
            for link in zip(url_ids, anchors, befores, afters):
                self.add_fragment(*link)
            return
        tokens = text.split()
        get = self._codes.get
        codes = np.array([get(t, _UNSEEN) for t in tokens], dtype=np.int64)
        unseen = np.flatnonzero(codes == _UNSEEN).tolist()
        if unseen:
            self._learn(list(dict.fromkeys([tokens[at] for at in unseen])))
            codes[unseen] = [get(tokens[at]) for at in unseen]
        position = np.arange(codes.size)
        fields = np.flatnonzero(codes == _FIELD_CODE).reshape(count, 2)
        link = np.cumsum(codes == _LINK_CODE) - 1
        before_end, after_start = fields[link, 0], fields[link, 1]
        in_window = (
            ((position > before_end) & (position < after_start))  # the anchor
            | ((position < before_end) & (before_end - position <= self.window))
            | ((position > after_start) & (position - after_start <= self.window))
        )
        keep = (codes >= 0) & in_window
        targets = np.asarray(url_ids, dtype=np.int64)
        self._rows_bag.frombytes(targets[link[keep]].tobytes())
        self._rows_term.frombytes(codes[keep].tobytes())
        self._touched.frombytes(targets.tobytes())
        if len(self._rows_term) > max(self._merged.term_ids.size // 4, self.merge_floor):
            self.merge()

    def _learn(self, tokens: list[str]) -> None:
        """Codes of distinct tokens not met before: term ids for the words a bag keeps
        (``content_bag``'s rule), the dropped code for the others."""
        kept = content_bag(tokens)
        self._codes.update(dict.fromkeys(tokens, _DROPPED))
        self._codes.update(zip(kept, self.vocabulary.ids(kept)))

    def add_title(self, url_id: int, title: str) -> None:
        """Set the title of ``url_id`` (raw text), replacing any earlier one."""
        ids = self.vocabulary.ids(title_terms(title))
        serial = len(self._title_owner)
        self._title_owner.append(url_id)
        self._title_bag.extend(repeat(url_id, len(ids)))
        self._title_term.extend(ids)
        self._title_row_serial.extend(repeat(serial, len(ids)))
        self._touched.append(url_id)

    def changed(self) -> np.ndarray:
        """Ids of the bags touched since the last call (sorted), then forgets them."""
        touched = np.frombuffer(self._touched, dtype=np.int64)[self._reported :]
        self._reported = len(self._touched)
        return np.unique(touched)

    def merge(self) -> None:
        """Fold the unmerged fragment rows into the merged counts (``bags`` is unchanged)."""
        if not len(self._rows_term):
            return
        fresh = bags_from_arrays(np.frombuffer(self._rows_bag, dtype=np.int64), np.frombuffer(self._rows_term, dtype=np.int64))
        self._rows_bag, self._rows_term = array("q"), array("q")
        self._merged = merge_bags(self._merged, fresh)
        # Forget repeats of touched ids, keeping what changed() has not reported yet.
        touched = np.frombuffer(self._touched, dtype=np.int64)
        reported = np.unique(touched[: self._reported])
        pending = np.unique(touched[self._reported :])
        self._touched = array("q", reported.tobytes()) + array("q", pending.tobytes())
        self._reported = reported.size

    def bags(self, url_ids: ArrayLike | None = None) -> Bags:
        """Term-count bags (tf) of ``url_ids``, default every bag ever touched; bags
        touched without words (empty anchors, empty titles) come out empty."""
        chosen = np.frombuffer(self._touched, dtype=np.int64) if url_ids is None else url_ids
        wanted = np.unique(np.asarray(chosen, dtype=np.int64))
        merged = self._merged.select(wanted)
        rows_bag = np.frombuffer(self._rows_bag, dtype=np.int64)
        rows_term = np.frombuffer(self._rows_term, dtype=np.int64)
        fresh = np.isin(rows_bag, wanted)
        title_bag, title_term = self._current_titles()
        first, last = np.searchsorted(title_bag, wanted), np.searchsorted(title_bag, wanted, side="right")
        title = np.repeat(first, last - first) + ramp(last - first)
        return bags_from_arrays(
            np.concatenate((np.repeat(merged.bag_ids, merged.sizes), rows_bag[fresh], title_bag[title])),
            np.concatenate((merged.term_ids, rows_term[fresh], title_term[title])),
            np.concatenate((merged.counts, np.ones(np.count_nonzero(fresh) + title.size, dtype=np.int32))),
            include=wanted,
        )

    def _current_titles(self) -> tuple[np.ndarray, np.ndarray]:
        """Bag and term of the rows of each bag's latest title, sorted by bag."""
        calls = len(self._title_owner)
        if self._current is not None and self._current[0] == calls:
            return self._current[1], self._current[2]
        owner = np.frombuffer(self._title_owner, dtype=np.int64)
        bag = np.frombuffer(self._title_bag, dtype=np.int64)
        serial = np.frombuffer(self._title_row_serial, dtype=np.int64)
        term = np.frombuffer(self._title_term, dtype=np.int64)
        current = np.empty(0, dtype=np.int64)
        if bag.size:
            # Latest add_title serial per bag: serials are call order, so the last call wins.
            owners, last_from_end = np.unique(owner[::-1], return_index=True)
            latest = owner.size - 1 - last_from_end
            current = np.flatnonzero(serial == latest[np.searchsorted(owners, bag)])
            current = current[np.argsort(bag[current], kind="stable")]
        # Copies, not views: an array("q") exporting its buffer cannot grow.
        self._current = (calls, bag[current], term[current])
        return self._current[1], self._current[2]
