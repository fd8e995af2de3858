"""Mirror detection end to end on the harder sandbox, scored against its ground truth.

Crawls the sandbox (``build_world(0, hard_mirrors=True)``) twice with ``scrapy crawl web``:
mirror-aware (the defaults: duplicates' links not followed, mirrors validated and their
copies refused) and plain (every link followed, no mirror detection). Prints, from the
mirror-aware crawl's store:

- each feature set's and the combined ranking's precision and recall at each rank;
- candidate recall and candidates per true mirror pair;
- the reported mirrors' host-pair precision and recall, prefixes right, decoys reported,
  validation fetches per side;
- pages fetched on mirror sides in both crawls, and pages with original content lost.

    python benchmarks/mirror_sandbox.py [-s NAME=VALUE ...]   (settings for the mirror-aware crawl)

Last line: ``precision=P recall=R prefix_right=F level_right=L decoys=D candidate_recall=C
candidates_per_true_pair=K mirror_pages_saved=S unique_lost=U``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.report.document import build_report  # noqa: E402
from mirrorscope.sandbox.scoring import score_mirrors  # noqa: E402
from mirrorscope.jobs.mirrors import HostView  # noqa: E402
from mirrorscope.sandbox import SandboxServer, build_world, is_copied  # noqa: E402
from mirrorscope.detectors.mirrors import candidate_pairs, feature_rankings  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402


def crawl(seeds: Path, hosts: Path, db: str, *settings: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={seeds}", "-s", f"HOSTS_FILE={hosts}",
         "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", f"DATABASE_URL={db}", "-s", "LOG_LEVEL=ERROR", *settings],
        cwd=ROOT, check=True, capture_output=True,
    )


def pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset(h.split(":")[0] for h in (a, b))


def ranking_table(view: HostView, truth: dict) -> None:
    true = {pair_key(m["a"].split("/")[2], m["b"].split("/")[2]) for m in truth["mirrors"]}
    rankings = feature_rankings(view.profiles(), None)
    rankings["combined"] = candidate_pairs(view.profiles(), 10, min_score=0.0)
    ranks = (1, 2, 4, 8, 12, 16, 24, 32)
    print(f"{'feature set':<14}" + "".join(f"  P@{r:<3} R@{r:<3}" for r in ranks))
    for name, ranked in rankings.items():
        hits = [pair_key(p.a, p.b) in true for p in ranked]
        cells = []
        for r in ranks:
            found = sum(hits[:r])
            cells.append(f"  {found / min(r, max(len(hits), 1)):.2f}  {found / len(true):.2f} ")
        print(f"{name:<14}" + "".join(cells))


def main() -> None:
    world = build_world(0, hard_mirrors=True)
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(world, port=0) as server:
        truth = world.ground_truth(server.port)
        hosts, seeds = Path(tmp, "hosts"), Path(tmp, "seeds")
        hosts.write_text(world.hosts_file_text())
        seeds.write_text("\n".join(truth["seeds"]) + "\n")
        aware, plain = f"sqlite:///{tmp}/aware.db", f"sqlite:///{tmp}/plain.db"
        crawl(seeds, hosts, aware, *sys.argv[1:])
        crawl(seeds, hosts, plain, "-s", "EXPAND_DUPLICATES=True", "-s", "MIRROR_DETECTION_ENABLED=False")
        store = Store(aware)
        report = build_report(store)
        view = HostView.from_store(store)
        aware_urls = {p["url"] for p in store.pages() if p["outcome"] not in ("mirrored-not-fetched", "robots")}
        validation = store.runs()[0]["stats"].get("mirrorscope/mirror_validation_fetches", 0)
        store.close()
        store = Store(plain)
        plain_urls = {p["url"] for p in store.pages() if p["outcome"] != "robots"}
        store.close()

    print("precision and recall at rank, per feature set and combined (mirror-aware crawl's store):")
    ranking_table(view, truth)
    true = {pair_key(m["a"].split("/")[2], m["b"].split("/")[2]) for m in truth["mirrors"]}
    candidates = candidate_pairs(view.profiles(), 10)
    candidate_recall = len({pair_key(p.a, p.b) for p in candidates} & true) / len(true)
    per_pair = len(candidates) / len(true)
    scored = score_mirrors(report["mirrors"], truth)
    print(f"candidates: {len(candidates)} for {len(true)} true pairs ({per_pair:.1f} per pair), candidate recall {candidate_recall:.3f}")
    print(f"reported: {scored}; validation fetches {validation} for {len(report['mirrors'])} mirror pairs")
    expected = set(truth["pages"])
    mirror_side = {u for u in expected if is_copied(u, truth["hosts"])}
    unique = expected - mirror_side
    fetched_aware, fetched_plain = len(mirror_side & aware_urls), len(mirror_side & plain_urls)
    saved = 1 - fetched_aware / fetched_plain if fetched_plain else 0.0
    lost = len(unique - aware_urls) / len(unique)
    print(f"mirror-side pages fetched: plain {fetched_plain}, mirror-aware {fetched_aware} ({saved:.0%} fewer); "
          f"original pages lost: {len(unique - aware_urls)} of {len(unique)}")
    print(
        f"precision={scored['precision']} recall={scored['recall']} "
        f"prefix_right={scored['prefix_right'] / max(scored['found'], 1):.2f} level_right={scored['level_right'] / max(scored['found'], 1):.2f} "
        f"decoys={scored['decoys_reported']} "
        f"candidate_recall={candidate_recall:.3f} candidates_per_true_pair={per_pair:.1f} "
        f"mirror_pages_saved={saved:.2f} unique_lost={lost:.3f}"
    )


if __name__ == "__main__":
    main()
