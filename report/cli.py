"""``mirror-report``: crawl, inspect the store, and run the demo.

    mirror-report [report] [--db URL] [--format table|json|csv] [--output FILE]
    mirror-report crawl SEEDS [--db URL] [--max-pages N] [--depth-limit N] ...
    mirror-report demo [--db URL] [--seed N] [--port N] [--world full|standard]
    mirror-report db upgrade|current [--db URL]

Bad input (a missing seeds file, a bad database URL, an unknown option) is one line on
stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.report.render import (
    crawl_report,
    render_csv,
    render_duplicates_csv,
    render_duplicates_table,
    render_json,
    render_table,
    safe_text,
)
from mirrorscope.storage.db import StoreError, current_revision, head_revision, make_engine, resolve_database_url, upgrade
from mirrorscope.storage.store import Store

COMMANDS = ("report", "crawl", "demo", "db", "detect", "duplicates", "similar")
DEMO_DATABASE = "mirrorscope-demo.db"


class UsageError(Exception):
    """Bad command-line input; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", help="database URL (default: $DATABASE_URL, else sqlite:///mirrorscope.db)")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "json", "csv"), default="table")
    parser.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mirror-report", description="Mirrored hosts, near-duplicate pages and web spam, from a crawl.")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    report = commands.add_parser("report", help="show what the store holds (the default)")
    _add_db(report)
    _add_output(report)

    crawl = commands.add_parser("crawl", help="crawl from seeds into the store")
    crawl.add_argument("seeds", help="a file of URLs (one per line, # comments) or URL,URL")
    _add_db(crawl)
    crawl.add_argument("--max-pages", type=int, help="fetch at most N pages")
    crawl.add_argument("--depth-limit", type=int, help="follow links at most N hops from the seeds")
    crawl.add_argument("--allowed-hosts", help="follow links only to these hosts (comma-separated; subdomains included)")
    crawl.add_argument("--hosts-file", help="a file in /etc/hosts format resolving names for this crawl")
    crawl.add_argument("--allow-private", action="store_true", help="allow private and loopback addresses (local worlds)")
    crawl.add_argument("--jobdir", help="keep the crawl's state here so that it can be resumed")
    crawl.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE", help="any Scrapy or mirrorscope setting")
    crawl.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))

    demo = commands.add_parser("demo", help="build the sandbox web, crawl it and report, offline")
    demo.add_argument("--db", metavar="URL", help=f"database URL (default: a fresh sqlite:///{DEMO_DATABASE})")
    demo.add_argument("--seed", type=int, default=0, help="seed of the sandbox world")
    demo.add_argument("--port", type=int, default=0, help="port for the sandbox hosts (0: any free port)")
    demo.add_argument("--world", choices=("full", "standard", "real"), default="full",
                      help="full: 41 hosts with harder mirrors, decoys, spam and traps (default); standard: 12 hosts; "
                           "real: 40 hosts of real documentation pages with planted mirrors, decoys, spam and a trap "
                           "(needs Debian's documentation packages)")
    _add_output(demo)

    detect = commands.add_parser("detect", help="rerun offline detection over the store (near-duplicates, anchor bags, mirrors, spam hosts)")
    _add_db(detect)
    detect.add_argument("--threshold", type=float, default=0.5, help="resemblance that joins two pages (default 0.5, Broder's)")

    duplicates = commands.add_parser("duplicates", help="near-duplicate clusters and containment pairs")
    _add_db(duplicates)
    duplicates.add_argument("--method", choices=("broder", "center", "super-shingles"), default="broder")
    duplicates.add_argument("--limit", type=int, default=50, help="clusters shown in the table (all in JSON/CSV)")
    _add_output(duplicates)

    similar = commands.add_parser("similar", help="URLs linked to like URL (anchor text and the words around it)")
    similar.add_argument("url")
    _add_db(similar)
    similar.add_argument("--limit", type=int, default=10)
    similar.add_argument("--format", choices=("table", "json"), default="table")
    similar.add_argument(
        "--recompute", action="store_true",
        help="first rebuild every anchor bag, signature, similar pair and cluster from the store and store them (as detect does)",
    )

    db = commands.add_parser("db", help="database schema")
    db.add_argument("action", choices=("upgrade", "current"))
    _add_db(db)
    return parser


def _scrapy_settings(overrides: dict[str, Any]) -> Any:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "mirrorscope.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    for name, value in overrides.items():
        if value is not None:
            settings.set(name, value, priority="cmdline")
    return settings


# Loggers that report one hostile page each; the report lists every outcome anyway.
_PER_PAGE_LOGGERS = (
    "scrapy.downloadermiddlewares.retry",
    "scrapy.downloadermiddlewares.httpcompression",
    "scrapy.core.downloader.handlers.http11",
)


def run_crawl(spider_args: dict[str, Any], overrides: dict[str, Any], quiet: bool = False) -> str:
    """Run the ``web`` spider in this process; returns Scrapy's finish reason."""
    from scrapy.crawler import CrawlerProcess

    from mirrorscope.crawler.spiders.web import CrawlSetupError, check_crawl_input

    settings = _scrapy_settings(overrides)
    spider_args = {k: v for k, v in spider_args.items() if v is not None}
    try:
        check_crawl_input(spider_args, settings)
    except CrawlSetupError as exc:
        raise UsageError(str(exc)) from None
    process = CrawlerProcess(settings)
    if quiet:
        for name in _PER_PAGE_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)
    crawler = process.create_crawler("web")
    process.crawl(crawler, **spider_args)
    process.start()
    return str(crawler.stats.get_value("finish_reason") or "failed")


def _parse_settings(pairs: Sequence[str]) -> dict[str, str]:
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"-s takes NAME=VALUE, not {pair!r}")
        settings[name] = value
    return settings


def cmd_crawl(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {
        "DATABASE_URL": args.db,
        "DEPTH_LIMIT": args.depth_limit,
        "HOSTS_FILE": args.hosts_file,
        "ALLOW_PRIVATE_ADDRESSES": True if args.allow_private else None,
        "JOBDIR": args.jobdir,
        "LOG_LEVEL": args.log_level,
    }
    overrides.update(_parse_settings(args.settings))
    reason = run_crawl({"seeds": args.seeds, "max_pages": args.max_pages, "allowed_hosts": args.allowed_hosts}, overrides)
    return 0 if reason in ("finished", "closespider_pagecount") else 1


def _open_store(url: str | None) -> Store:
    try:
        return Store(resolve_database_url(url))
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _emit(
    report: dict[str, Any],
    fmt: str,
    output: str | None,
    table: Callable[[dict[str, Any], Console], None] = render_table,
    to_csv: Callable[[dict[str, Any]], str] = render_csv,
) -> None:
    """Write ``report`` as JSON, CSV (``to_csv``) or a terminal table (``table``)."""
    if fmt == "json":
        text = render_json(report)
    elif fmt == "csv":
        text = to_csv(report)
    elif output:
        with open(output, "w", encoding="utf-8") as handle:
            table(report, Console(file=handle, width=120))
        return
    else:
        table(report, Console())
        return
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def build_report(store: Store) -> dict[str, Any]:
    report = crawl_report(store.summary(), store.hosts(), store.runs())
    report |= {
        "mirrors": [mirror_entry(p) for p in store.mirror_pairs()],
        "mirror_clusters": [[m["url"] for m in cluster] for cluster in store.mirror_clusters()],
        "duplicate_clusters": store.duplicate_clusters("broder"),
        "containment": store.containment_pairs(),
        "spam_hosts": [verdict_entry(v) for v in store.host_verdicts("spam", flagged_only=True)],
        "traps": [verdict_entry(v) for v in store.host_verdicts("trap", flagged_only=True)],
    }
    return report


def verdict_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One spam or trap verdict as the JSON contract has it (README: "The report")."""
    return {"host": row["host"], "score": row["score"], "pages": row["pages"], "reasons": row["reasons"], "features": row["features"]}


def mirror_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One mirror pair as the JSON contract has it (README: "The report")."""
    return {
        "a": row["url_a"], "b": row["url_b"], "level": row["level"], "score": row["score"],
        "paths_checked": row["paths_checked"], "paths_matched": row["paths_matched"],
        "fractions": {"a_on_b": row["fraction_ab"], "b_on_a": row["fraction_ba"]},
        "inferred": row["inferred"], "features": row["features"], "reasons": row["reasons"],
    }


def cmd_report(args: argparse.Namespace) -> int:
    store = _open_store(args.db)
    try:
        _emit(build_report(store), args.format, args.output)
    finally:
        store.close()
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from mirrorscope.jobs.detect import detect

    if not 0.0 < args.threshold <= 1.0:
        raise UsageError(f"--threshold must be in (0, 1], not {args.threshold}")
    store = _open_store(args.db)
    console = Console(stderr=True)
    try:
        with console.status("clustering near-duplicate pages") as status:
            results = detect(store, args.threshold, progress=lambda text: status.update(safe_text(text)))
    finally:
        store.close()
    summary, anchors, mirrors, spam = results["duplicates"], results["similar"], results["mirrors"], results["spam"]
    console.print(f"mirrors: {mirrors['mirrors']} of {mirrors['pairs_judged']} candidate pairs, {mirrors['clusters']} clusters")
    console.print(f"spam: {spam['flagged']} of {spam['hosts']} hosts flagged")
    for method in ("broder", "center", "super-shingles"):
        if method in summary:
            found = summary[method]
            console.print(f"{method}: {found['clusters']} clusters holding {found['pages_in_clusters']} of {summary['pages']} pages ({found['pairs']} pairs)")
    console.print(f"containment pairs: {summary['containment_pairs']}")
    console.print(
        f"anchor bags: {anchors['bags']} URLs, {anchors['pairs']} similar pairs, "
        f"{anchors['clusters']} CENTER clusters holding {anchors['urls_in_clusters']} URLs"
    )
    return 0


def duplicates_report(store: Store, method: str) -> dict[str, Any]:
    return {"method": method, "duplicate_clusters": store.duplicate_clusters(method), "containment": store.containment_pairs()}


def cmd_duplicates(args: argparse.Namespace) -> int:
    store = _open_store(args.db)
    try:
        report = duplicates_report(store, args.method)
    finally:
        store.close()
    _emit(report, args.format, args.output, partial(render_duplicates_table, limit=args.limit), render_duplicates_csv)
    return 0


def cmd_similar(args: argparse.Namespace) -> int:
    from mirrorscope.crawler.hosts import normalize_url
    from mirrorscope.jobs.similar import recompute_anchor_bags, similar_urls

    url = normalize_url("", args.url) or args.url
    store = _open_store(args.db)
    try:
        if args.recompute:
            recompute_anchor_bags(store)
        found = similar_urls(store, url, args.limit)
    finally:
        store.close()
    if found is None:
        raise UsageError(f"no link to {url} and no title for it in the store")
    if args.format == "json":
        sys.stdout.write(render_json({"url": url, "similar": found}))
        return 0
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"URLs linked to like {safe_text(url)}"), title_justify="left")
    table.add_column("similarity", justify="right")
    table.add_column("url", overflow="fold")
    for row in found:
        table.add_row(f"{row['similarity']:.2f}", Text(safe_text(row["url"])))
    Console().print(table)
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    try:
        engine = make_engine(resolve_database_url(args.db))
        if args.action == "upgrade":
            upgrade(engine)
        print(f"{engine.url.render_as_string(hide_password=True)}: at revision {current_revision(engine)} (head {head_revision()})")
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:  # the driver's own connection errors
        raise UsageError(f"cannot open database: {str(exc).splitlines()[0]}") from None
    return 0


_WORLD_FLAGS = {"full": ["--full"], "standard": [], "real": ["--real"]}


def _start_sandbox(seed: int, port: int, workdir: Path, world: str) -> tuple[subprocess.Popen, list[str]]:
    """The sandbox in a process of its own (the crawl keeps this one's core)."""
    command = [sys.executable, "-m", "mirrorscope.sandbox", "--seed", str(seed), "--port", str(port), "--out", str(workdir)]
    command += _WORLD_FLAGS[world]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seeds_file = workdir / "seeds.txt"
    deadline = time.monotonic() + 60
    # truth.json is written last, once every socket listens.
    while not (workdir / "truth.json").exists():
        if server.poll() is not None:
            raise UsageError(f"the sandbox did not start: {(server.stderr.read() or '').strip().splitlines()[-1:]}")
        if time.monotonic() > deadline:
            server.kill()
            raise UsageError("the sandbox did not start within 60 s")
        time.sleep(0.05)
    return server, [line.strip() for line in seeds_file.read_text().splitlines() if line.strip()]


def score_spam(flagged: list[dict[str, Any]], traps: list[dict[str, Any]], truth: dict[str, Any]) -> dict[str, Any]:
    """Spam-host precision and recall against a sandbox's ground truth, and the traps reported."""
    def names(hosts: Any) -> set[str]:
        return {strip_port(h) for h in hosts}

    true, good = names(truth["spam_hosts"]), names(truth["good_hosts"])
    reported = names(v["host"] for v in flagged)
    return {
        "spam_hosts": len(true), "found": len(reported & true), "good_flagged": len(reported & good),
        "precision": round(len(reported & true) / len(reported), 3) if reported else 0.0,
        "recall": round(len(reported & true) / len(true), 3) if true else 1.0,
        "traps": sorted(names(t["host"] for t in traps)),
    }


def score_mirrors(found: list[dict[str, Any]], truth: dict[str, Any]) -> dict[str, Any]:
    """Host-pair precision and recall of reported mirrors against a sandbox's ground truth."""
    def hosts(entry: dict[str, Any]) -> frozenset[str]:
        return frozenset(strip_port(url.split("/", 3)[2]) for url in (entry["a"], entry["b"]))

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


def cmd_demo(args: argparse.Namespace) -> int:
    import json

    from mirrorscope.sandbox import is_copied

    console = Console(stderr=True)
    url = args.db or f"sqlite:///{DEMO_DATABASE}"
    if not args.db:
        for suffix in ("", "-wal", "-shm"):
            Path(DEMO_DATABASE + suffix).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mirrorscope-demo-") as tmp:
        workdir = Path(tmp)
        server, seeds = _start_sandbox(args.seed, args.port, workdir, args.world)
        try:
            console.print(f"sandbox: {len(seeds)} seed(s), hosts in {workdir / 'hosts'}; crawling into {url}")
            started = time.monotonic()
            reason = run_crawl(
                {"seeds": str(workdir / "seeds.txt")},
                # The real pages link to the real web: names outside the world fail without a query.
                {"DATABASE_URL": url, "HOSTS_FILE": str(workdir / "hosts"), "ALLOW_PRIVATE_ADDRESSES": True,
                 "RESOLVE_ONLY_HOSTS_FILE": True, "LOG_LEVEL": "WARNING"},
                quiet=True,
            )
            elapsed = time.monotonic() - started
            truth = json.loads((workdir / "truth.json").read_text())
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    store = _open_store(url)
    try:
        from mirrorscope.jobs.duplicates import detect_duplicates

        detect_duplicates(store)
        report = build_report(store)
        stored = {p["url"] for p in store.pages()}
    finally:
        store.close()
    spam = {strip_port(h) for h in truth.get("spam_hosts", ())}
    # Content: the pages with a document (not errors, which a duplicate's unfollowed links
    # may hide), off the spam hosts (spam costs fetches, it is not content to keep).
    expected = {
        url for url in truth["pages"]
        if truth["outcomes"].get(url) == "ok" and strip_port(url.split("/", 3)[2]) not in spam
    }
    copied = {url for url in expected if is_copied(url, truth["hosts"])}
    report["sandbox"] = {
        "seed": args.seed,
        "crawl_seconds": round(elapsed, 2),
        "finish_reason": reason,
        "reachable_pages": len(expected),
        "reachable_pages_stored": len(expected & stored),
        "mirrored_pages": len(copied),
        "mirrored_pages_fetched": len(copied & stored),
        "original_pages": len(expected - copied),
        "original_pages_stored": len((expected - copied) & stored),
        "missing": sorted((expected - copied) - stored)[:20],
        "mirrors": score_mirrors(report["mirrors"], truth),
    }
    if spam:
        report["sandbox"]["spam"] = score_spam(report["spam_hosts"], report["traps"], truth)
    _emit(report, args.format, args.output)
    if args.format == "table":
        sandbox = report["sandbox"]
        console.print(
            f"ground truth: {sandbox['original_pages_stored']} of {sandbox['original_pages']} reachable URLs with original "
            f"content stored; {sandbox['mirrored_pages_fetched']} of {sandbox['mirrored_pages']} mirrored URLs fetched "
            f"(duplicates' links are not followed); crawl took {sandbox['crawl_seconds']} s ({safe_text(reason)})"
        )
        scored = sandbox["mirrors"]
        console.print(
            f"mirrors vs ground truth: {scored['found']} of {scored['true_pairs']} true pairs found "
            f"({scored['prefix_right']} with the right prefixes), {scored['false_pairs']} false, "
            f"{scored['decoys_reported']} decoys reported: precision {scored['precision']}, recall {scored['recall']}"
        )
        if "spam" in sandbox:
            found = sandbox["spam"]
            console.print(
                f"spam vs ground truth: {found['found']} of {found['spam_hosts']} spam hosts flagged, {found['good_flagged']} good "
                f"hosts flagged: precision {found['precision']}, recall {found['recall']}; traps reported: "
                f"{', '.join(safe_text(t) for t in found['traps']) or 'none'}"
            )
        for missing in sandbox["missing"]:
            console.print(f"  missing: {safe_text(missing)}", markup=False)
    return 0 if reason == "finished" else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "report")
    handlers = {
        "report": cmd_report, "crawl": cmd_crawl, "demo": cmd_demo, "db": cmd_db,
        "detect": cmd_detect, "duplicates": cmd_duplicates, "similar": cmd_similar,
    }
    try:
        args = build_parser().parse_args(argv)
        return handlers[args.command](args)
    except UsageError as exc:
        print(f"mirror-report: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mirror-report: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
