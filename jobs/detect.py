"""``mirror-report detect``: every offline job over a store, in order.

1. ``jobs.duplicates``: near-duplicate page clusters and containment (``--engine spark``:
   ``jobs.spark_detect``, the same results computed on Spark from a Parquet export).
1b. ``jobs.collections``: replicated collections grown bottom-up from step 1's clusters
   by their links; step 3 validates their replicas as mirror candidates too.
2. ``jobs.similar``: anchor bags, similar URL pairs and their CENTER clusters.
3. ``jobs.mirrors``: mirrored hosts, ranked with the anchor-bag pairs of step 2 as a
   vote and validated on the stored sketches.
4. ``jobs.spam``: every host judged again on the stored evidence, the same-host
   duplicates of step 1 among it.
5. ``jobs.topics``: the stored term vectors co-clustered, and the groups of steps 1, 3
   and 4 (duplicate clusters, mirror clusters, spam hosts) labelled with topic terms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mirrorscope.jobs.collections import collection_candidates, detect_collections
from mirrorscope.jobs.duplicates import DEFAULT_THRESHOLD, detect_duplicates
from mirrorscope.jobs.mirrors import detect_mirrors
from mirrorscope.jobs.similar import recompute_anchor_bags
from mirrorscope.jobs.spam import rejudge_spam
from mirrorscope.jobs.topics import detect_topics
from mirrorscope.storage.store import Store

__all__ = ["detect"]


def detect(
    store: Store,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Callable[[str], None] | None = None,
    duplicates_job: Callable[..., dict[str, Any]] = detect_duplicates,
) -> dict[str, dict[str, Any]]:
    """Run the jobs on ``store`` in order; their summaries by job name. ``duplicates_job``
    is step 1's engine: the numpy path, or ``jobs.spark_detect.spark_job``'s."""
    say = progress or (lambda _: None)
    say("clustering near-duplicate pages")
    duplicates = duplicates_job(store, threshold, progress=say)
    say("growing replicated collections from the near-duplicate clusters (bottom-up)")
    collections = detect_collections(store)
    say("anchor bags: signatures, similar URL pairs, CENTER clusters")
    similar = recompute_anchor_bags(store, progress=say)
    say("ranking and validating mirror candidates on stored sketches")
    mirrors = detect_mirrors(store, collections=collection_candidates(store.replicated_collections()))
    say("judging hosts for spam on the stored evidence")
    spam = rejudge_spam(store)
    say("co-clustering the term vectors; topic terms of the clusters and spam hosts")
    topics = detect_topics(store)
    return {
        "duplicates": duplicates, "collections": collections, "similar": similar, "mirrors": mirrors, "spam": spam,
        "topics": topics,
    }
