"""Similar URLs by how others link to them (``mirror-report similar URL``).

Anchor-based bags (Haveliwala, Gionis, Indyk 2000; ``detectors.anchors``) built from the
store: every stored link's anchor text and word windows, plus each fetched page's title.
A URL need not have been fetched to have a bag. The bags are recomputed from the store on
each call (an offline pass); keeping them up to date during the crawl is not built yet.
"""

from __future__ import annotations

from typing import Any

from detectors.anchor_lsh import similar_to
from detectors.anchors import DEFAULT_PARAMS, BagBuilder, Idf, minhash_signatures, multiplicities
from storage.store import Store


def similar_urls(store: Store, url: str, limit: int = 10) -> list[dict[str, Any]] | None:
    """The ``limit`` URLs whose anchor bags are most like ``url``'s, best first; None when
    the store has no bag for ``url`` (no link to it and no title)."""
    ids: dict[str, int] = {}
    builder = BagBuilder(DEFAULT_PARAMS.window)
    for link in store.links():
        builder.add_fragment(ids.setdefault(link["target_url"], len(ids)), link["anchor"], link["before"], link["after"])
    for page in store.pages():
        if page["title"]:
            builder.add_title(ids.setdefault(page["url"], len(ids)), page["title"])
    if url not in ids:
        return None
    bags = builder.bags()
    keys = builder.vocabulary.keys
    weighted = multiplicities(bags, keys, Idf.of(bags, keys), DEFAULT_PARAMS.scale, DEFAULT_PARAMS.cap)
    signatures = minhash_signatures(weighted, keys, DEFAULT_PARAMS.m, DEFAULT_PARAMS.seed)
    urls = {bag_id: u for u, bag_id in ids.items()}
    row_of = {int(b): r for r, b in enumerate(bags.bag_ids.tolist())}
    target = row_of.get(ids[url])
    if target is None:
        return None
    rows, similarity = similar_to(signatures[target], signatures, DEFAULT_PARAMS.min_agreement)
    found = [(int(r), float(s)) for r, s in zip(rows, similarity) if int(r) != target]
    return [{"url": urls[int(bags.bag_ids[r])], "similarity": round(s, 4)} for r, s in found[:limit]]
