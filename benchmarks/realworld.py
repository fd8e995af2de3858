"""mirrorscope on the real-page world, scored against its ground truth, beside a naive crawler.

Builds ``build_real_world(seed)`` (40 hosts: 15 sites of Debian's documentation packages
byte for byte, every kind of mirror planted from them, decoys, a five-host link farm, a
doorway, a cloaking and a hidden-text host written from real paragraphs, a calendar
trap), serves it from this process and crawls it with ``scrapy crawl web`` in another,
twice in one run:

- **ours**: the defaults, ``max_pages`` 6,000;
- **naive** (the baseline the issue "Real pages" measured us against): the same spider,
  politeness and page budget, with Scrapy's global breadth-first queue and none of the
  defences (no frontier budgets, no spam verdicts, no mirror detection, the links of
  duplicates followed), its mirrors found the way an exact-hash crawler finds them: two
  hosts are mirrors when at least ``NAIVE_MIN_SHARED`` of their pages have byte-identical
  bodies, aligned at the longest common path suffix of those pages.

Scored from the store (mirror pairs, spam verdicts) and from the server's request log
(every request it answered: robots.txt, cloaking checks and validation fetches
included):

- ``mirror_host_f1``: F1 of the unordered host pairs reported as mirrors (level full or
  partial) against the truth's; ``prefix_f1``: the same, a pair counting only when both
  of its URL roots (host and path prefix) are the truth's;
- ``spam_f1``, ``good_hosts_flagged``: spam hosts flagged against the truth's spam hosts
  and good hosts;
- ``waste``: the share of requests that went to spam hosts and into trap spaces
  (the calendar, entries included);
- ``pages_s``: requests answered per second of the crawl.

Names outside the world (the real pages link to the real web) fail without a DNS query
(``RESOLVE_ONLY_HOSTS_FILE``). Per-kind mirror recall is printed too.

    python benchmarks/realworld.py [--seed 0] [--max-pages 6000] [--runs 1] [--no-baseline] [--small]

Last line: ``mirror_host_f1=.. prefix_f1=.. spam_f1=.. good_hosts_flagged=.. waste=..
pages_s=..`` (medians over the runs), then the baseline's ``naive_mirror_host_f1``,
``naive_prefix_f1``, ``naive_waste``, ``naive_pages_s``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.report.document import build_report  # noqa: E402
from mirrorscope.sandbox import SandboxServer, World, build_real_world  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

#: Byte-identical pages two hosts must share for the naive crawler to call them mirrors.
NAIVE_MIN_SHARED = 5
NAIVE = (
    "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue",
    "-s", 'SPIDER_MIDDLEWARES={"mirrorscope.crawler.frontier.FrontierMiddleware": null, "mirrorscope.crawler.spam.SpamGraphMiddleware": null}',
    "-s", "SPAM_DETECTION_ENABLED=False", "-s", "CLOAKING_CHECK_ENABLED=False", "-s", "FRONTIER_ADMISSION=False",
    "-s", "MIRROR_DETECTION_ENABLED=False", "-s", "EXPAND_DUPLICATES=True",
)


def name(host: str) -> str:
    return host.split(":")[0]


def root(url: str) -> str:
    """A URL root as the truth writes it, without the port: host + path prefix."""
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path or '/'}"


def f1(found: set, true: set) -> float:
    hits = len(found & true)
    return 2 * hits / (len(found) + len(true)) if found or true else 1.0


def crawl(world_dir: Path, db: str, max_pages: int, extra: tuple[str, ...], timeout: float) -> float:
    """Run one crawl; its wall time in seconds."""
    command = [
        sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={world_dir / 'seeds.txt'}", "-a", f"max_pages={max_pages}",
        "-s", f"HOSTS_FILE={world_dir / 'hosts'}", "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", "RESOLVE_ONLY_HOSTS_FILE=True",
        "-s", f"DATABASE_URL={db}", "-s", "LOG_LEVEL=WARNING", *extra,
    ]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"crawl failed ({result.returncode}): {result.stderr[-2000:]}")
    return time.monotonic() - started


def waste(log: list[tuple[float, str, str]], truth: dict[str, Any]) -> float:
    spam = {name(h) for h in truth["spam_hosts"]}
    traps = {name(h): tuple(p) for h, p in truth["trap_hosts"].items() if name(h) not in spam}
    wasted = sum(1 for _, host, path in log if host in spam or path.startswith(traps.get(host, ("\0",))))
    return wasted / max(1, len(log))


def truth_pairs(truth: dict[str, Any]) -> tuple[dict[frozenset, str], set[frozenset]]:
    """(host pair -> kind, the pairs of URL roots) of the truth's mirrors."""
    kinds = {frozenset(name(urlsplit(u).netloc) for u in (m["a"], m["b"])): m.get("kind", "mirror") for m in truth["mirrors"]}
    roots = {frozenset(root(u) for u in (m["a"], m["b"])) for m in truth["mirrors"]}
    return kinds, roots


def score(pairs: list[tuple[str, str]], flagged: set[str], truth: dict[str, Any]) -> dict[str, Any]:
    kinds, true_roots = truth_pairs(truth)
    hosts = {frozenset(name(urlsplit(u).netloc) for u in pair) for pair in pairs}
    roots = {frozenset(root(u) for u in pair) for pair in pairs}
    spam, good = {name(h) for h in truth["spam_hosts"]}, {name(h) for h in truth["good_hosts"]}
    recall: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pair, kind in kinds.items():
        recall[kind][0] += pair in hosts
        recall[kind][1] += 1
    return {
        "mirror_host_f1": f1(hosts, set(kinds)), "prefix_f1": f1(roots, true_roots),
        "spam_f1": f1(flagged, spam), "good_hosts_flagged": len(flagged & good),
        "false_pairs": sorted(" ~ ".join(sorted(p)) for p in hosts - set(kinds)),
        "recall_by_kind": {k: f"{found}/{total}" for k, (found, total) in sorted(recall.items())},
    }


def ours(db: str, truth: dict[str, Any]) -> dict[str, Any]:
    store = Store(db)
    try:
        report = build_report(store)
    finally:
        store.close()
    pairs = [(m["a"], m["b"]) for m in report["mirrors"] if m["level"] != "none"]
    return score(pairs, {name(v["host"]) for v in report["spam_hosts"]}, truth)


def naive_pairs(db: str) -> list[tuple[str, str]]:
    """Host pairs sharing >= NAIVE_MIN_SHARED byte-identical pages, aligned at the longest
    common path suffix of their first shared page."""
    store = Store(db)
    try:
        pages = [p for p in store.pages() if p["outcome"] == "ok" and p["fingerprint"] is not None]
    finally:
        store.close()
    by_body: dict[int, list[str]] = defaultdict(list)
    for page in pages:
        by_body[page["fingerprint"]].append(page["url"])
    shared: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, str]] = {}
    for urls in by_body.values():
        for i, a in enumerate(urls):
            for b in urls[i + 1 :]:
                ha, hb = urlsplit(a).netloc, urlsplit(b).netloc
                if ha != hb:
                    key = (a, b) if ha < hb else (b, a)
                    hosts = (urlsplit(key[0]).netloc, urlsplit(key[1]).netloc)
                    shared[hosts] += 1
                    example.setdefault(hosts, key)
    pairs = []
    for hosts, count in shared.items():
        if count >= NAIVE_MIN_SHARED:
            a, b = (urlsplit(u).path for u in example[hosts])
            common = os.path.commonprefix([a[::-1], b[::-1]])[::-1]
            common = common[common.find("/"):] if "/" in common else "/"
            pairs.append((f"http://{hosts[0]}{a[: len(a) - len(common) + 1]}", f"http://{hosts[1]}{b[: len(b) - len(common) + 1]}"))
    return pairs


def run(world: World, server: SandboxServer, truth: dict[str, Any], world_dir: Path, max_pages: int, naive: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="realworld-") as tmp:
        db = f"sqlite:///{tmp}/store.db"
        server.reset_stats()
        seconds = crawl(world_dir, db, max_pages, NAIVE if naive else (), timeout=3600)
        log = server.request_log()
        if naive:
            scored = score(naive_pairs(db), set(), truth)
        else:
            scored = ours(db, truth)
    return scored | {"waste": waste(log, truth), "pages_s": len(log) / seconds, "requests": len(log), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-pages", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=1, help="crawls of ours (medians)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the naive crawl")
    parser.add_argument("--small", action="store_true", help="the small real world (23 hosts)")
    args = parser.parse_args()
    started = time.monotonic()
    world = build_real_world(args.seed, small=args.small)
    with SandboxServer(world, port=0) as server, tempfile.TemporaryDirectory(prefix="realworld-world-") as tmp:
        truth = world.ground_truth(server.port)
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        print(f"world: {len(world.hosts)} hosts, {truth['counts']['pages']} bounded URLs, {len(truth['mirrors'])} mirror pairs, "
              f"{len(truth['spam_hosts'])} spam hosts; built and walked in {time.monotonic() - started:.1f} s; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
        results = []
        for i in range(args.runs):
            results.append(run(world, server, truth, world_dir, args.max_pages, naive=False))
            print(f"ours #{i + 1}: " + json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in results[-1].items()}), flush=True)
        baseline = None if args.no_baseline else run(world, server, truth, world_dir, args.max_pages, naive=True)
        if baseline is not None:
            print("naive: " + json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in baseline.items()}), flush=True)
    keys = ("mirror_host_f1", "prefix_f1", "spam_f1", "good_hosts_flagged", "waste", "pages_s")
    print(f"{'figure':22s} {'ours':>10s} {'naive':>10s}")
    for key in (*keys, "requests", "seconds"):
        median = statistics.median(r[key] for r in results)
        print(f"{key:22s} {median:10.4g} {baseline[key] if baseline else float('nan'):10.4g}")
    last = " ".join(f"{k}={statistics.median(r[k] for r in results):.4g}" for k in keys)
    if baseline is not None:
        last += " " + " ".join(f"naive_{k}={baseline[k]:.4g}" for k in ("mirror_host_f1", "prefix_f1", "waste", "pages_s"))
    print(last)


if __name__ == "__main__":
    main()
