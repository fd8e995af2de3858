"""Crawl throughput: a plain Scrapy follow-all spider vs ``scrapy crawl web`` with the store on.

Both crawl the same link-heavy sandbox host (documentation-like pages of ~300 links each,
served with a deep listen backlog) in one run, alternating, with the same concurrency and
politeness; each configuration runs ``--runs`` times and the medians are compared.

    python benchmarks/crawl.py [--pages 1000] [--links 300] [--runs 3] [--anchors-only]

Four more configurations give costs as ratios of crawl throughput: ours without the
sketch pipeline (issue 3: on vs off >= 0.8), ours with sketches but without the online
duplicate index (issue 4: within 10%), ours without the anchor-bag pipeline (issue 7:
within 10%) and ours without the spam and trap defences (issue 6: frontier, page spam
scores, host verdicts). ``--anchors-only`` runs only ours with and without anchor bags, alternating,
and ends with ``anchor_bags_on_pages_s=X off_pages_s=Y ratio=X/Y``.

Last line: ``plain_pages_s=X ours_pages_s=Y ratio=Y/X bytes_per_page=Z`` (Z: the SQLite
store's size, WAL checkpointed, divided by the pages stored).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.sandbox import SandboxServer, build_linkheavy_world  # noqa: E402

PER_HOST = 8  # one host: the per-host limit is the crawl's concurrency
ANCHORS = {"mirrorscope.crawler.anchor_bags.AnchorBagPipeline": 600}
SPAM = {"mirrorscope.crawler.pipelines.SpamScorePipeline": 250, "mirrorscope.crawler.spam.SpamPipeline": 450}
NO_SKETCH = {"mirrorscope.crawler.pipelines.StorePipeline": 900, **ANCHORS, **SPAM}
NO_INDEX = {"mirrorscope.crawler.pipelines.SketchPipeline": 300, "mirrorscope.crawler.pipelines.StorePipeline": 900, **ANCHORS, **SPAM}
NO_SPAM_PIPELINES = {"mirrorscope.crawler.pipelines.SketchPipeline": 300, "mirrorscope.crawler.pipelines.DuplicatePipeline": 500,
                     "mirrorscope.crawler.pipelines.StorePipeline": 900, **ANCHORS}
# Issue 6's defences off: Scrapy's global priority queue, no frontier middleware, no spam
# scores or verdicts, no cloaking checks.
NO_DEFENCES = (
    "-s", f"ITEM_PIPELINES={json.dumps(NO_SPAM_PIPELINES)}", "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue",
    "-s", 'SPIDER_MIDDLEWARES={"mirrorscope.crawler.frontier.FrontierMiddleware": null}',
)
NO_ANCHORS = ("-s", "ANCHOR_BAGS_ENABLED=False")


def _rate(stats: dict) -> tuple[float, int]:
    pages = stats.get("response_received_count", 0) - stats.get("robotstxt/response_count", 0)
    return pages / stats["elapsed_time_seconds"], pages


def run_plain(seed: str, hosts: Path) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "followall.py"), seed, str(hosts), str(PER_HOST)],
        cwd=tempfile.gettempdir(), env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True,
    )
    return _rate(json.loads(out.stdout.strip().splitlines()[-1]))


def run_anchor_comparison(seed: str, hosts: Path, tmp: str, runs: int) -> None:
    """Ours with and without the anchor-bag pipeline, alternating; medians compared."""
    on, off = [], []
    for run in range(runs):
        rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"))
        on.append(rate)
        flush = json.loads(sqlite3.connect(Path(tmp, "ours.db")).execute("SELECT stats FROM crawl_runs").fetchone()[0])
        seconds = flush.get("mirrorscope/anchor_bags/flush_seconds", 0.0)
        print(f"run {run + 1}: with anchor bags    {rate:7.1f} pages/s ({stored} pages stored, {seconds:.2f} s signing)", flush=True)
        rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"), *NO_ANCHORS)
        off.append(rate)
        print(f"run {run + 1}: without anchor bags {rate:7.1f} pages/s ({stored} pages stored)", flush=True)
    a, b = statistics.median(on), statistics.median(off)
    print(f"medians over {runs} runs: anchor bags on {a:.1f} pages/s, off {b:.1f} pages/s, ratio {a / b:.2f}")
    print(f"anchor_bags_on_pages_s={a:.1f} off_pages_s={b:.1f} ratio={a / b:.2f}")


def run_ours(seed: str, hosts: Path, db: Path, *settings: str) -> tuple[float, int, int]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={seed}", "-s", f"HOSTS_FILE={hosts}",
         "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", f"DATABASE_URL=sqlite:///{db}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={PER_HOST}",
         "-s", "LOG_LEVEL=WARNING", *settings],
        cwd=ROOT, check=True, capture_output=True,
    )
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stats = json.loads(conn.execute("SELECT stats FROM crawl_runs ORDER BY id DESC LIMIT 1").fetchone()[0])
    stored = conn.execute("SELECT count(*) FROM pages WHERE outcome = 'ok'").fetchone()[0]
    conn.close()
    rate, _ = _rate(stats)
    return rate, stored, db.stat().st_size // max(stored, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--links", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--anchors-only", action="store_true", help="only ours with and without anchor bags")
    args = parser.parse_args()
    world = build_linkheavy_world(0, pages=args.pages, links_per_page=args.links)
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(world, port=0) as server:
        hosts = Path(tmp, "hosts")
        hosts.write_text(world.hosts_file_text())
        seed = world.seeds(server.port)[0]
        if args.anchors_only:
            run_anchor_comparison(seed, hosts, tmp, args.runs)
            return
        plain, ours, sizes, unsketched, unindexed, unanchored, undefended = [], [], [], [], [], [], []
        for run in range(args.runs):
            rate, pages = run_plain(seed, hosts)
            plain.append(rate)
            print(f"run {run + 1}: plain Scrapy follow-all  {rate:7.1f} pages/s ({pages} pages)", flush=True)
            rate, stored, size = run_ours(seed, hosts, Path(tmp, "ours.db"))
            ours.append(rate)
            sizes.append(size)
            print(f"run {run + 1}: scrapy crawl web + store {rate:7.1f} pages/s ({stored} pages stored, {size} B/page)", flush=True)
            rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"), "-s", f"ITEM_PIPELINES={json.dumps(NO_SKETCH)}")
            unsketched.append(rate)
            print(f"run {run + 1}: the same without sketches {rate:7.1f} pages/s ({stored} pages stored)", flush=True)
            rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"), "-s", f"ITEM_PIPELINES={json.dumps(NO_INDEX)}")
            unindexed.append(rate)
            print(f"run {run + 1}: sketches, no duplicate index {rate:7.1f} pages/s ({stored} pages stored)", flush=True)
            rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"), *NO_ANCHORS)
            unanchored.append(rate)
            print(f"run {run + 1}: without anchor bags   {rate:7.1f} pages/s ({stored} pages stored)", flush=True)
            rate, stored, _ = run_ours(seed, hosts, Path(tmp, "ours.db"), *NO_DEFENCES)
            undefended.append(rate)
            print(f"run {run + 1}: without spam defences {rate:7.1f} pages/s ({stored} pages stored)", flush=True)
    p, o = statistics.median(plain), statistics.median(ours)
    u = statistics.median(unsketched)
    print(f"medians over {args.runs} runs: plain {p:.1f} pages/s, ours {o:.1f} pages/s, ratio {o / p:.2f}")
    i = statistics.median(unindexed)
    print(f"sketch pipeline on vs off: {o:.1f} / {u:.1f} pages/s = {o / u:.2f}")
    print(f"online duplicate index on vs off: {o:.1f} / {i:.1f} pages/s = {o / i:.2f}")
    n = statistics.median(unanchored)
    print(f"anchor-bag pipeline on vs off: {o:.1f} / {n:.1f} pages/s = {o / n:.2f}")
    d = statistics.median(undefended)
    print(f"spam and trap defences on vs off: {o:.1f} / {d:.1f} pages/s = {o / d:.2f}")
    print(f"plain_pages_s={p:.1f} ours_pages_s={o:.1f} ratio={o / p:.2f} bytes_per_page={int(statistics.median(sizes))}")


if __name__ == "__main__":
    main()
