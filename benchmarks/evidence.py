"""Issue 18's evidence figures, items 1-3: the compact link graph, link-based spam, bottom-up mirrors.

Crawls the real-page world (``build_real_world``) and the sandbox's full world
(``build_full_world``) once each with the defaults (``scrapy crawl web``, SQLite store,
as ``benchmarks/realworld.py`` does), then on each store:

- **link graph** (``jobs.linkgraph.build_link_graph``): bytes per distinct page link of
  our graph (out- and in-lists with their list indexes; the URL table not counted)
  against a plain CSR of int64 in both directions (``8·E + 8·(N + 1)`` bytes each) and
  against the ``links`` table with its indexes on disk (per stored link row, and per
  distinct link); the URL table, held as plain strings, is printed apart (its UTF-8
  bytes per link: the notes' connectivity server front-codes it to ~9 bytes a URL); the build time from the store (reading included) and of the encoding
  alone, per million link rows, medians of ``--runs`` builds;
- **spam F1** of the host verdicts against the world's truth, the hosts judged again on
  the store (``jobs.spam.rejudge_spam``) without the link features (content and
  structure: the baseline) and with them (``judge_on_links``);
- **mirror recall** (item 3) of the offline mirror validation (``jobs.mirrors.detect_mirrors``)
  against the world's true host pairs, top-down alone (the baseline) and with the
  bottom-up candidates (``jobs.collections``: replicated collections grown from the
  ``broder`` near-duplicate clusters), and the false host pairs the bottom-up candidates
  add (target 0).

- **co-clustering** (item 5): seconds to co-cluster the store's term vectors as
  ``mirror-report detect`` does (``benchmarks/term_vectors.py`` ``cocluster_figures``:
  the tf·idf page-term matrix, k = 16, l = 32, 20 iterations), median of ``--runs``.

    python benchmarks/evidence.py [--seed 0] [--max-pages 6000] [--runs 3] [--worlds real,full]

Last line (real-page world): ``graph_bytes_per_link=.. csr_bytes_per_link=..
table_bytes_per_link=.. build_s_per_million_links=.. spam_f1_content=..
spam_f1_with_links=.. mirror_recall_topdown=.. mirror_recall_with_bottomup=..
mirror_new_false_pairs=.. collections=..``, then the full world's ``full_spam_f1_content=..
full_spam_f1_with_links=.. full_mirror_recall_topdown=..`` (and the other mirror figures),
the real-page world's ``cocluster_s=..`` and the load averages at start and end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from realworld import crawl, f1, name  # noqa: E402
from term_vectors import cocluster_figures  # noqa: E402

from mirrorscope.detectors.linkgraph import LinkGraph  # noqa: E402
from mirrorscope.jobs.collections import collection_candidates, detect_collections  # noqa: E402
from mirrorscope.jobs.duplicates import detect_duplicates  # noqa: E402
from mirrorscope.jobs.linkgraph import build_link_graph  # noqa: E402
from mirrorscope.jobs.mirrors import detect_mirrors  # noqa: E402
from mirrorscope.jobs.spam import rejudge_spam  # noqa: E402
from mirrorscope.sandbox import SandboxServer, World, build_full_world, build_real_world  # noqa: E402
from mirrorscope.sandbox.scoring import score_mirrors  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

WORLDS = {"real": build_real_world, "full": build_full_world}


def graph_figures(store: Store, runs: int) -> dict[str, float]:
    """Sizes and build times of the store's link graph (module docstring)."""
    rows = sum(len(sources) for sources, _ in store.link_chunks())
    builds, encodes = [], []
    for _ in range(runs):
        started = time.perf_counter()
        graph = build_link_graph(store)
        builds.append(time.perf_counter() - started)
        src, dst = graph.out.edges()
        started = time.perf_counter()
        LinkGraph(graph.urls, src, dst)
        encodes.append(time.perf_counter() - started)
    links, nodes = graph.links, len(graph)
    table = store.links_table_bytes()
    return {
        "urls": nodes, "link_rows": rows, "links": links,
        "graph_bytes_per_link": graph.nbytes / links,
        "out_bytes_per_link": graph.out.nbytes / links,
        "url_text_bytes_per_link": sum(len(url.encode()) for url in graph.urls) / links,
        "csr_bytes_per_link": 2 * (8 * links + 8 * (nodes + 1)) / links,
        "table_bytes_per_link": table / links if table is not None else float("nan"),
        "table_bytes_per_row": table / rows if table is not None else float("nan"),
        "build_s_per_million_links": statistics.median(builds) / rows * 1e6,
        "encode_s_per_million_links": statistics.median(encodes) / links * 1e6,
    }


def spam_figures(store: Store, truth: dict[str, Any]) -> dict[str, float]:
    """Spam F1 and good hosts flagged, judged without and with the link features."""
    spam, good = {name(h) for h in truth["spam_hosts"]}, {name(h) for h in truth["good_hosts"]}
    figures: dict[str, float] = {}
    for key, link_features in (("content", False), ("with_links", True)):
        rejudge_spam(store, link_features=link_features)
        flagged = {name(v["host"]) for v in store.host_verdicts("spam", flagged_only=True)}
        figures[f"spam_f1_{key}"] = f1(flagged, spam)
        figures[f"good_flagged_{key}"] = len(flagged & good)
    return figures


def mirror_figures(store: Store, truth: dict[str, Any]) -> dict[str, float]:
    """Issue 18 item 3: mirror recall of the offline validation, top-down alone and with the
    bottom-up candidates (replicated collections grown from the ``broder`` clusters), and
    the false host pairs the bottom-up candidates add."""
    detect_duplicates(store)
    started = time.perf_counter()
    found = detect_collections(store)
    collections_s = time.perf_counter() - started
    scores, false_pairs = {}, {}
    for key, candidates in (("topdown", ()), ("with_bottomup", collection_candidates(store.replicated_collections()))):
        detect_mirrors(store, collections=candidates)
        entries = [{"a": r["url_a"], "b": r["url_b"], "level": r["level"]} for r in store.mirror_pairs()]
        scores[key] = score_mirrors(entries, truth)
        true = {frozenset(name(urlsplit(u).netloc) for u in (m["a"], m["b"])) for m in truth["mirrors"]}
        false_pairs[key] = {frozenset(name(urlsplit(e[k]).netloc) for k in "ab") for e in entries} - true
    return {
        "collections": found["collections"], "collection_pages": found["pages"], "collections_s": collections_s,
        "mirror_true_pairs": scores["topdown"]["true_pairs"],
        "mirror_recall_topdown": scores["topdown"]["recall"] or 0.0,
        "mirror_recall_with_bottomup": scores["with_bottomup"]["recall"] or 0.0,
        "mirror_false_pairs_topdown": len(false_pairs["topdown"]),
        "mirror_new_false_pairs": len(false_pairs["with_bottomup"] - false_pairs["topdown"]),
    }


def measure(world: World, max_pages: int, runs: int) -> dict[str, float]:
    with SandboxServer(world, port=0) as server, tempfile.TemporaryDirectory(prefix="evidence-") as tmp:
        truth = world.ground_truth(server.port)
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        db = f"sqlite:///{tmp}/store.db"
        seconds = crawl(world_dir, db, max_pages, (), timeout=3600)
        store = Store(db)
        try:
            return {"crawl_s": seconds, "spam_hosts": len(truth["spam_hosts"]),
                    **graph_figures(store, runs), **spam_figures(store, truth), **mirror_figures(store, truth),
                    "cocluster_s": cocluster_figures(db, runs)["cocluster_s"]}
        finally:
            store.close()


def mirror_last_line(real: dict[str, float], full: dict[str, float]) -> list[str]:
    """The last line's mirror figures: the real-page world's, then the full world's."""
    keys = ("mirror_recall_topdown", "mirror_recall_with_bottomup", "mirror_new_false_pairs", "collections")
    return [f"{k}={real[k]:.4g}" for k in keys if k in real] + [f"full_{k}={full[k]:.4g}" for k in keys if k in full]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-pages", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=3, help="graph builds per world (medians)")
    parser.add_argument("--worlds", default="real,full", help="of: " + ",".join(WORLDS))
    args = parser.parse_args()
    load_start = os.getloadavg()
    results = {}
    for key in args.worlds.split(","):
        results[key] = measure(WORLDS[key](args.seed), args.max_pages, args.runs)
        print(f"{key}: " + " ".join(f"{k}={v:.4g}" for k, v in results[key].items()), flush=True)
    load_end = os.getloadavg()
    print(f"{'figure':28s} " + " ".join(f"{k:>12s}" for k in results))
    for figure in next(iter(results.values())):
        print(f"{figure:28s} " + " ".join(f"{r[figure]:12.4g}" for r in results.values()))
    real = results.get("real", {})
    keys = ("graph_bytes_per_link", "csr_bytes_per_link", "table_bytes_per_link", "build_s_per_million_links",
            "spam_f1_content", "spam_f1_with_links")
    last = [f"{k}={real[k]:.4g}" for k in keys if k in real]
    full = results.get("full", {})
    last += [f"full_{k}={full[k]:.4g}" for k in ("spam_f1_content", "spam_f1_with_links") if k in full]
    last += mirror_last_line(real, full)
    last += [f"cocluster_s={real['cocluster_s']:.4g}"] if "cocluster_s" in real else []
    last += [f"load_start={load_start[0]:.2f}", f"load_end={load_end[0]:.2f}"]
    print(" ".join(last))


if __name__ == "__main__":
    main()
