"""The JSON contract of ``mirror-report``: the documents its JSON output is.

Every command that writes JSON builds its document here, and the table and CSV views
render the same documents, so a key means one thing in every format. ``report.schema.json``
(draft 2020-12) describes each document exactly; the contract only ever gains keys.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from mirrorscope.jobs.collections import replica_root
from mirrorscope.report.topics import topics_report
from mirrorscope.storage.store import Store

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def report_schema() -> dict[str, Any]:
    """The JSON Schema of the documents below (``$defs`` names the smaller ones)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def build_report(store: Store) -> dict[str, Any]:
    """What the store holds: the crawl, its hosts, mirrors, duplicates, spam hosts and traps."""
    report = crawl_report(store.summary(), store.hosts(), store.runs())
    report |= {
        "mirrors": [mirror_entry(p) for p in store.mirror_pairs()],
        "mirror_clusters": [[m["url"] for m in cluster] for cluster in store.mirror_clusters()],
        "duplicate_clusters": store.duplicate_clusters("broder"),
        "containment": store.containment_pairs(),
        "spam_hosts": [verdict_entry(v) for v in store.host_verdicts("spam", flagged_only=True)],
        "traps": [verdict_entry(v) for v in store.host_verdicts("trap", flagged_only=True)],
    }
    report["collections"] = [collection_entry(c) for c in store.replicated_collections()]
    report |= topics_report(store, report["mirror_clusters"])
    return report


def _duration(run: dict[str, Any]) -> float | None:
    start, end = run.get("started_at"), run.get("finished_at")
    if isinstance(start, datetime) and isinstance(end, datetime):
        return (end - start).total_seconds()
    return None


def crawl_report(summary: dict[str, Any], hosts: list[dict[str, Any]], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``crawl`` and ``hosts`` keys of the report: counts, the last run, hosts with their pages."""
    last = runs[-1] if runs else {}
    return {
        "crawl": {
            "runs": len(runs),
            "last_run": {
                "id": last.get("id"),
                "status": last.get("status"),
                "started_at": last["started_at"].isoformat() if last.get("started_at") else None,
                "finished_at": last["finished_at"].isoformat() if last.get("finished_at") else None,
                "seconds": _duration(last),
                "seeds": last.get("seeds", []),
            },
            "hosts": summary["hosts"],
            "pages": summary["pages"],
            "links": summary["links"],
            "bytes": summary["bytes"],
            "outcomes": summary["outcomes"],
        },
        "hosts": [
            {"host": h["name"], "ip": h["ip"], "registrable_domain": h["registrable_domain"], "pages": h["pages"]}
            for h in hosts
        ],
    }


def verdict_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One spam or trap verdict of the store as the report has it."""
    return {"host": row["host"], "score": row["score"], "pages": row["pages"], "reasons": row["reasons"], "features": row["features"]}


def mirror_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One mirror pair of the store as the report has it."""
    return {
        "a": row["url_a"], "b": row["url_b"], "level": row["level"], "score": row["score"],
        "paths_checked": row["paths_checked"], "paths_matched": row["paths_matched"],
        "fractions": {"a_on_b": row["fraction_ab"], "b_on_a": row["fraction_ba"]},
        "inferred": row["inferred"], "features": row["features"], "reasons": row["reasons"],
    }


def collection_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One stored cluster of replicated collections (bottom-up) with each replica's root."""
    return {"cardinality": row["cardinality"], "size": row["size"], "roots": [replica_root(r) for r in row["replicas"]], "replicas": row["replicas"]}


def duplicates_report(store: Store, method: str) -> dict[str, Any]:
    """``mirror-report duplicates``: one method's near-duplicate clusters and the containment pairs."""
    return {"method": method, "duplicate_clusters": store.duplicate_clusters(method), "containment": store.containment_pairs()}


def similar_report(url: str, similar: list[dict[str, Any]]) -> dict[str, Any]:
    """``mirror-report similar``: the URLs linked to like ``url``, most alike first."""
    return {"url": url, "similar": similar}


def changes_report(store: Store) -> dict[str, Any]:
    """``mirror-report changes``: page change over the re-crawls (``jobs.changes``)."""
    from mirrorscope.jobs.changes import change_report

    return change_report(store)
