"""Issue 18 item 4: a conditional re-crawl against an unconditional one, on the real
changing world.

Builds the changing world (``sandbox.changes``) from the real-page world
(``build_real_world``; ``--world small`` its small form, ``--world generated`` the
standard generated world), crawls version 0 once with the defaults (``scrapy crawl web``,
SQLite store, ``--max-pages`` 6000 as ``benchmarks/realworld.py``), copies the store, and
re-crawls version 1 from each copy (``-a recrawl=1``):

- ``conditional``: the stored validators sent (``If-None-Match`` / ``If-Modified-Since``),
  AutoThrottle letting a 304 lower a host's delay (``ConditionalAutoThrottle``);
- ``conditional_scrapy_throttle``: the same requests with Scrapy's AutoThrottle rule
  (only a 200 may lower the delay: ``AUTOTHROTTLE_304_LOWERS_DELAY=False``);
- ``unconditional`` (the baseline): no validators sent (``RECRAWL_CONDITIONAL=False``),
  every page fetched whole.

For each: wall seconds of the re-crawl, the 304s and the body bytes the server sent, the
requests it received, and the classification's accuracy against the world's truth (the
share of the stored pages whose recorded kind, and target for a move, is the truth's;
a page not classified counts as wrong), with each kind's count. ``--runs`` repeats the
three re-crawls (each from a fresh copy of the store) and prints medians.

    python benchmarks/recrawl.py [--world real|small|generated] [--max-pages 6000] [--runs 1]

Last line: ``conditional_s=.. unconditional_s=.. scrapy_throttle_s=.. not_modified=..
conditional_mb=.. unconditional_mb=.. accuracy=.. unconditional_accuracy=.. stored_pages=..
load_start=.. load_end=..``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from realworld import crawl  # noqa: E402

from mirrorscope.detectors.sketch import SCHEME  # noqa: E402
from mirrorscope.sandbox import SandboxServer, build_real_world, build_world  # noqa: E402
from mirrorscope.sandbox.changes import ChangingWorld, changing_world  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

VARIANTS: dict[str, tuple[str, ...]] = {
    "unconditional": ("-s", "RECRAWL_CONDITIONAL=False"),
    "conditional_scrapy_throttle": ("-s", "AUTOTHROTTLE_304_LOWERS_DELAY=False"),
    "conditional": (),
}


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def accuracy(changing: ChangingWorld, db: str, stored: list[str], port: int) -> tuple[float, Counter]:
    """Share of the stored pages classified as the truth has them, and the kinds recorded."""
    expected = changing.expected(0, stored, port)
    store = Store(db)
    try:
        recorded = {r["url"]: (r["kind"], r["moved_to"]) for r in store.page_changes(store.runs()[-1]["id"])}
    finally:
        store.close()
    right = sum(recorded.get(url) == truth for url, truth in expected.items())
    return right / max(1, len(expected)), Counter(kind for kind, _ in recorded.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", choices=("real", "small", "generated"), default="real")
    parser.add_argument("--max-pages", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    load_start = load()
    base = build_world(0, hostile=False) if args.world == "generated" else build_real_world(0, small=args.world == "small")
    changing = changing_world(base)
    figures: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}
    kinds: dict[str, Counter] = {}
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(changing.versions[0]) as server:
        work = Path(tmp)
        (work / "hosts").write_text(changing.versions[0].hosts_file_text())
        (work / "seeds.txt").write_text("\n".join(changing.versions[0].seeds(server.port)) + "\n")
        first = work / "first.db"
        seconds = crawl(work, f"sqlite:///{first}", args.max_pages, (), 1800)
        store = Store(f"sqlite:///{first}")
        stored = [row["url"] for row in store.stored_versions(SCHEME)]
        store.close()
        print(f"first crawl: {seconds:.1f} s, {len(stored)} pages with a sketch (load {load():.1f})", flush=True)
        server.world = changing.versions[1]
        for run in range(args.runs):
            for variant, extra in VARIANTS.items():
                copy = work / f"{variant}-{run}.db"
                shutil.copy(first, copy)
                server.reset_stats()
                # max_pages bounds new pages only: a re-crawl's stored pages are outside it.
                seconds = crawl(work, f"sqlite:///{copy}", args.max_pages, ("-a", "recrawl=1", *extra), 1800)
                share, counted = accuracy(changing, f"sqlite:///{copy}", stored, server.port)
                row = {
                    "seconds": seconds, "not_modified": sum(server.not_modified_by_host().values()),
                    "mb": sum(server.bytes_by_host().values()) / 1e6, "requests": sum(server.requests_by_host().values()),
                    "accuracy": share,
                }
                for key, value in row.items():
                    figures[variant].setdefault(key, []).append(value)
                kinds[variant] = counted
                print(f"{variant} run {run + 1}: " + " ".join(f"{k}={v:.4g}" for k, v in row.items())
                      + f" kinds={dict(counted)} (load {load():.1f})", flush=True)
    truth = Counter(kind for kind, _ in changing.expected(0, stored, server.port).values())
    print(f"truth over the {len(stored)} stored pages: {dict(truth)}")
    median = {v: {k: statistics.median(vals) for k, vals in f.items()} for v, f in figures.items()}
    print(f"{'figure':14s} " + " ".join(f"{v:>28s}" for v in VARIANTS))
    for key in ("seconds", "not_modified", "mb", "requests", "accuracy"):
        print(f"{key:14s} " + " ".join(f"{median[v][key]:28.4g}" for v in VARIANTS))
    c, u, s = median["conditional"], median["unconditional"], median["conditional_scrapy_throttle"]
    last: dict[str, Any] = {
        "conditional_s": round(c["seconds"], 1), "unconditional_s": round(u["seconds"], 1), "scrapy_throttle_s": round(s["seconds"], 1),
        "not_modified": int(c["not_modified"]), "conditional_mb": round(c["mb"], 2), "unconditional_mb": round(u["mb"], 2),
        "accuracy": round(c["accuracy"], 4), "unconditional_accuracy": round(u["accuracy"], 4), "stored_pages": len(stored),
        "load_start": load_start, "load_end": load(),
    }
    print(" ".join(f"{k}={v}" for k, v in last.items()))


if __name__ == "__main__":
    main()
