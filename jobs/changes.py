"""Page change over re-crawls, read back from the store (``detectors.page_change``):
per-host change rates, the pages that changed, went or moved, the stale mirrors' lag,
and the rapid-complete-change feature the host spam verdicts weigh (``jobs.spam``).

The rates pool every re-crawl the store holds: a host's pages classified in each, the
share that changed, went or moved, and the share of the pages still there that changed
completely (Fetterly et al. 2004 measured change over eleven weekly crawls).

A mirror pair (``mirror_pairs``, roots with their path prefixes) lags when a page of one
side changed in one re-crawl and its counterpart (the same path under the other root)
only in a later one: ``lag_crawls`` is how many re-crawls later, ``lag_days`` how much
later the counterpart's version is dated (its ``Last-Modified``; the fetch times when a
server sends none). A counterpart re-crawled since without changing is still behind.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

import numpy as np

from mirrorscope.detectors.page_change import DEFAULT_CHANGE, KINDS, ChangeParams, Changes, follow_lags, host_rates, rapid_change
from mirrorscope.storage.rows import PageChangeRow

_DAY = 86400.0


def _rates(rows: list[PageChangeRow], params: ChangeParams) -> tuple[list[str], Any]:
    hosts = sorted({r["host"] for r in rows})
    code = {h: i for i, h in enumerate(hosts)}
    changes = Changes(
        np.array([KINDS.index(r["kind"]) for r in rows], dtype=np.int8),
        np.array([np.nan if r["resemblance"] is None else r["resemblance"] for r in rows], dtype=np.float64),
        np.full(len(rows), -1, dtype=np.int64),
    )
    return hosts, host_rates(np.array([code[r["host"]] for r in rows], dtype=np.int64), changes, len(hosts), params)


def host_changes(rows: list[PageChangeRow], params: ChangeParams = DEFAULT_CHANGE) -> list[dict[str, Any]]:
    """Per host, pooled over the re-crawls: pages classified, each kind's count, the change
    rate, complete changes and their share, and whether rapid complete change fires;
    highest change rate first."""
    if not rows:
        return []
    hosts, rates = _rates(rows, params)
    rapid = rapid_change(rates, params)
    out = []
    for i, host in enumerate(hosts):
        counts = dict(zip(KINDS, rates.counts[i].tolist()))
        share = rates.complete_share[i]
        out.append({
            "host": host, "pages": int(rates.counts[i].sum()), **counts,
            "change_rate": round(float(rates.change_rate[i]), 4),
            "complete_changes": int(rates.complete[i]),
            "complete_share": None if np.isnan(share) else round(float(share), 4),
            "rapid_change": bool(rapid[i]),
        })
    out.sort(key=lambda h: (-h["change_rate"], h["host"]))
    return out


def rapid_change_shares(store: Any, params: ChangeParams = DEFAULT_CHANGE) -> dict[str, float]:
    """Host -> share of its re-fetched pages that changed completely, for the hosts with
    at least ``rapid_min_pages`` compared (the spam feature's evidence)."""
    rows = store.page_changes()
    if not rows:
        return {}
    hosts, rates = _rates(rows, params)
    return {
        host: round(float(rates.complete_share[i]), 4)
        for i, host in enumerate(hosts) if rates.compared[i] >= params.rapid_min_pages
    }


def _seconds(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _follows(changed: dict[str, list[PageChangeRow]], ordinal: dict[int, int], url: str, other: str, row: PageChangeRow) -> bool:
    """Whether ``url``'s change ``row`` comes after a change of ``other`` that ``url`` had
    not matched by a change of its own since."""
    at = ordinal[row["crawl_run_id"]]
    before = [ordinal[r["crawl_run_id"]] for r in changed.get(other, ()) if ordinal[r["crawl_run_id"]] < at]
    if not before:
        return False
    own = [ordinal[r["crawl_run_id"]] for r in changed.get(url, ()) if ordinal[r["crawl_run_id"]] < at]
    return not own or max(own) < max(before)


def mirror_lags(rows: list[PageChangeRow], pairs: list[dict[str, Any]], ordinal: dict[int, int]) -> list[dict[str, Any]]:
    """For each mirror pair and direction where one side followed the other's changes
    late: the changes seen, in step, caught up later, still behind, and the median lag
    in re-crawls and days (module docstring)."""
    changed: dict[str, list[PageChangeRow]] = {}
    last_seen: dict[str, int] = {}
    for r in rows:
        last_seen[r["url"]] = max(last_seen.get(r["url"], 0), ordinal[r["crawl_run_id"]])
        if r["kind"] == "changed":
            changed.setdefault(r["url"], []).append(r)
    out = []
    for pair in pairs:
        for first, second in ((pair["url_a"], pair["url_b"]), (pair["url_b"], pair["url_a"])):
            events = [(url[len(first):], r) for url, found in changed.items() if url.startswith(first) for r in found]
            # Only pages whose counterpart a re-crawl saw after the change say anything, and
            # a change that follows the counterpart's earlier one is a catching up, not a lead.
            events = [
                (rest, r) for rest, r in events
                if last_seen.get(second + rest, 0) >= ordinal[r["crawl_run_id"]] and not _follows(changed, ordinal, first + rest, second + rest, r)
            ]
            if not events:
                continue
            keys = {rest: k for k, rest in enumerate(sorted({rest for rest, _ in events}))}
            follow = [(keys[rest], r) for rest in keys for r in changed.get(second + rest, ())]
            found = follow_lags(
                np.array([keys[rest] for rest, _ in events]), np.array([ordinal[r["crawl_run_id"]] for _, r in events]),
                np.array([k for k, _ in follow]), np.array([ordinal[r["crawl_run_id"]] for _, r in follow]),
            )
            lags, days, behind = [], [], []
            for (rest, r), j in zip(events, found.tolist()):
                start = ordinal[r["crawl_run_id"]]
                if j < 0:
                    behind.append(last_seen[second + rest] - start + 1)
                    continue
                later = follow[j][1]
                lag = ordinal[later["crawl_run_id"]] - start
                if lag == 0:
                    continue
                lags.append(lag)
                t0 = _seconds(r["last_modified"]) if later["last_modified"] and r["last_modified"] else _seconds(r["fetched_at"])
                t1 = _seconds(later["last_modified"]) if later["last_modified"] and r["last_modified"] else _seconds(later["fetched_at"])
                days.append(((t1 or 0.0) - (t0 or 0.0)) / _DAY)
            if not lags and not behind:
                continue
            out.append({
                "original": first, "mirror": second, "changes": len(events),
                "in_step": len(events) - len(lags) - len(behind), "caught_up": len(lags), "behind": len(behind),
                "lag_crawls": statistics.median(lags) if lags else None,
                "lag_days": round(statistics.median(days), 3) if days else None,
                "behind_crawls": max(behind) if behind else None,
            })
    return out


def change_report(store: Any, params: ChangeParams = DEFAULT_CHANGE) -> dict[str, Any]:
    """What ``mirror-report changes`` shows: the re-crawl runs, per-host rates, the pages
    that changed, went or moved, and the stale mirrors' lags."""
    runs = store.change_runs()
    ordinal = {run_id: k + 1 for k, (run_id, _) in enumerate(runs)}
    rows = store.page_changes()
    pages = [
        {"run": r["crawl_run_id"], "url": r["url"], "kind": r["kind"], "resemblance": r["resemblance"], "moved_to": r["moved_to"]}
        for r in rows if r["kind"] != "unchanged"
    ]
    counts = {run_id: dict.fromkeys(KINDS, 0) for run_id in ordinal}
    for r in rows:
        counts[r["crawl_run_id"]][r["kind"]] += 1
    return {
        "runs": [{"id": run_id, "started_at": started.isoformat(), **counts[run_id]} for run_id, started in runs],
        "hosts": host_changes(rows, params),
        "pages": pages,
        "mirror_lags": mirror_lags(rows, store.mirror_pairs(), ordinal),
    }
