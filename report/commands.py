"""The commands of ``mirror-report``: each takes the parsed arguments and returns the exit status."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

from mirrorscope.report.crawl import parse_settings, run_crawl, run_workers
from mirrorscope.report.demo import DEMO_DATABASE, crawl_sandbox, print_scores, remove_demo_database
from mirrorscope.report.document import build_report, changes_report, duplicates_report, similar_report
from mirrorscope.report.errors import UsageError
from mirrorscope.report.evidence import build_evidence, report_with_evidence
from mirrorscope.report.html import render_html
from mirrorscope.report.render import (
    TABLE_WIDTH,
    render_changes_csv,
    render_changes_table,
    render_csv,
    render_duplicates_csv,
    render_duplicates_table,
    render_json,
    render_similar_table,
    render_table,
    safe_text,
)
from mirrorscope.sandbox.scoring import score_report
from mirrorscope.storage.db import (
    Access,
    StoreError,
    database_name,
    head_revision,
    known_revision,
    make_engine,
    resolve_database_url,
    upgrade,
)
from mirrorscope.storage.store import Store


def _open_store(url: str | None, access: Access) -> Store:
    try:
        return Store(resolve_database_url(url), access=access)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def check_output(output: str | None) -> None:
    """Refuse an ``--output`` that cannot be written before any work is done."""
    if output is None:
        return
    path = Path(output)
    if path.is_dir():
        raise UsageError(f"--output {output} is a directory: name a file")
    if not path.parent.is_dir():
        raise UsageError(f"--output {output}: directory {path.parent} does not exist")


def _emit(
    report: dict[str, Any],
    fmt: str,
    output: str | None,
    table: Callable[[dict[str, Any], Console], None] = render_table,
    to_csv: Callable[[dict[str, Any]], str] = render_csv,
) -> None:
    """Write ``report`` as JSON, CSV (``to_csv``), HTML (with its ``evidence`` key) or a
    terminal table (``table``)."""
    if fmt == "json":
        text = render_json(report)
    elif fmt == "html":
        text = render_html(report)
    elif fmt == "csv":
        text = to_csv(report)
    elif not output:
        table(report, Console())
        return
    else:
        console = Console(file=io.StringIO(), width=TABLE_WIDTH)
        table(report, console)
        text = console.file.getvalue()
    if not output:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --output {output}: {exc.strerror}") from None


def cmd_crawl(args: argparse.Namespace) -> int:
    """``crawl``: the ``web`` spider from the seeds into the store; 1 unless it finished or spent its
    page budget with every page stored."""
    overrides: dict[str, Any] = {
        "DATABASE_URL": args.db,
        "DEPTH_LIMIT": args.depth_limit,
        "HOSTS_FILE": args.hosts_file,
        "ALLOW_PRIVATE_ADDRESSES": True if args.allow_private else None,
        "JOBDIR": args.jobdir,
        "LOG_LEVEL": args.log_level,
    }
    overrides.update(parse_settings(args.settings))
    spider_args = {"seeds": args.seeds, "max_pages": args.max_pages, "allowed_hosts": args.allowed_hosts, "recrawl": "1" if args.recrawl else None}
    if args.workers is not None:
        return 1 if run_workers(spider_args, overrides, args.workers, args.redis) else 0
    if args.redis is not None:
        overrides["FRONTIER_REDIS_URL"] = args.redis
    status = run_crawl(spider_args, overrides)
    return 0 if status in ("finished", "closespider_pagecount") else 1


def cmd_report(args: argparse.Namespace) -> int:
    """``report`` (the default): what the store holds."""
    store = _open_store(args.db, "read")
    try:
        report = report_with_evidence(store) if args.format == "html" else build_report(store)
    finally:
        store.close()
    _emit(report, args.format, args.output)
    return 0


def _duplicates_engine(args: argparse.Namespace) -> Callable[..., dict[str, Any]]:
    """``detect``'s near-duplicate job for ``--engine``, its options checked before any work."""
    from mirrorscope.jobs.duplicates import detect_duplicates
    from mirrorscope.jobs.spark_detect import SparkUnavailable, check_spark, spark_job

    if args.engine not in ("numpy", "spark"):
        raise UsageError(f"unknown --engine {args.engine!r}: numpy or spark")
    if args.engine == "numpy":
        if args.spark_master is not None or args.parquet is not None:
            raise UsageError("--spark-master and --parquet go with --engine spark")
        return detect_duplicates
    try:
        check_spark()
    except SparkUnavailable as exc:
        raise UsageError(str(exc)) from None
    return spark_job(args.spark_master or "local[2]", args.parquet)


def cmd_detect(args: argparse.Namespace) -> int:
    from mirrorscope.jobs.detect import detect
    from mirrorscope.jobs.export import ExportError
    from mirrorscope.jobs.spark_detect import SparkUnavailable

    if not 0.0 < args.threshold <= 1.0:
        raise UsageError(f"--threshold must be in (0, 1], not {args.threshold}")
    job = _duplicates_engine(args)
    store = _open_store(args.db, "write")
    console = Console(stderr=True)
    try:
        with console.status("clustering near-duplicate pages") as status:
            results = detect(store, args.threshold, progress=lambda text: status.update(safe_text(text)), duplicates_job=job)
    except (ExportError, SparkUnavailable) as exc:
        raise UsageError(str(exc)) from None
    finally:
        store.close()
    summary, anchors, mirrors, spam = results["duplicates"], results["similar"], results["mirrors"], results["spam"]
    console.print(f"mirrors: {mirrors['mirrors']} of {mirrors['pairs_judged']} candidate pairs, {mirrors['clusters']} clusters")
    console.print(f"spam: {spam['flagged']} of {spam['hosts']} hosts flagged")
    collections = results["collections"]
    console.print(
        f"replicated collections (bottom-up): {collections['collections']} holding {collections['pages']} pages; "
        f"{mirrors['bottom_up_mirrors']} mirrors found through them"
    )
    for method in ("broder", "center", "super-shingles"):
        if method in summary:
            found = summary[method]
            console.print(f"{method}: {found['clusters']} clusters holding {found['pages_in_clusters']} of {summary['pages']} pages ({found['pairs']} pairs)")
    console.print(f"containment pairs: {summary['containment_pairs']}")
    console.print(
        f"anchor bags: {anchors['bags']} URLs, {anchors['pairs']} similar pairs, "
        f"{anchors['clusters']} CENTER clusters holding {anchors['urls_in_clusters']} URLs"
    )
    topics = results["topics"]
    if topics["nonzeros"]:
        console.print(
            f"topics: {topics['pages']} term vectors x {topics['terms']} terms ({topics['nonzeros']} nonzeros) "
            f"co-clustered in {topics['seconds']:.2f} s, {topics['iterations']} iterations; {topics['labels']} groups labelled"
        )
    else:
        console.print(f"topics: no term vectors to co-cluster ({topics['pages']} stored)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``export --parquet DIR``: the store's sketches, pages, hosts and links as Parquet."""
    from mirrorscope.jobs.export import ExportError, export_parquet

    store = _open_store(args.db, "read")
    console = Console(stderr=True)
    try:
        manifest = export_parquet(store, args.parquet, progress=lambda text: console.print(safe_text(text)))
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    finally:
        store.close()
    tables = manifest["tables"]
    console.print(f"exported to {safe_text(args.parquet)}: " + ", ".join(f"{tables[t]} {t}" for t in tables))
    return 0


def cmd_duplicates(args: argparse.Namespace) -> int:
    """``duplicates``: one method's near-duplicate clusters and the containment pairs."""
    store = _open_store(args.db, "read")
    try:
        report = duplicates_report(store, args.method)
    finally:
        store.close()
    _emit(report, args.format, args.output, partial(render_duplicates_table, limit=args.limit), render_duplicates_csv)
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    """``changes``: page change over the re-crawls, per host, per page and per mirror pair."""
    store = _open_store(args.db, "read")
    try:
        report = changes_report(store)
    finally:
        store.close()
    _emit(report, args.format, args.output, partial(render_changes_table, limit=args.limit), render_changes_csv)
    return 0


def cmd_similar(args: argparse.Namespace) -> int:
    """``similar``: the URLs whose anchor bags are most like the given URL's."""
    from mirrorscope.crawler.hosts import normalize_url
    from mirrorscope.jobs.similar import recompute_anchor_bags, similar_urls

    url = normalize_url("", args.url) or args.url
    store = _open_store(args.db, "write" if args.recompute else "read")
    try:
        if args.recompute:
            recompute_anchor_bags(store)
        found = similar_urls(store, url, args.limit)
    finally:
        store.close()
    if found is None:
        raise UsageError(f"no link to {url} and no title for it in the store")
    report = similar_report(url, found)
    if args.format == "json":
        sys.stdout.write(render_json(report))
    else:
        render_similar_table(report, Console())
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    """``db upgrade|current``: migrate the schema to the head revision, or say where it is."""
    try:
        engine = make_engine(resolve_database_url(args.db), "create" if args.action == "upgrade" else "read")
        if args.action == "upgrade":
            upgrade(engine)
        print(f"{safe_text(database_name(engine))}: at revision {known_revision(engine)} (head {head_revision()})")
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:  # the driver's own connection errors
        raise UsageError(f"cannot open database: {str(exc).splitlines()[0]}") from None
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``demo``: crawl a sandbox world, report, and score the report against its ground truth."""
    console = Console(stderr=True)
    url = args.db or f"sqlite:///{DEMO_DATABASE}"
    if not args.db:
        remove_demo_database()
    crawl = crawl_sandbox(args.seed, args.port, args.world, url, console)
    store = _open_store(url, "write")
    try:
        from mirrorscope.jobs.duplicates import detect_duplicates

        detect_duplicates(store)
        report = build_report(store)
        stored = {p["url"] for p in store.pages()}
        if args.format == "html":
            from mirrorscope.jobs.similar import recompute_anchor_bags

            recompute_anchor_bags(store)  # the similar-URL view reads the stored pairs
            report["evidence"] = build_evidence(store, report)
    finally:
        store.close()
    report["sandbox"] = {
        "seed": args.seed, "crawl_seconds": round(crawl.seconds, 2), "finish_reason": crawl.reason,
        **score_report(report, stored, crawl.truth),
    }
    _emit(report, args.format, args.output)
    if args.format == "table":
        print_scores(console, report["sandbox"])
    return 0 if crawl.reason == "finished" else 1
