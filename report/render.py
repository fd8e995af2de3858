"""Formatting the report's documents (``document.py``): terminal tables, JSON and CSV.

Every crawled string (host names, URLs, titles) is escaped on the way out: control
characters are shown as ``\\xNN`` so a page cannot drive the user's terminal, rich markup
is never interpreted, and CSV cells that a spreadsheet would run as formulas are quoted.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

#: Columns of a table written to a file (``--output``): a terminal's classic width.
TABLE_WIDTH = 80
#: The mirror table's features fold within this many columns, so that at 80 columns the
#: pair column keeps about 28 characters of each root.
FEATURES_MAX_WIDTH = 20

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_text(value: Any) -> str:
    """``value`` as text with control and bidi-override characters made visible."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", str(value))


def safe_cell(value: Any) -> str:
    """A CSV cell that no spreadsheet will evaluate."""
    text = safe_text(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def add_name_column(table: Table, header: str) -> None:
    """A column of host names or URLs: one line each, cut with an ellipsis when too long,
    never broken mid-name."""
    # Not no_wrap: rich only narrows wrappable columns. A name holds no space to wrap at,
    # so a long one is cut with the ellipsis.
    table.add_column(header, overflow="ellipsis", min_width=len(header))


def add_value_column(table: Table, header: str, widest: str = "") -> None:
    """A column of short values (a level, a score, a count), never squeezed below its
    header or ``widest``."""
    table.add_column(header, justify="left" if widest.isalpha() else "right", no_wrap=True, min_width=max(len(header), len(widest)))


def add_text_column(table: Table, header: str, max_width: int | None = None) -> None:
    """A column of prose (reasons, features): folded between words; a word longer than
    the column is cut with an ellipsis."""
    table.add_column(header, overflow="ellipsis", min_width=len(header), max_width=max_width)


def render_json(report: dict[str, Any]) -> str:
    # ensure_ascii escapes every control character but DEL, which is ASCII; in JSON text it
    # can only stand inside a string, where its escape means the same.
    return json.dumps(report, indent=2, sort_keys=False, ensure_ascii=True).replace("\x7f", "\\u007f") + "\n"


def render_csv(report: dict[str, Any]) -> str:
    """One row per mirror pair, with its evidence: the table a spreadsheet user wants."""
    out = io.StringIO()
    writer = csv.writer(out)
    features = sorted({name for m in report.get("mirrors", []) for name in m["features"]})
    writer.writerow(["a", "b", "level", "score", "paths_checked", "paths_matched", "inferred", *map(safe_cell, features)])
    for m in report.get("mirrors", []):
        writer.writerow([
            safe_cell(m["a"]), safe_cell(m["b"]), safe_cell(m["level"]), m["score"], m["paths_checked"], m["paths_matched"],
            m["inferred"], *(m["features"].get(name, 0.0) for name in features),
        ])
    return out.getvalue()


def render_table(report: dict[str, Any], console: Console) -> None:
    crawl = report["crawl"]
    last = crawl["last_run"]
    seconds = f"{last['seconds']:.1f} s" if last["seconds"] is not None else "-"
    console.print(
        Text(
            f"{crawl['hosts']} hosts, {crawl['pages']} pages, {crawl['links']} links, "
            f"{crawl['bytes']:,} bytes; last run {safe_text(last['status'])} in {seconds}"
        )
    )
    outcomes = Table(title="Pages by outcome", title_justify="left")
    outcomes.add_column("outcome")
    outcomes.add_column("pages", justify="right")
    for name, count in sorted(crawl["outcomes"].items(), key=lambda kv: (-kv[1], kv[0])):
        outcomes.add_row(Text(safe_text(name)), str(count))
    console.print(outcomes)
    hosts = Table(title="Hosts", title_justify="left")
    for column in ("host", "ip", "registrable domain"):
        add_name_column(hosts, column)
    add_value_column(hosts, "pages")
    for h in report["hosts"]:
        hosts.add_row(Text(safe_text(h["host"])), Text(safe_text(h["ip"] or "-")), Text(safe_text(h["registrable_domain"] or "-")), str(h["pages"]))
    console.print(hosts)
    if report.get("mirrors"):
        render_mirrors_table(report, console)
    if report.get("collections"):
        render_collections_table(report, console)
    if report.get("duplicate_clusters") or report.get("containment"):
        render_duplicates_table({"method": "broder", **report}, console, limit=10)
    if report.get("spam_hosts") or report.get("traps"):
        render_spam_table(report, console)
    if report.get("coclustering") or report.get("topics"):
        from mirrorscope.report.topics import render_topics_table  # it builds on this module's helpers

        render_topics_table(report, console)


def render_spam_table(report: dict[str, Any], console: Console) -> None:
    """Spam hosts with their scores and reasons, then the crawler traps."""
    for key, title in (("spam_hosts", "Spam hosts"), ("traps", "Crawler traps (not spam)")):
        rows = report.get(key) or []
        table = Table(title=f"{title}: {len(rows)}", title_justify="left")
        add_name_column(table, "host")
        add_value_column(table, "score")
        add_value_column(table, "pages")
        add_text_column(table, "reasons")
        for row in rows:
            table.add_row(Text(safe_text(row["host"])), f"{row['score']:.2f}", str(row["pages"]),
                          Text("; ".join(safe_text(r) for r in row["reasons"])))
        console.print(table)


def render_duplicates_table(report: dict[str, Any], console: Console, limit: int) -> None:
    clusters = report["duplicate_clusters"]
    table = Table(title=f"Near-duplicate clusters ({safe_text(report['method'])}): {len(clusters)}", title_justify="left")
    add_value_column(table, "size")
    add_value_column(table, "kind", "identical")
    add_name_column(table, "representative")
    add_text_column(table, "other members")
    for cluster in clusters[:limit]:
        others = cluster["members"][1:]
        shown = ", ".join(safe_text(u) for u in others[:3]) + (f" (+{len(others) - 3} more)" if len(others) > 3 else "")
        table.add_row(str(cluster["size"]), "identical" if cluster["identical"] else "near", Text(safe_text(cluster["representative"])), Text(shown))
    console.print(table)
    pairs = report["containment"]
    contained = Table(title=f"Pages mostly inside another: {len(pairs)}", title_justify="left")
    add_name_column(contained, "page")
    add_name_column(contained, "inside")
    add_value_column(contained, "containment")
    for pair in pairs[:limit]:
        contained.add_row(Text(safe_text(pair["page"])), Text(safe_text(pair["container"])), f"{pair['containment']:.2f}")
    console.print(contained)


def render_duplicates_csv(report: dict[str, Any]) -> str:
    """One row per cluster member: cluster number, kind, representative, member."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["cluster", "size", "kind", "representative", "member"])
    for number, cluster in enumerate(report["duplicate_clusters"], 1):
        kind = "identical" if cluster["identical"] else "near"
        for member in cluster["members"]:
            writer.writerow([number, cluster["size"], kind, safe_cell(cluster["representative"]), safe_cell(member)])
    return out.getvalue()


def render_mirrors_table(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"Mirrored hosts: {len(report['mirrors'])} pairs", title_justify="left")
    add_name_column(table, "a / b")
    add_value_column(table, "level", "partial")
    add_value_column(table, "score")
    add_value_column(table, "matched", "inferred")
    add_text_column(table, "features", max_width=FEATURES_MAX_WIDTH)
    for m in report["mirrors"]:
        fired = ", ".join(f"{safe_text(k)} {v:.2f}" for k, v in sorted(m["features"].items(), key=lambda kv: -kv[1]) if v > 0)
        checked = "inferred" if m["inferred"] else f"{m['paths_matched']}/{m['paths_checked']}"
        table.add_row(Text(f"{safe_text(m['a'])}\n{safe_text(m['b'])}"), safe_text(m["level"]), f"{m['score']:.2f}", checked, Text(fired))
    console.print(table)
    clusters = Table(title="Mirror clusters", title_justify="left")
    add_value_column(clusters, "cluster")
    add_name_column(clusters, "roots, the canonical first")
    for number, cluster in enumerate(report.get("mirror_clusters", []), 1):
        clusters.add_row(str(number), Text("\n".join(safe_text(u) for u in cluster)))
    console.print(clusters)


def render_collections_table(report: dict[str, Any], console: Console) -> None:
    """The replicated collections found bottom-up: each replica's root, pages per replica."""
    table = Table(title=f"Replicated collections (bottom-up): {len(report['collections'])}", title_justify="left")
    add_value_column(table, "collection")
    add_value_column(table, "pages each")
    add_name_column(table, "replica roots")
    for number, collection in enumerate(report["collections"], 1):
        table.add_row(str(number), str(collection["size"]), Text("\n".join(safe_text(u) for u in collection["roots"])))
    console.print(table)


def render_similar_table(report: dict[str, Any], console: Console) -> None:
    """The URLs linked to like ``report["url"]``, with their similarity."""
    table = Table(title=Text(f"URLs linked to like {safe_text(report['url'])}"), title_justify="left")
    add_value_column(table, "similarity")
    add_name_column(table, "url")
    for row in report["similar"]:
        table.add_row(f"{row['similarity']:.2f}", Text(safe_text(row["url"])))
    console.print(table)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render_changes_table(report: dict[str, Any], console: Console, limit: int = 50) -> None:
    """Page change over re-crawls: per-host rates, the pages that changed, went or moved
    (``limit`` shown), and the mirrors that follow their original late."""
    runs = report["runs"]
    if not runs:
        console.print("No re-crawl in the store: run `mirror-report crawl --recrawl` (or `scrapy crawl web -a recrawl=1`) first.")
        return
    summary = Table(title=f"Re-crawls: {len(runs)}", title_justify="left")
    for header in ("run", "unchanged", "changed", "gone", "moved"):
        add_value_column(summary, header)
    for run in runs:
        summary.add_row(str(run["id"]), *(str(run[k]) for k in ("unchanged", "changed", "gone", "moved")))
    console.print(summary)
    hosts = Table(title=f"Change by host: {len(report['hosts'])}", title_justify="left")
    add_name_column(hosts, "host")
    for header in ("pages", "changed", "gone", "moved", "rate", "complete"):
        add_value_column(hosts, header)
    add_value_column(hosts, "rapid", "rapid")
    for row in report["hosts"]:
        hosts.add_row(
            Text(safe_text(row["host"])), str(row["pages"]), str(row["changed"]), str(row["gone"]), str(row["moved"]),
            f"{row['change_rate']:.2f}", _share(row["complete_share"]), "rapid" if row["rapid_change"] else "",
        )
    console.print(hosts)
    pages = report["pages"]
    table = Table(title=f"Pages changed, gone or moved: {len(pages)}", title_justify="left")
    add_value_column(table, "run")
    add_value_column(table, "kind", "unchanged")
    add_value_column(table, "resemblance")
    add_name_column(table, "url")
    add_name_column(table, "moved to")
    for row in pages[:limit]:
        table.add_row(str(row["run"]), row["kind"], _share(row["resemblance"]), Text(safe_text(row["url"])), Text(safe_text(row["moved_to"] or "")))
    console.print(table)
    lags = Table(title=f"Mirrors behind their original: {len(report['mirror_lags'])}", title_justify="left")
    add_name_column(lags, "original / mirror")
    for header in ("changes", "caught up", "behind", "lag crawls", "lag days"):
        add_value_column(lags, header)
    for row in report["mirror_lags"]:
        lags.add_row(
            Text(safe_text(row["original"]) + "\n" + safe_text(row["mirror"])), str(row["changes"]), str(row["caught_up"]),
            str(row["behind"]), "-" if row["lag_crawls"] is None else f"{row['lag_crawls']:g}",
            "-" if row["lag_days"] is None else f"{row['lag_days']:g}",
        )
    console.print(lags)


def render_changes_csv(report: dict[str, Any]) -> str:
    """One row per page that changed, went or moved in a re-crawl."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["run", "kind", "resemblance", "url", "moved_to"])
    for row in report["pages"]:
        writer.writerow([row["run"], row["kind"], "" if row["resemblance"] is None else row["resemblance"],
                         safe_cell(row["url"]), safe_cell(row["moved_to"] or "")])
    return out.getvalue()
