"""Anchor-based clustering of URLs: the pipeline and the parameters its results depend on.

Haveliwala, Gionis and Indyk, "Scalable techniques for clustering the Web" (WebDB 2000)
cluster URLs by what the pages linking to them say, in five steps, each a module here:

1. **Bags** (``detectors.anchor_bags``): a URL's bag holds the anchor text and the
   8 words either side of every link to it, and its title's words.
2. **Weights** (``detectors.tfidf``): tf-idf against an idf snapshot, as integer
   multiplicities clip(round(0.5 w), 1, 255).
3. **MH signatures** (``detectors.weighted_minhash``): m = 80 weighted min-hash values.
4. **Pairs** (``detectors.anchor_lsh``): LSH signatures of k = 3 MH values in l = 125
   tables, ExtractSimilarPairs by sorting, the 20% agreement filter.
5. **Clusters** (``detectors.center``): CENTER over the pairs by descending similarity.

``cluster_bags`` runs them over a whole collection; ``detectors.url_bags.UrlBags`` keeps
the signatures up to date link by link during a crawl. Signatures are comparable only
when made with equal ``AnchorParams`` (window, scale, cap, m, seed) and the same ``Idf``
snapshot: store both beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.anchor_bags import WINDOW, Bags
from mirrorscope.detectors.anchor_lsh import (
    DEFAULT_K,
    DEFAULT_L,
    DEFAULT_LSH_SEED,
    DEFAULT_MAX_GROUP,
    DEFAULT_MIN_AGREEMENT,
    SimilarPairs,
    similar_pairs,
)
from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.tfidf import DEFAULT_CAP, DEFAULT_SCALE, Idf, multiplicities
from mirrorscope.detectors.weighted_minhash import DEFAULT_M, DEFAULT_SEED, minhash_signatures

__all__ = ["DEFAULT_PARAMS", "AnchorClusters", "AnchorParams", "cluster_bags"]


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
