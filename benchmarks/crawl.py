"""Crawl throughput on real pages: ``scrapy crawl web`` with every pipeline on, against a
plain Scrapy follow-all spider and follow-all with a seen-set, all with the same politeness.

Two worlds, each served from this process (``mirrorscope.sandbox``) and crawled by each
configuration in a process of its own, the configurations alternating within each run:

- **real**: ``build_real_world(0)``, 40 hosts of Debian's documentation packages with
  planted mirrors, decoys, spam and a calendar trap (benchmarks/realworld.py scores what
  is found there); names outside the world fail without a DNS query;
- **linkheavy**: ``build_linkheavy_world``, one documentation-like host of ``--pages``
  pages with ~``--links`` links each, crawled with 8 requests in flight (one host: the
  per-host limit is the crawl's concurrency), as the earlier versions of this benchmark did.

Configurations: **ours** (``scrapy crawl web``, every pipeline on, SQLite store,
``-a max_pages``); **plain** and **seen** (benchmarks/followall.py: Scrapy's follow-all,
and follow-all building a Request only for a link it has not requested yet), with
mirrorscope's politeness settings, its downloader (the per-host limit enforced), its
robots.txt handling and resolver, and the same page budget.

Figures per crawl:

- ``pages_s``: pages answered by the server (robots.txt excluded) over the span of the
  server's request log; Scrapy's own figure (responses less robots.txt over
  ``elapsed_time_seconds``) is printed beside it;
- ``cpu_cores_busy``: CPU seconds of the crawl's process tree (the anchor-bag worker
  included), sampled from /proc every 0.25 s, over the steady state: from the 10th to
  the 90th percentile of the server's page requests;
- ``cpu_ms_per_page``: the crawl process's whole CPU (its children included, from
  ``getrusage``) per page answered;
- ``parse_ms_per_page``: the median time of ``lxml.html.fromstring`` over the bodies of
  the HTML pages ours fetched (the same bodies, from the world);
- which URLs each crawl fetched: the sets of (host, path) in the server's log, compared;
- where ours waited: its queues sampled every 0.5 s (``CRAWL_SAMPLE_FILE``,
  ``crawler/diagnostics.py``), as shares of the crawl's time (:func:`waits`).

Medians over ``--runs``; the machine's load average is printed with every crawl.
``--ablations`` also runs, on the link-heavy world, ours without sketches, without the
online duplicate index, without anchor bags and without the spam and trap defences
(the issue-3/4/6/7 cost ratios this benchmark printed before).

    python benchmarks/crawl.py [--world real|linkheavy|both] [--runs 3] [--max-pages 3000]
                               [--pages 1000] [--links 300] [--ablations]

Last line (the real world): ``pages_s=.. plain_pages_s=.. ratio=.. cpu_cores_busy=..
cpu_ms_per_page=.. parse_ms_per_page=..``; the link-heavy world's figures are the line
before it, with the prefix ``linkheavy_``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import lxml.html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.sandbox import SandboxServer, World, build_linkheavy_world, build_real_world  # noqa: E402
from mirrorscope.settings import CRAWL_SAMPLE_INTERVAL  # noqa: E402

#: One host in the link-heavy world: the per-host limit is the crawl's concurrency.
LINKHEAVY_PER_HOST = 8
#: Seconds between samples of the crawl's CPU.
SAMPLE_SECONDS = 0.25
#: The share of page requests cut from each end of a crawl to leave its steady state.
STEADY_CUT = 0.10
TICKS = os.sysconf("SC_CLK_TCK")
ANCHORS = {"mirrorscope.crawler.anchor_bags.AnchorBagPipeline": 600}
SPAM = {"mirrorscope.crawler.pipelines.SpamScorePipeline": 250, "mirrorscope.crawler.spam.SpamPipeline": 450}
STORE = {"mirrorscope.crawler.pipelines.StorePipeline": 900}
SKETCH = {"mirrorscope.crawler.pipelines.SketchPipeline": 300}
ABLATIONS = {
    "without sketches": ("-s", f"ITEM_PIPELINES={json.dumps({**STORE, **ANCHORS, **SPAM})}"),
    "sketches, no duplicate index": ("-s", f"ITEM_PIPELINES={json.dumps({**SKETCH, **STORE, **ANCHORS, **SPAM})}"),
    "without anchor bags": ("-s", "ANCHOR_BAGS_ENABLED=False"),
    # Issue 6's defences: Scrapy's global priority queue, no frontier middleware, no spam
    # scores or verdicts, no cloaking checks.
    "without spam defences": (
        "-s", f"ITEM_PIPELINES={json.dumps({**SKETCH, 'mirrorscope.crawler.pipelines.DuplicatePipeline': 500, **STORE, **ANCHORS})}",
        "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue",
        "-s", 'SPIDER_MIDDLEWARES={"mirrorscope.crawler.frontier.FrontierMiddleware": null}',
    ),
}


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its living descendants."""
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICKS
            stack.extend(int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split())
        except (OSError, IndexError, ValueError):  # the process ended between two reads
            continue
    return total


def run_sampled(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float, list[tuple[float, float]]]:
    """Run ``command``; (its result, its whole CPU seconds, samples of (time, tree CPU))."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"})
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            samples.append((time.monotonic(), tree_cpu(process.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    result = subprocess.CompletedProcess(command, process.returncode, out, err)
    if result.returncode != 0:
        raise SystemExit(f"{command[:4]} failed ({result.returncode}): {err[-2000:]}")
    return result, cpu, samples


def cpu_at(samples: list[tuple[float, float]], moment: float) -> float:
    """The tree's CPU seconds at ``moment``, from the last sample before it."""
    earlier = [cpu for t, cpu in samples if t <= moment]
    return earlier[-1] if earlier else 0.0


def figures(log: list[tuple[float, str, str]], cpu: float, samples: list[tuple[float, float]], stats: dict[str, Any]) -> dict[str, Any]:
    pages = sorted(t for t, _, path in log if path != "/robots.txt")
    span = pages[-1] - pages[0] if len(pages) > 1 else float("nan")
    lo, hi = pages[int(len(pages) * STEADY_CUT)], pages[int(len(pages) * (1 - STEADY_CUT)) - 1]
    scrapy_pages = stats.get("response_received_count", 0) - stats.get("robotstxt/response_count", 0)
    return {
        "pages": len(pages), "pages_s": len(pages) / span, "scrapy_pages_s": scrapy_pages / float(stats["elapsed_time_seconds"]),
        "cpu_cores_busy": (cpu_at(samples, hi) - cpu_at(samples, lo)) / (hi - lo) if hi > lo else float("nan"),
        "cpu_s": cpu, "cpu_ms_per_page": 1000 * cpu / max(1, len(pages)), "robots": len(log) - len(pages),
        "load": os.getloadavg()[0],
    }


def waits(samples: list[dict[str, Any]], interval: float) -> dict[str, float]:
    """Shares of a crawl's samples (time) in each state of waiting: the reactor blocked (a
    sample more than twice late), nothing in flight, one or two hosts in flight with
    requests queued (politeness and the depth barrier), AutoThrottle delaying a busy host
    by more than 0.1 s, the store writer's backlog full, the anchor sender busy, robots.txt
    files pending."""
    n = max(1, len(samples))
    late = sum(b["t"] - a["t"] > 2 * interval for a, b in zip(samples, samples[1:]))
    return {
        "reactor_blocked": late / n,
        "none_in_flight": sum(not r["in_flight"] for r in samples) / n,
        "few_hosts_queued": sum(0 < len(r["in_flight"]) <= 2 and r["scheduled"] > 0 for r in samples) / n,
        "throttled": sum(any(d > 0.1 for d in r["delays"].values()) for r in samples) / n,
        "store_full": sum(r.get("store_batches", 0) >= 2 for r in samples) / n,
        "anchors_busy": sum(r.get("anchor_sending", 0) > 0 for r in samples) / n,
        "robots_pending": sum(r.get("robots_pending", 0) > 0 for r in samples) / n,
        "mean_in_flight": sum(sum(r["in_flight"].values()) for r in samples) / n,
    }


def crawl_ours(world_dir: Path, server: SandboxServer, max_pages: int, per_host: int | None, *extra: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="crawl-ours-") as tmp:
        db = Path(tmp, "store.db")
        sampled = Path(tmp, "samples.jsonl")
        command = [
            sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={world_dir / 'seeds.txt'}", "-a", f"max_pages={max_pages}",
            "-s", f"HOSTS_FILE={world_dir / 'hosts'}", "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", "RESOLVE_ONLY_HOSTS_FILE=True",
            "-s", f"DATABASE_URL=sqlite:///{db}", "-s", "LOG_LEVEL=WARNING", "-s", f"CRAWL_SAMPLE_FILE={sampled}",
            *(("-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={per_host}") if per_host else ()), *extra,
        ]
        server.reset_stats()
        _, cpu, samples = run_sampled(command, ROOT)
        log = server.request_log()
        with sqlite3.connect(db) as conn:
            stats = json.loads(conn.execute("SELECT stats FROM crawl_runs ORDER BY id DESC LIMIT 1").fetchone()[0])
        waited = waits([json.loads(row) for row in sampled.read_text().splitlines()], CRAWL_SAMPLE_INTERVAL)
    return figures(log, cpu, samples, stats) | {"urls": {(host, path) for _, host, path in log if path != "/robots.txt"}, "waits": waited}


def crawl_baseline(world_dir: Path, server: SandboxServer, max_pages: int, per_host: int | None, mode: str) -> dict[str, Any]:
    command = [sys.executable, str(ROOT / "benchmarks" / "followall.py"), str(world_dir / "seeds.txt"), str(world_dir / "hosts"),
               str(max_pages), mode, *((str(per_host),) if per_host else ())]
    server.reset_stats()
    result, cpu, samples = run_sampled(command, Path(tempfile.gettempdir()))
    log = server.request_log()
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    return figures(log, cpu, samples, stats) | {"urls": {(host, path) for _, host, path in log if path != "/robots.txt"}}


def parse_ms_per_page(server: SandboxServer, urls: set[tuple[str, str]]) -> tuple[float, float]:
    """(median, mean) milliseconds of ``lxml.html.fromstring`` over the HTML bodies of ``urls``."""
    times = []
    for host, path in sorted(urls):
        page = server.lookup(host, path)
        if page.status != 200 or page.stream is not None or not page.body or "html" not in (page.content_type or ""):
            continue
        started = time.perf_counter()
        try:
            lxml.html.fromstring(page.body)
        except (ValueError, lxml.etree.ParserError):  # an empty or unparseable body costs its attempt
            pass
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), statistics.fmean(times)


def compare_urls(name: str, ours: set, other: set) -> None:
    only_ours, only_other = ours - other, other - ours
    print(f"  URLs fetched: ours {len(ours)}, {name} {len(other)}, both {len(ours & other)}; "
          f"only ours {len(only_ours)} (top hosts {Counter(h for h, _ in only_ours).most_common(4)}), "
          f"only {name} {len(only_other)} (top hosts {Counter(h for h, _ in only_other).most_common(4)})", flush=True)


def show(label: str, run: int, result: dict[str, Any]) -> None:
    if "waits" in result:
        print(f"run {run}: ours waited: " + ", ".join(f"{k} {v:.2f}" for k, v in result["waits"].items()), flush=True)
    print(f"run {run}: {label:10s} {result['pages_s']:7.1f} pages/s by the server's log, {result['scrapy_pages_s']:7.1f} by Scrapy's stats; "
          f"{result['pages']} pages + {result['robots']} robots.txt; CPU {result['cpu_s']:.1f} s, {result['cpu_ms_per_page']:.2f} ms/page, "
          f"{result['cpu_cores_busy']:.2f} cores busy in steady state; load average {result['load']:.2f}", flush=True)


def bench_world(label: str, world: World, runs: int, max_pages: int, per_host: int | None, ablations: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix=f"crawl-{label}-") as tmp, SandboxServer(world, port=0) as server:
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        print(f"== {label}: {len(world.hosts)} hosts, page budget {max_pages}, per-host limit {per_host or 'default'}", flush=True)
        results: dict[str, list[dict[str, Any]]] = {"ours": [], "plain": [], "seen": []}
        for run in range(1, runs + 1):
            results["ours"].append(crawl_ours(world_dir, server, max_pages, per_host))
            show("ours", run, results["ours"][-1])
            for mode in ("plain", "seen"):
                results[mode].append(crawl_baseline(world_dir, server, max_pages, per_host, mode))
                show(mode, run, results[mode][-1])
                compare_urls(mode, results["ours"][-1]["urls"], results[mode][-1]["urls"])
        parse_median, parse_mean = parse_ms_per_page(server, results["ours"][-1]["urls"])
        print(f"lxml.html parse of the HTML pages ours fetched: median {parse_median:.2f} ms, mean {parse_mean:.2f} ms", flush=True)
        if ablations:
            run_ablations(world_dir, server, max_pages, per_host, statistics.median(r["pages_s"] for r in results["ours"]), runs)
    med = {mode: {k: statistics.median(r[k] for r in rs) for k in ("pages_s", "scrapy_pages_s", "cpu_cores_busy", "cpu_ms_per_page")}
           for mode, rs in results.items()}
    print(f"{'medians':10s} {'pages/s log':>12s} {'pages/s Scrapy':>15s} {'cores busy':>11s} {'CPU ms/page':>12s}")
    for mode, m in med.items():
        print(f"{mode:10s} {m['pages_s']:12.1f} {m['scrapy_pages_s']:15.1f} {m['cpu_cores_busy']:11.2f} {m['cpu_ms_per_page']:12.2f}")
    return {
        "pages_s": med["ours"]["pages_s"], "plain_pages_s": med["plain"]["pages_s"], "ratio": med["ours"]["pages_s"] / med["plain"]["pages_s"],
        "seen_pages_s": med["seen"]["pages_s"], "cpu_cores_busy": med["ours"]["cpu_cores_busy"],
        "cpu_ms_per_page": med["ours"]["cpu_ms_per_page"], "parse_ms_per_page": parse_median,
    }


def run_ablations(world_dir: Path, server: SandboxServer, max_pages: int, per_host: int | None, ours_pages_s: float, runs: int) -> None:
    """Ours without one component at a time: each cost as a ratio of crawl throughput."""
    for name, settings in ABLATIONS.items():
        rates = [crawl_ours(world_dir, server, max_pages, per_host, *settings)["pages_s"] for _ in range(runs)]
        rate = statistics.median(rates)
        print(f"ours {name}: {rate:.1f} pages/s; ours with it / without = {ours_pages_s / rate:.2f}", flush=True)


def line(figures: dict[str, float], prefix: str = "") -> str:
    keys = ("pages_s", "plain_pages_s", "ratio", "cpu_cores_busy", "cpu_ms_per_page", "parse_ms_per_page")
    return " ".join(f"{prefix}{k}={figures[k]:.3g}" for k in keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", choices=("real", "linkheavy", "both"), default="both")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-pages", type=int, default=3000, help="page budget on the real world")
    parser.add_argument("--pages", type=int, default=1000, help="pages of the link-heavy world (also its budget)")
    parser.add_argument("--links", type=int, default=300)
    parser.add_argument("--ablations", action="store_true", help="ours without each component, on the link-heavy world")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}", flush=True)
    found: dict[str, dict[str, float]] = {}
    if args.world in ("linkheavy", "both"):
        world = build_linkheavy_world(0, pages=args.pages, links_per_page=args.links)
        found["linkheavy"] = bench_world("linkheavy", world, args.runs, args.pages, LINKHEAVY_PER_HOST, args.ablations)
    if args.world in ("real", "both"):
        found["real"] = bench_world("real", build_real_world(0), args.runs, args.max_pages, None, False)
    if "linkheavy" in found:
        print(line(found["linkheavy"], "linkheavy_") + f" linkheavy_seen_pages_s={found['linkheavy']['seen_pages_s']:.3g}")
    if "real" in found:
        print(f"seen_pages_s={found['real']['seen_pages_s']:.3g} load_average={os.getloadavg()[0]:.2f}")
        print(line(found["real"]))


if __name__ == "__main__":
    main()
