"""Scoring a crawl's report against a sandbox world's ground truth (`World.ground_truth`).

The report is ``mirror-report``'s JSON document (`mirrorscope.report.document`); the truth
is what ``truth.json`` holds. Hosts are compared by name, without the port the world was
served on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mirrorscope.detectors.host_keys import strip_port

from .truth import is_copied

#: At most this many missed URLs of original content are listed (the demo prints each).
MISSING_SHOWN = 20


def _name(host: str) -> str:
    """``host`` (a host name, with or without its port) without the port."""
    return strip_port(host)


def _names(hosts: Iterable[str]) -> set[str]:
    return {_name(h) for h in hosts}


def _host_name(url: str) -> str:
    return _name(url.split("/", 3)[2])


def score_spam(flagged: list[dict[str, Any]], traps: list[dict[str, Any]], truth: dict[str, Any]) -> dict[str, Any]:
    """Spam-host precision and recall against a sandbox's ground truth, and the traps reported."""
    true, good = _names(truth["spam_hosts"]), _names(truth["good_hosts"])
    reported = _names(v["host"] for v in flagged)
    return {
        "spam_hosts": len(true), "found": len(reported & true), "good_flagged": len(reported & good),
        "precision": round(len(reported & true) / len(reported), 3) if reported else 0.0,
        "recall": round(len(reported & true) / len(true), 3) if true else 1.0,
        "traps": sorted(_names(t["host"] for t in traps)),
    }


def score_mirrors(found: list[dict[str, Any]], truth: dict[str, Any]) -> dict[str, Any]:
    """Host-pair precision and recall of reported mirrors against a sandbox's ground truth."""
    def hosts(entry: dict[str, Any]) -> frozenset[str]:
        return frozenset(_host_name(url) for url in (entry["a"], entry["b"]))

    true = {hosts(m): {m["a"], m["b"]} for m in truth["mirrors"]}
    true_level = {hosts(m): m["level"] for m in truth["mirrors"]}
    decoys = {frozenset(pair) for pair in truth["decoys"]}
    reported = {hosts(m): {m["a"], m["b"]} for m in found if m["level"] != "none"}
    level = {hosts(m): m["level"] for m in found if m["level"] != "none"}
    hits = set(reported) & set(true)
    return {
        "true_pairs": len(true), "reported": len(reported), "found": len(hits),
        "prefix_right": sum(reported[h] == true[h] for h in hits), "level_right": sum(level[h] == true_level[h] for h in hits),
        "false_pairs": len(set(reported) - set(true)),
        "decoys_reported": len(set(reported) & decoys),
        "precision": round(len(hits) / len(reported), 3) if reported else None,
        "recall": round(len(hits) / len(true), 3) if true else None,
    }


def score_pages(stored: set[str], truth: dict[str, Any]) -> dict[str, Any]:
    """How many of the world's reachable pages a crawl stored: originals, and mirrored copies fetched."""
    spam = _names(truth.get("spam_hosts", ()))
    # Content: the pages with a document (not errors, which a duplicate's unfollowed links
    # may hide), off the spam hosts (spam costs fetches, it is not content to keep).
    expected = {
        url for url in truth["pages"]
        if truth["outcomes"].get(url) == "ok" and _host_name(url) not in spam
    }
    copied = {url for url in expected if is_copied(url, truth["hosts"])}
    return {
        "reachable_pages": len(expected),
        "reachable_pages_stored": len(expected & stored),
        "mirrored_pages": len(copied),
        "mirrored_pages_fetched": len(copied & stored),
        "original_pages": len(expected - copied),
        "original_pages_stored": len((expected - copied) & stored),
        "missing": sorted((expected - copied) - stored)[:MISSING_SHOWN],
    }


def score_report(report: dict[str, Any], stored: set[str], truth: dict[str, Any]) -> dict[str, Any]:
    """The pages stored, the mirrors and (in a world with spam) the spam hosts of ``report``, scored."""
    scored = score_pages(stored, truth) | {"mirrors": score_mirrors(report["mirrors"], truth)}
    if truth.get("spam_hosts"):
        scored["spam"] = score_spam(report["spam_hosts"], report["traps"], truth)
    return scored
