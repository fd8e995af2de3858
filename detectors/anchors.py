"""Anchor-based bags, tf-idf multiplicities, min-hash signatures and CENTER clusters.

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000)
describe a URL not by its own text but by what other pages say when they link to it:

* **Bags.** Every link gives a bag fragment: its anchor text plus a window of the words
  just before and just after it (``window`` = 8 each side, the paper's choice and the
  store's ``ANCHOR_WINDOW``), stopwords and one-character words dropped as in content
  bags (``detectors.canonical.content_bag``). The window is cut in the page's words
  first, then filtered, so it covers the same stretch of the page whatever the words
  are. A URL's bag is the multiset union of the fragments of all links to it, plus the
  words of its own title once it is fetched (a later title replaces the earlier one).
  Fragment inputs are canonical words separated by spaces (``detectors.canonical``, as
  the store keeps them); titles are raw text and are tokenised here.
* **Weights.** Term t of bag u weighs tf-idf, w = tf(t, u) * log(N / df(t)), with N
  the bags holding at least one term and df(t) those holding t (as in the paper).
  Min-hashing needs a set, so weights become integer multiplicities

      mult(t, u) = clip(round(scale * w), 1, cap),   scale = 0.5, cap = 255,

  and term t with multiplicity k becomes the elements (t, 1) ... (t, k): the plain
  Jaccard similarity of two expanded sets is then the weighted Jaccard
  sum_t min(mult_u, mult_v) / sum_t max(mult_u, mult_v) of the quantised weights.
  Anchor terms have idf between ~1 (in a third of all bags) and log N (13.8 for a
  million bags): at scale 0.5 an informative term gets 3 to 7 copies and a typical bag
  of tens of terms 50 to 200 elements, fine enough that quantisation moves similarities
  far less than the signature's own error (0.056 at 0.5), coarse enough to sign a
  million bags fast (``benchmarks/anchors.py``: ~110 elements per bag, 10 to 25 s).
  The floor keeps terms found in every bag (idf 0) once; the cap bounds what one term
  repeated over thousands of links (a popular page's "home") can weigh, and with it
  the work on a giant bag.
* **Idf snapshots.** idf depends on every bag, so adding a link would change other bags'
  weights. Weights are computed against an ``Idf`` snapshot (N and the document
  frequencies, by term key, at some moment); incremental updates with the same
  snapshot give exactly the signatures of a full recompute. Refresh the snapshot, and
  recompute everything, when the collection has grown by a fair factor (say doubled):
  amortised, each bag is recomputed O(1) times per doubling. Terms absent from the
  snapshot count as in one bag.
* **MH signatures.** m = 80 min-hash values per bag: h_i(x) = fmix32(key(x) xor s_i) for
  i < m, the minimum over the bag's elements. key(t, c) is the top half of the c-th
  splitmix64 output seeded with the 64-bit fingerprint of term t's UTF-8 bytes
  (``detectors.rabin.RABIN64``), so keys depend only on the words, never on the order
  in which a vocabulary met them; s_i are splitmix64(seed) words; fmix32 is
  MurmurHash3's 32-bit finaliser. Values are uint32: half the memory and time of 64-bit
  values, and two distinct elements of a union of u elements tie with probability
  about u / 2^32 per position, far below the estimator's own spread. P[h_i agree] is the
  Jaccard similarity of the expanded sets; the tests check the spread of the agreement
  fraction against sqrt(J (1 - J) / m).
* **Pairs and clusters.** ``detectors.anchor_lsh``: LSH signatures of k = 3 MH values in
  l = 125 tables, ExtractSimilarPairs by sorting, the 20% agreement filter; then CENTER
  (``detectors.center``) over the pairs by descending similarity.

Signatures are comparable only when made with equal ``AnchorParams`` (window, scale,
cap, m, seed) and the same ``Idf`` snapshot: store both beside them.

Vectorised: signatures are computed for bags sorted by element count, a chunk of bags of
nearly equal size at a time padded to one width (with copies of each bag's own last
element, which leave its minimum unchanged), so all m functions of a chunk are one
(bags, width, m) numpy block reduced along its middle axis; ``np.minimum.reduceat``
pays ~20 ns per segment and bag, more than the hashing. Bags larger than a chunk are
reduced in slices.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.anchor_lsh import (
    DEFAULT_K,
    DEFAULT_L,
    DEFAULT_LSH_SEED,
    DEFAULT_MAX_GROUP,
    DEFAULT_MIN_AGREEMENT,
    EMPTY,
    SimilarPairs,
    similar_pairs,
)
from mirrorscope.detectors.canonical import WINDOW, content_bag, tokenize
from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.lsh import mix64
from mirrorscope.detectors.minhash import splitmix64
from mirrorscope.detectors.rabin import RABIN64
from mirrorscope.detectors.runs import ramp

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_M",
    "DEFAULT_PARAMS",
    "DEFAULT_SCALE",
    "DEFAULT_SEED",
    "EMPTY",
    "WINDOW",
    "AnchorClusters",
    "AnchorParams",
    "BagBuilder",
    "Bags",
    "ChangedSignatures",
    "Idf",
    "Vocabulary",
    "bags_from_arrays",
    "cluster_bags",
    "fragment_terms",
    "minhash_signatures",
    "multiplicities",
    "title_terms",
    "UrlBags",
]

#: Multiplicity per unit of tf-idf weight.
DEFAULT_SCALE = 0.5
#: Largest multiplicity of one term in one bag.
DEFAULT_CAP = 255
#: MH values per bag (the paper's m = 80).
DEFAULT_M = 80
#: Seed of the m min-hash functions.
DEFAULT_SEED = 0x616E63686F722D6D  # b"anchor-m"

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # splitmix64's increment
_FMIX1 = np.uint32(0x85EBCA6B)
_FMIX2 = np.uint32(0xC2B2AE35)
_S16, _S13 = np.uint32(16), np.uint32(13)
# Hash values per padded chunk (bags x width x m uint32): ~2 MB, so the chunk and its
# scratch copy stay in cache through the finaliser's eight passes.
_CHUNK_VALUES = 1 << 19
# CSR entries, and the elements they expand to (an entry with multiplicity c gives c
# elements, up to the cap), expanded into element keys per numpy pass (~40 bytes per
# element: 1M elements, ~40 MB of temporaries at most).
_EXPAND_ENTRIES = 1 << 20
_EXPAND_ELEMENTS = 1 << 20
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
        ids = bags[np.concatenate(([True], bags[1:] != bags[:-1]))]
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
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1]))) if key.size else key
        merged = np.diff(np.append(starts, key.size)).astype(np.int32)
    else:
        weights = np.asarray(counts, dtype=np.int64).ravel()
        if weights.shape != terms.shape:
            raise ValueError("counts and term_ids differ in length")
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1]))) if key.size else key
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
    (``merge_bags``), so it costs O(merged) time and little memory beyond the result:
    merging rows as many as the merged entries with one sort of both took 1.5 GB at
    10.5 million entries (20,000 pages of 300 links each). Each ``add_fragment`` adds one link: feed every stored link once (a re-crawled page whose
    links are fed again counts them twice). Titles are few (one per fetched page) and
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
        title = np.isin(title_bag, wanted)
        return bags_from_arrays(
            np.concatenate((np.repeat(merged.bag_ids, merged.sizes), rows_bag[fresh], title_bag[title])),
            np.concatenate((merged.term_ids, rows_term[fresh], title_term[title])),
            np.concatenate((merged.counts, np.ones(np.count_nonzero(fresh) + np.count_nonzero(title), dtype=np.int32))),
            include=wanted,
        )

    def _current_titles(self) -> tuple[np.ndarray, np.ndarray]:
        owner = np.frombuffer(self._title_owner, dtype=np.int64)
        bag = np.frombuffer(self._title_bag, dtype=np.int64)
        serial = np.frombuffer(self._title_row_serial, dtype=np.int64)
        if not bag.size:
            return bag, np.frombuffer(self._title_term, dtype=np.int64)
        # Latest add_title serial per bag: serials are call order, so the last call wins.
        owners, last_from_end = np.unique(owner[::-1], return_index=True)
        latest = owner.size - 1 - last_from_end
        current = serial == latest[np.searchsorted(owners, bag)]
        return bag[current], np.frombuffer(self._title_term, dtype=np.int64)[current]


@dataclass(frozen=True, slots=True)
class Idf:
    """An idf snapshot: N (bags with at least one term) and df per term, keyed by term
    key (``Vocabulary.keys``), so a snapshot outlives the vocabulary that took it (a
    restarted crawl numbers its terms afresh) and can be stored as (key, df) rows."""

    n_bags: int
    term_keys: np.ndarray  # (t,) uint64, ascending
    document_frequency: np.ndarray  # (t,) int64, > 0

    @classmethod
    def of(cls, bags: Bags, term_keys: ArrayLike) -> Idf:
        """The snapshot of term-count ``bags`` whose term ids index ``term_keys``."""
        keys = np.asarray(term_keys, dtype=np.uint64)
        df = np.bincount(bags.term_ids, minlength=keys.size)
        present = np.flatnonzero(df)
        order = np.argsort(keys[present], kind="stable")
        return cls(int(np.count_nonzero(bags.sizes)), keys[present][order], df[present][order].astype(np.int64))

    def values(self, term_keys: ArrayLike) -> np.ndarray:
        """log(N / df) per term key; terms unseen by the snapshot count as in one bag."""
        keys = np.asarray(term_keys, dtype=np.uint64)
        df = np.ones(keys.shape, dtype=np.float64)
        if self.term_keys.size:
            where = np.minimum(np.searchsorted(self.term_keys, keys), self.term_keys.size - 1)
            seen = self.term_keys[where] == keys
            df[seen] = self.document_frequency[where[seen]]
        return np.log(max(self.n_bags, 1) / df).clip(min=0.0)


def multiplicities(
    bags: Bags, term_keys: ArrayLike, idf: Idf, scale: float = DEFAULT_SCALE, cap: int = DEFAULT_CAP
) -> Bags:
    """The term-count bags with counts turned into multiplicities
    clip(round(scale tf idf), 1, cap); term ids index ``term_keys``."""
    if scale <= 0 or cap < 1:
        raise ValueError("scale must be positive and cap at least 1")
    per_term = idf.values(term_keys) * scale  # per vocabulary entry, then gathered per bag entry
    weight = bags.counts * per_term[bags.term_ids]
    return Bags(bags.bag_ids, bags.offsets, bags.term_ids, np.clip(np.rint(weight), 1, cap).astype(np.int32))


def _function_seeds(seed: int, m: int) -> np.ndarray:
    words = splitmix64(seed)
    return np.array([next(words) >> 32 for _ in range(m)], dtype=np.uint32)


def _element_keys(term_keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """key(t, c) for c = 1 .. count of every CSR entry, concatenated: the top 32 bits of
    the c-th splitmix64 output seeded with t's key."""
    ends = np.cumsum(counts)
    keys = np.empty(int(ends[-1]) if ends.size else 0, dtype=np.uint32)
    start = 0
    while start < counts.size:
        # Bounded by elements, not entries: an entry expands to up to ``cap`` (255) elements.
        done = int(ends[start - 1]) if start else 0
        stop = max(start + 1, min(int(np.searchsorted(ends, done + _EXPAND_ELEMENTS, side="right")), start + _EXPAND_ENTRIES))
        copies = counts[start:stop]
        state = np.repeat(term_keys[start:stop], copies)
        state += (ramp(copies) + 1).astype(np.uint64) * _GOLDEN
        first = int(ends[start] - counts[start])
        keys[first : first + state.size] = mix64(state) >> np.uint64(32)
        start = stop
    return keys


def _min_hash(keys: np.ndarray, seeds: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """fmix32(key xor seed_i) for every key (any shape) and seed, in ``out``'s buffer."""
    h = out[: keys.size * seeds.size].reshape(*keys.shape, seeds.size)
    s = scratch[: h.size].reshape(h.shape)
    np.bitwise_xor(keys[..., None], seeds, out=h)
    np.right_shift(h, _S16, out=s)
    h ^= s
    h *= _FMIX1
    np.right_shift(h, _S13, out=s)
    h ^= s
    h *= _FMIX2
    np.right_shift(h, _S16, out=s)
    h ^= s
    return h


def minhash_signatures(bags: Bags, term_keys: ArrayLike, m: int = DEFAULT_M, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(n, m) uint32 MH signatures of bags whose counts are multiplicities; ``term_keys``
    (uint64, by term id: ``Vocabulary.keys``) name the terms. Empty bags get all ``EMPTY``."""
    if m < 1:
        raise ValueError("m must be positive")
    keys = np.asarray(term_keys, dtype=np.uint64)
    if bags.term_ids.size and int(bags.term_ids.max()) >= keys.size:
        raise ValueError("a term id has no key")
    counts = bags.counts.astype(np.int64)
    if (counts < 1).any():
        raise ValueError("multiplicities must be positive")
    elements = _element_keys(keys[bags.term_ids], counts)
    bounds = np.concatenate(([0], np.cumsum(counts)))[bags.offsets]
    starts, sizes = bounds[:-1], np.diff(bounds)
    seeds = _function_seeds(seed, m)
    signatures = np.full((len(bags), m), EMPTY, dtype=np.uint32)
    per_chunk = max(1, _CHUNK_VALUES // m)
    out = np.empty(per_chunk * m, dtype=np.uint32)
    scratch = np.empty_like(out)
    order = np.argsort(sizes, kind="stable")
    order = order[sizes[order] > 0]
    first = 0
    while first < order.size and sizes[order[first]] <= per_chunk:
        # Sorted sizes: the chunk's last bag is its widest; shrink until it fits.
        stop = min(order.size, first + per_chunk // int(sizes[order[first]]))
        while stop - first > 1 and (stop - first) * int(sizes[order[stop - 1]]) > per_chunk:
            stop = first + max(1, per_chunk // int(sizes[order[stop - 1]]))
        chunk = order[first:stop]
        width = int(sizes[chunk[-1]])
        index = starts[chunk, None] + np.minimum(np.arange(width), sizes[chunk, None] - 1)
        signatures[chunk] = _min_hash(elements[index], seeds, out, scratch).min(axis=1)
        first = stop
    for bag in order[first:].tolist():  # bags larger than a chunk, a slice at a time
        row = signatures[bag]
        for lo in range(int(starts[bag]), int(starts[bag] + sizes[bag]), per_chunk):
            piece = elements[lo : min(lo + per_chunk, int(starts[bag] + sizes[bag]))]
            np.minimum(row, _min_hash(piece, seeds, out, scratch).min(axis=0), out=row)
    return signatures


@dataclass(frozen=True, slots=True)
class AnchorParams:
    """Everything the pipeline's results depend on, with the paper's values."""

    window: int = WINDOW
    scale: float = DEFAULT_SCALE
    cap: int = DEFAULT_CAP
    m: int = DEFAULT_M
    seed: int = DEFAULT_SEED
    k: int = DEFAULT_K
    l: int = DEFAULT_L  # noqa: E741
    min_agreement: float = DEFAULT_MIN_AGREEMENT
    max_group: int = DEFAULT_MAX_GROUP
    lsh_seed: int = DEFAULT_LSH_SEED


DEFAULT_PARAMS = AnchorParams()


class AnchorClusters(NamedTuple):
    """The pipeline's results; pairs and centres are rows of ``bag_ids``."""

    bag_ids: np.ndarray  # (n,) int64
    signatures: np.ndarray  # (n, m) uint32
    pairs: SimilarPairs
    centres: np.ndarray  # (n,) int64: row of each bag's centre (its own row if none)


def cluster_bags(
    bags: Bags, term_keys: ArrayLike, idf: Idf | None = None, params: AnchorParams = DEFAULT_PARAMS
) -> AnchorClusters:
    """Term-count ``bags`` -> multiplicities (against ``idf``, default the bags' own
    snapshot) -> MH signatures -> similar pairs -> CENTER clusters."""
    snapshot = idf if idf is not None else Idf.of(bags, term_keys)
    weighted = multiplicities(bags, term_keys, snapshot, params.scale, params.cap)
    signatures = minhash_signatures(weighted, term_keys, params.m, params.seed)
    pairs = similar_pairs(signatures, params.k, params.l, params.min_agreement, params.max_group, params.lsh_seed)
    centres = center_clusters(len(bags), pairs.first, pairs.second, pairs.similarity)
    return AnchorClusters(bags.bag_ids, signatures, pairs, centres)


class ChangedSignatures(NamedTuple):
    """MH signatures of the bags that changed, by URL, with what they were made from."""

    urls: list[str]
    signatures: np.ndarray  # (n, m) uint32
    terms: np.ndarray  # (n,) distinct terms per bag
    idf: Idf  # the snapshot the multiplicities used
    refreshed: bool  # True when the snapshot was retaken (every bag is then in ``urls``)


#: Bags signed (or counted for an idf snapshot) at a time by ``UrlBags``: the temporaries
#: of one slice, not of every bag at once (1.3 GB for 22,000 URLs of a link-heavy host,
#: whose bags hold ~500 terms of multiplicity up to 255: ~30,000 elements a bag).
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
