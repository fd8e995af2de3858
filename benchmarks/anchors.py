"""Benchmark: anchor-bag signatures, ExtractSimilarPairs and CENTER at a million bags.

Haveliwala, Gionis and Indyk (WebDB 2000) with the paper's m = 80, k = 3, l = 125 and
the 20% filter (``detectors.anchors``, ``detectors.anchor_lsh``), on synthetic bags:

* a vocabulary of 100,000 terms drawn Zipf-Mandelbrot, P(rank r) ~ 1 / (r + 20): a
  Zipfian tail with the flatter head that anchor words keep once stopwords are gone
  (the commonest term lands in 18% of bags; ``--shift 0`` gives pure Zipf, where it
  lands in 90% of them, a harsher test);
* bag sizes 10 to 59 term occurrences (1% of bags ten times that: popular pages);
* planted groups of 2 to 4 bags (``--groups``): a base bag and copies of it with a
  fraction f ~ U(0, 0.5) of their occurrences redrawn; the similarity of each planted
  pair is computed exactly on the weighted bags (Jaccard of the expanded multisets, what
  the signatures estimate), and recall is the share of planted pairs at similarity
  >= 0.5 that come out of the pipeline.

Timed (the figure in the last line, median of ``--runs``): idf snapshot, multiplicities,
signatures, pair extraction and CENTER, from term-count bags in CSR form. Peak RSS is
the process's (``resource.getrusage``), data generation included. Last line:
``bags=N seconds=S peak_rss_gb=G recall=R``.

Run: ``.venv/bin/python benchmarks/anchors.py [--bags 1000000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirrorscope.detectors.anchor_lsh import SimilarPairs, similar_pairs  # noqa: E402
from mirrorscope.detectors.anchor_bags import Bags, bags_from_arrays  # noqa: E402
from mirrorscope.detectors.anchors import DEFAULT_PARAMS  # noqa: E402
from mirrorscope.detectors.tfidf import Idf, multiplicities  # noqa: E402
from mirrorscope.detectors.weighted_minhash import minhash_signatures  # noqa: E402
from mirrorscope.detectors.center import center_clusters  # noqa: E402
from mirrorscope.detectors.lsh import mix64  # noqa: E402
from mirrorscope.detectors.runs import ramp  # noqa: E402

VOCABULARY = 100_000


def _sample_terms(rng: np.random.Generator, cdf: np.ndarray, count: int) -> np.ndarray:
    return np.searchsorted(cdf, rng.random(count), side="right").astype(np.int64)


def generate(n: int, groups: int, shift: float, seed: int) -> tuple[Bags, np.ndarray, np.ndarray]:
    """Term-count bags for rows 0..n-1 and the planted pairs (first < second)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(1, VOCABULARY + 1) + shift)
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    sizes = rng.integers(10, 60, n)
    sizes[rng.random(n) < 0.01] *= 10
    group_sizes = rng.integers(2, 5, groups)
    members = int(group_sizes.sum())
    if members > n:
        raise ValueError("more planted bags than bags")
    rows = rng.permutation(n)
    planted, background = rows[:members], rows[members:]
    # Background bags: fresh Zipf draws.
    bg_bag = np.repeat(background, sizes[background])
    bg_term = _sample_terms(rng, cdf, bg_bag.size)
    # Planted groups: member q of group g copies the base (the group's first row, whose
    # own size is used) and redraws a fraction f of the occurrences, f = 0 for the base.
    group_of = np.repeat(np.arange(groups), group_sizes)
    first_member = np.cumsum(group_sizes) - group_sizes
    base = planted[first_member]
    base_len = sizes[base]
    base_start = np.cumsum(base_len) - base_len
    base_terms = _sample_terms(rng, cdf, int(base_len.sum()))
    fraction = rng.uniform(0.0, 0.5, members)
    fraction[first_member] = 0.0
    member_len = base_len[group_of]
    pl_bag = np.repeat(planted, member_len)
    pl_term = base_terms[np.repeat(base_start[group_of], member_len) + ramp(member_len)]
    redraw = rng.random(pl_term.size) < np.repeat(fraction, member_len)
    pl_term[redraw] = _sample_terms(rng, cdf, int(redraw.sum()))
    bags = bags_from_arrays(np.concatenate((bg_bag, pl_bag)), np.concatenate((bg_term, pl_term)), include=np.arange(n))
    # Every pair inside each group.
    pair_group = np.repeat(np.arange(groups), group_sizes * (group_sizes - 1) // 2)
    within = ramp(group_sizes * (group_sizes - 1) // 2)
    # Pair index -> (a, b) with a < b inside a group of at most 4: a small lookup table.
    table_a = np.array([0, 0, 1, 0, 1, 2])
    table_b = np.array([1, 2, 2, 3, 3, 3])
    a = planted[first_member[pair_group] + table_a[within]]
    b = planted[first_member[pair_group] + table_b[within]]
    return bags, np.minimum(a, b), np.maximum(a, b)


def exact_similarity(weighted: Bags, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Jaccard similarity of the expanded multisets of rows a[p] and b[p]."""
    pair = np.arange(a.size)
    sides = []
    for rows in (a, b):
        lengths = weighted.sizes[rows]
        entries = np.repeat(weighted.offsets[rows], lengths) + ramp(lengths)
        sides.append((np.repeat(pair, lengths), weighted.term_ids[entries], weighted.counts[entries].astype(np.int64)))
    owner = np.concatenate((sides[0][0], sides[1][0]))
    term = np.concatenate((sides[0][1], sides[1][1]))
    count = np.concatenate((sides[0][2], sides[1][2]))
    order = np.lexsort((term, owner))
    owner, term, count = owner[order], term[order], count[order]
    # Each term is at most once per side: equal neighbours are the shared terms.
    shared = np.flatnonzero((owner[1:] == owner[:-1]) & (term[1:] == term[:-1]))
    intersection = np.zeros(a.size, dtype=np.int64)
    np.add.at(intersection, owner[shared], np.minimum(count[shared], count[shared + 1]))
    total = np.bincount(owner, weights=count, minlength=a.size)
    return intersection / (total - intersection)


def run(bags: Bags, term_keys: np.ndarray) -> tuple[dict[str, float], Bags, SimilarPairs, np.ndarray]:
    p = DEFAULT_PARAMS
    times = {}
    t0 = time.perf_counter()
    weighted = multiplicities(bags, term_keys, Idf.of(bags, term_keys), p.scale, p.cap)
    t1 = time.perf_counter()
    signatures = minhash_signatures(weighted, term_keys, p.m, p.seed)
    t2 = time.perf_counter()
    pairs = similar_pairs(signatures, p.k, p.l, p.min_agreement, p.max_group, p.lsh_seed)
    t3 = time.perf_counter()
    centres = center_clusters(len(bags), pairs.first, pairs.second, pairs.similarity)
    t4 = time.perf_counter()
    times.update(weights=t1 - t0, signatures=t2 - t1, pairs=t3 - t2, center=t4 - t3, total=t4 - t0)
    return times, weighted, pairs, centres


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bags", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=None, help="planted groups (default bags / 20)")
    parser.add_argument("--shift", type=float, default=20.0, help="Zipf-Mandelbrot shift (0: pure Zipf)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    groups = args.groups if args.groups is not None else args.bags // 20

    t = time.perf_counter()
    bags, planted_a, planted_b = generate(args.bags, groups, args.shift, args.seed)
    term_keys = mix64(np.arange(VOCABULARY, dtype=np.uint64))
    print(
        f"generated {len(bags):,} bags, {bags.term_ids.size:,} (bag, term) entries, "
        f"{int(bags.counts.sum()):,} occurrences, {planted_a.size:,} planted pairs "
        f"in {time.perf_counter() - t:.1f} s"
    )
    runs = []
    for _ in range(args.runs):
        times, weighted, pairs, centres = run(bags, term_keys)
        runs.append(times)
        print("  ".join(f"{k}={v:.1f}s" for k, v in times.items()), flush=True)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}

    elements = int(weighted.counts.sum())
    print(f"elements after tf-idf expansion: {elements:,} ({elements / len(bags):.0f} per bag)")
    similarity = exact_similarity(weighted, planted_a, planted_b)
    n = np.uint64(len(bags))
    found = pairs.first.astype(np.uint64) * n + pairs.second.astype(np.uint64)
    planted = planted_a.astype(np.uint64) * n + planted_b.astype(np.uint64)
    order = np.argsort(found)
    where = np.minimum(np.searchsorted(found[order], planted), max(found.size - 1, 0))
    hit = found[order][where] == planted if found.size else np.zeros(planted.size, dtype=bool)
    for lo, hi in ((0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
        band = (similarity >= lo) & (similarity < hi)
        if band.any():
            share = hit[band].mean()
            print(f"planted pairs at similarity [{lo}, {min(hi, 1.0)}): {int(band.sum()):,}, found {share:.4f}")
    if hit.any():
        error = pairs.similarity[order][where][hit] - similarity[hit]
        print(f"estimate - exact on found planted pairs: mean {error.mean():+.4f}, std {error.std():.4f}")
    sizes = np.bincount(centres, minlength=len(bags))
    print(f"pairs kept: {len(pairs):,}; clusters of 2+: {int((sizes > 1).sum()):,}, largest {int(sizes.max(initial=0))}")
    print("median stages: " + "  ".join(f"{k}={v:.1f}s" for k, v in median.items()))
    target = similarity >= 0.5
    recall = float(hit[target].mean()) if target.any() else float("nan")
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"bags={len(bags)} seconds={median['total']:.1f} peak_rss_gb={peak_gb:.2f} recall={recall:.4f}")


if __name__ == "__main__":
    main()
