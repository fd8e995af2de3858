"""Benchmark: the HTML report's size and render time, on the demo world and on a store of
10,000 hosts, against the JSON report of the same store (the baseline: the format that
existed before, reading the same store).

* demo: ``mirror-report demo --format html`` (the full sandbox world, crawled once into a
  temporary store), then the report rendered again from that store.
* 10k: a store of ``--hosts`` hosts (10,000) built with the store's own writes
  (``Store.write_pages``, ``replace_mirrors``, ...): ``--pages`` pages a host (3), each
  linking 5 others, sketched by ``detectors.sketch``; one host in ten the mirror of
  another (full copies: identical pages, clusters of two), 3% spam hosts, 0.2% traps
  (30 unfetched calendar links each), 3,000 similar URL pairs. Its near-duplicate
  clusters are the mirrored pages'.

Timed (median of ``--runs``): ``html`` = the report document + its evidence
(``report.evidence``) + ``render_html``, what ``mirror-report --format html`` does after
opening the store; ``json`` = the document + ``render_json``. Sizes in bytes of UTF-8.
Last line: ``html_bytes_demo=.. html_bytes_10k=.. render_s_10k=.. json_bytes_10k=..
json_s_10k=.. load=..``.

Run: ``.venv/bin/python benchmarks/report.py [--hosts 10000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirrorscope.crawler.pipelines import sketch_record  # noqa: E402
from mirrorscope.detectors.sketch import DocumentSketch, sketch_many  # noqa: E402
from mirrorscope.report.document import build_report  # noqa: E402
from mirrorscope.report.evidence import report_with_evidence  # noqa: E402
from mirrorscope.report.html import render_html  # noqa: E402
from mirrorscope.report.render import render_json  # noqa: E402
from mirrorscope.storage.records import LinkRecord, PageRecord  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

VOCABULARY = 5_000
WORDS_PER_PAGE = 300
LINKS_PER_PAGE = 5
MIRROR_SHARE, SPAM_SHARE, TRAP_SHARE = 0.1, 0.03, 0.002
TRAP_LINKS = 30
SIMILAR_PAIRS = 3_000


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _page(url: str, host: str, ip: str, words: list[str], links: list[LinkRecord], sketch: DocumentSketch, **fields: Any) -> PageRecord:
    return PageRecord(
        url=url, host=host, hostname=host, port=None, path="/" + url.split("/", 3)[-1], depth=1, outcome="ok",
        fetched_at=datetime.now(timezone.utc), status=200, ip=ip, registrable_domain=host,
        title=" ".join(words[:8]), links=links, sketch=sketch_record(sketch), fingerprint=sketch.fingerprint, **fields,
    )


def build_store(url: str, hosts: int, pages: int, seed: int = 0) -> None:
    """The synthetic store of the module docstring."""
    rng = np.random.default_rng(seed)
    names = [f"host{i:05d}.example.org" for i in range(hosts)]
    mirrored = int(hosts * MIRROR_SHARE)
    # Host i < mirrored copies host mirrored + i: same paths, same words.
    texts = {name: [[f"w{t}" for t in rng.integers(0, VOCABULARY, WORDS_PER_PAGE)] for _ in range(pages)] for name in names[mirrored:]}
    for i in range(mirrored):
        texts[names[i]] = texts[names[mirrored + i]]
    spam = set(names[mirrored * 2 : mirrored * 2 + int(hosts * SPAM_SHARE)])
    traps = names[-int(hosts * TRAP_SHARE) :]
    store = Store(url)
    try:
        for start in range(0, hosts, 500):
            chunk = names[start : start + 500]
            docs = [words for name in chunk for words in texts[name]]
            sketches = iter(sketch_many(docs))
            records = []
            for number, name in enumerate(chunk, start):
                ip = f"10.{number // 250 % 250}.{number % 250}.1"
                for p, words in enumerate(texts[name]):
                    targets = [f"http://{names[j]}/p{int(rng.integers(pages))}.html" for j in rng.integers(0, hosts, LINKS_PER_PAGE)]
                    if name in traps:
                        targets += [f"http://{name}/calendar/2026/{m:02d}/{d:02d}/" for m in (11, 12) for d in range(1, TRAP_LINKS // 2 + 1)]
                    links = [LinkRecord(t, t.split("/")[2], " ".join(words[k : k + 2]), " ".join(words[k + 2 : k + 6]), "") for k, t in enumerate(targets)]
                    extra = {"spam_score": 0.9, "spam_reasons": ["keyword stuffing 0.4 >= 0.3"]} if name in spam else {}
                    records.append(_page(f"http://{name}/p{p}.html", name, ip, words, links, next(sketches), **extra))
            store.write_pages(records, None)
        ids = {row["url"]: row["id"] for row in store.pages()}
        clusters = [
            (ids[f"http://{names[mirrored + i]}/p{p}.html"], [ids[f"http://{names[mirrored + i]}/p{p}.html"], ids[f"http://{names[i]}/p{p}.html"]], True)
            for i in range(mirrored) for p in range(pages)
        ]
        store.replace_duplicate_clusters("broder", clusters, [], [])
        store.replace_mirrors(
            [{"url_a": f"http://{names[mirrored + i]}/", "url_b": f"http://{names[i]}/", "level": "full", "score": 0.9,
              "paths_checked": 2 * pages, "paths_matched": 2 * pages, "fraction_ab": 1.0, "fraction_ba": 1.0, "inferred": False,
              "features": {"content": 1.0, "paths": 1.0, "ip": 0.0}, "reasons": ["both directions >= 0.9"]} for i in range(mirrored)],
            [[(f"http://{names[mirrored + i]}/", True), (f"http://{names[i]}/", False)] for i in range(mirrored)],
        )
        verdict = {"score": 0.9, "pages": pages, "flagged": True, "features": {}}
        store.replace_host_verdicts(
            [{"host": h, "kind": "spam", "reasons": ["share of linking hosts that are spam 1 >= 1"], **verdict} for h in sorted(spam)]
            + [{"host": h, "kind": "trap", "reasons": ["calendar links on calendar pages 30 >= 20"], **verdict} for h in traps]
        )
        urls = sorted(ids)
        picks = rng.integers(0, len(urls), (SIMILAR_PAIRS, 2))
        similar = {tuple(sorted((urls[a], urls[b]))) for a, b in picks if a != b}
        store.replace_anchor_clusters([(a, b, round(float(s), 4)) for (a, b), s in zip(sorted(similar), rng.uniform(0.2, 1, len(similar)))], [])
    finally:
        store.close()


def timed(runs: int, work: Callable[[], str]) -> tuple[float, int]:
    """Median seconds of ``runs`` runs of ``work``, and the size of what it returned."""
    seconds, size = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        size = len(work().encode("utf-8"))
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), size


def rendered(url: str, build: Callable[[Store], dict[str, Any]], render: Callable[[dict[str, Any]], str]) -> str:
    """The report of the store at ``url``, built and rendered as ``mirror-report`` does."""
    store = Store(url, access="read")
    try:
        return render(build(store))
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=3, help="pages a host")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mirrorscope-report-bench-") as tmp:
        demo_url = f"sqlite:///{tmp}/demo.db"
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mirrorscope.report.cli", "demo", "--format", "html", "--output", f"{tmp}/demo.html",
                        "--db", demo_url], cwd=tmp, env=env, check=True, capture_output=True, timeout=600)
        print(f"demo world crawled and reported in {time.perf_counter() - started:.1f} s; load {load()}")
        demo_html_s, demo_html = timed(args.runs, lambda: rendered(demo_url, report_with_evidence, render_html))
        demo_json_s, demo_json = timed(args.runs, lambda: rendered(demo_url, build_report, render_json))
        big_url = f"sqlite:///{tmp}/big.db"
        started = time.perf_counter()
        build_store(big_url, args.hosts, args.pages)
        print(f"store of {args.hosts:,} hosts, {args.hosts * args.pages:,} pages built in {time.perf_counter() - started:.1f} s; load {load()}")
        big_html_s, big_html = timed(args.runs, lambda: rendered(big_url, report_with_evidence, render_html))
        big_json_s, big_json = timed(args.runs, lambda: rendered(big_url, build_report, render_json))
    end_load = load()
    print(f"{'':18}{'html bytes':>14}{'html s':>9}{'json bytes (baseline)':>24}{'json s':>9}")
    print(f"{'demo world':18}{demo_html:>14,}{demo_html_s:>9.2f}{demo_json:>24,}{demo_json_s:>9.2f}")
    print(f"{f'{args.hosts:,} hosts':18}{big_html:>14,}{big_html_s:>9.2f}{big_json:>24,}{big_json_s:>9.2f}")
    print(f"medians of {args.runs} runs; load average at the end {end_load}")
    print(
        f"html_bytes_demo={demo_html} html_bytes_10k={big_html} render_s_10k={big_html_s:.2f} "
        f"json_bytes_10k={big_json} json_s_10k={big_json_s:.2f} load={end_load.replace(' ', '/')}"
    )


if __name__ == "__main__":
    main()
