"""Similar URLs by how others link to them: the offline pass over anchor bags and
``mirror-report similar URL``.

Anchor-based bags (Haveliwala, Gionis, Indyk, "Scalable techniques for clustering the
Web", WebDB 2000; ``detectors.anchors``) built from the store: every stored link's
anchor text and word windows, plus each fetched page's title. A URL need not have been
fetched to have a bag.

* ``recompute_anchor_bags`` (``mirror-report detect``, ``mirror-report similar
  --recompute``): the full recompute. Bags of every URL, one idf snapshot over all of
  them, m = 80 MH values each, ExtractSimilarPairs by sorting (k = 3, l = 125, pairs
  agreeing on >= 20%; ``detectors.anchor_lsh``), CENTER clusters over the pairs by
  descending similarity (``detectors.center``); signatures, pairs and clusters replace
  what the store held.
* During a crawl ``crawler.anchor_bags.AnchorBagPipeline`` keeps the stored signatures
  of the bags new links touch up to date (against a snapshot retaken as the crawl
  doubles), without pairs or clusters, in a worker process (``crawler.anchor_worker``)
  that builds its bags with ``bags_from_store`` and ``signature_rows``.
* ``similar_urls`` scans the stored signatures made with the current parameters when
  the URL has one, and otherwise recomputes every bag from the store (nothing stored).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mirrorscope.detectors.anchor_lsh import similar_pairs, similar_to
from mirrorscope.detectors.anchors import DEFAULT_PARAMS, AnchorParams
from mirrorscope.detectors.url_bags import ChangedSignatures, UrlBags
from mirrorscope.detectors.center import center_clusters
from mirrorscope.storage.store import Store


def bags_from_store(store: Store, params: AnchorParams = DEFAULT_PARAMS, up_to: tuple[int, int] | None = None) -> UrlBags:
    """Every stored link and title fed once into URL-keyed bags, the links a batch at a
    time; with ``up_to`` (``Store.anchor_high_water``) only links and pages stored by then."""
    bags = UrlBags(params)
    last_link, last_page = up_to if up_to is not None else (None, None)
    for batch in store.link_fragment_batches(up_to_id=last_link):
        targets, anchors, befores, afters = zip(*batch)
        bags.add_links(targets, anchors, befores, afters)
    for url, title in store.page_titles(last_page):
        bags.add_title(url, title)
    return bags


def signature_rows(changed: ChangedSignatures, params: AnchorParams = DEFAULT_PARAMS) -> list[dict[str, Any]]:
    """Store rows (``anchor_signatures`` columns) of freshly computed signatures."""
    data = changed.signatures.astype("<u4", copy=False)
    return [
        {
            "url": url, "m": params.m, "seed": params.seed, "window": params.window, "scale": params.scale,
            "cap": params.cap, "idf_bags": changed.idf.n_bags, "terms": int(terms), "data": row.tobytes(),
        }
        for url, terms, row in zip(changed.urls, changed.terms.tolist(), data)
    ]


def recompute_anchor_bags(
    store: Store, params: AnchorParams = DEFAULT_PARAMS, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The full offline recompute (see the module docstring); returns counts."""
    say = progress or (lambda _: None)
    bags = bags_from_store(store, params)
    say(f"{len(bags)} anchor bags built")
    changed = bags.changed_signatures()
    store.write_anchor_signatures(signature_rows(changed, params), replace_all=True)
    say(f"{len(changed.urls)} anchor signatures stored")
    pairs = similar_pairs(changed.signatures, params.k, params.l, params.min_agreement, params.max_group, params.lsh_seed)
    centres = center_clusters(len(changed.urls), pairs.first, pairs.second, pairs.similarity)
    urls = changed.urls
    pair_rows = []
    for i, j, s in zip(pairs.first.tolist(), pairs.second.tolist(), pairs.similarity.tolist()):
        a, b = sorted((urls[i], urls[j]))
        pair_rows.append((a, b, round(s, 4)))
    members = np.flatnonzero(centres != np.arange(centres.size))
    heads = np.unique(centres[members])
    sizes = np.bincount(np.searchsorted(heads, centres[members]), minlength=heads.size) + 1
    # Clusters numbered largest first, then by their centre's URL.
    order = sorted(range(heads.size), key=lambda h: (-int(sizes[h]), urls[int(heads[h])]))
    number = {int(heads[h]): n for n, h in enumerate(order, 1)}
    cluster_rows = [(urls[c], number[c], True) for c in number]
    cluster_rows += [(urls[m], number[int(centres[m])], False) for m in members.tolist()]
    store.replace_anchor_clusters(pair_rows, cluster_rows)
    return {"bags": len(urls), "pairs": len(pair_rows), "clusters": len(number), "urls_in_clusters": len(cluster_rows)}


def stored_signatures(store: Store, params: AnchorParams = DEFAULT_PARAMS) -> tuple[list[str], np.ndarray]:
    """URLs and (n, m) uint32 signatures stored with ``params``."""
    urls, blobs = store.anchor_signature_blobs(params.m, params.seed, params.window, params.scale, params.cap)
    signatures = np.frombuffer(b"".join(blobs), dtype="<u4").astype(np.uint32).reshape(len(urls), params.m)
    return urls, signatures


def similar_urls(store: Store, url: str, limit: int = 10, params: AnchorParams = DEFAULT_PARAMS) -> list[dict[str, Any]] | None:
    """The ``limit`` URLs whose anchor bags are most like ``url``'s, best first; None when
    the store has no bag for ``url`` (no link to it and no title)."""
    stored = store.anchor_signature(url)
    if stored is not None and (stored["m"], stored["seed"], stored["window"], stored["scale"], stored["cap"]) == (
        params.m, params.seed, params.window, params.scale, params.cap
    ):
        urls, signatures = stored_signatures(store, params)
        target = urls.index(url)
    else:
        changed = bags_from_store(store, params).changed_signatures()
        if url not in changed.urls:
            return None
        urls, signatures = changed.urls, changed.signatures
        target = urls.index(url)
    rows, similarity = similar_to(signatures[target], signatures, params.min_agreement)
    found = [(r, s) for r, s in zip(rows.tolist(), similarity.tolist()) if r != target]
    return [{"url": urls[r], "similarity": round(s, 4)} for r, s in found[:limit]]
