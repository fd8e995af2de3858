"""tf-idf weights of anchor bags as integer multiplicities, against an idf snapshot.

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000):
term t of bag u weighs tf-idf, w = tf(t, u) * log(N / df(t)), with N the bags holding at
least one term and df(t) those holding t. Min-hashing needs a set, so weights become
integer multiplicities

    mult(t, u) = clip(round(scale * w), 1, cap),   scale = 0.5, cap = 255,

and term t with multiplicity k becomes the elements (t, 1) ... (t, k)
(``detectors.weighted_minhash``): the plain Jaccard similarity of two expanded sets is
then the weighted Jaccard sum_t min(mult_u, mult_v) / sum_t max(mult_u, mult_v) of the
quantised weights. Anchor terms have idf between ~1 (in a third of all bags) and log N
(13.8 for a million bags): at scale 0.5 an informative term gets 3 to 7 copies and a
typical bag of tens of terms 50 to 200 elements, fine enough that quantisation moves
similarities far less than the signature's own error (0.056 at 0.5), coarse enough to
sign a million bags fast (``benchmarks/anchors.py``). The floor keeps terms found in
every bag (idf 0) once; the cap bounds what one term repeated over thousands of links (a
popular page's "home") can weigh, and with it the work on a giant bag.

**Idf snapshots.** idf depends on every bag, so adding a link would change other bags'
weights. Weights are computed against an ``Idf`` snapshot (N and the document
frequencies, by term key, at some moment); incremental updates with the same snapshot
give exactly the signatures of a full recompute. Refresh the snapshot, and recompute
everything, when the collection has grown by a fair factor (say doubled): amortised,
each bag is recomputed O(1) times per doubling (``detectors.url_bags``). Terms absent
from the snapshot count as in one bag.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.anchor_bags import Bags

__all__ = ["DEFAULT_CAP", "DEFAULT_SCALE", "Idf", "multiplicities"]

#: Multiplicity per unit of tf-idf weight.
DEFAULT_SCALE = 0.5
#: Largest multiplicity of one term in one bag.
DEFAULT_CAP = 255


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
