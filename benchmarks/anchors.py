"""Benchmark: anchor-bag signatures, ExtractSimilarPairs and CENTER at a million bags.

Haveliwala, Gionis and Indyk (WebDB 2000) with the paper's m = 80, k = 3, l = 125 and
the 20% filter (``detectors.anchors``, ``detectors.anchor_lsh``), on synthetic bags:

* a vocabulary of 100,000 terms drawn Zipf-Mandelbrot, P(rank r) ~ 1 / (r + shift): with
  shift 20 a Zipfian tail with the flatter head that anchor words keep once stopwords are
  gone (the commonest term lands in 18% of bags); with shift 0, pure Zipf, where it lands
  in 90% of them, a harsher test. Both run, each on its own bags (``--shifts 20 0``);
* bag sizes 10 to 59 term occurrences (1% of bags ten times that: popular pages);
* planted groups of 2 to 4 bags (``--groups``): a base bag and copies of it with a
  fraction f ~ U(0, 0.5) of their occurrences redrawn.

Scored against a similarity recomputed without the module's code: from the raw term
counts, tf x log(N / df) in floating point (no quantisation, no cap), N and df counted
here, and the weighted Jaccard sum min / sum max of each pair. Recall is the share of
planted pairs at that similarity >= 0.5 that the pipeline keeps (``recall_module``: the
same on the module's own quantised weights, the earlier figure); precision is measured on
a uniform sample of the kept pairs (``--sample``, 20,000): the share whose similarity is
at least the 20% filter's level (``precision``) and at least 0.5 (``precision_05``).

Timed (median of ``--runs``): idf snapshot, multiplicities, signatures, pair extraction
and CENTER, from term-count bags in CSR form. Peak RSS is the process's
(``resource.getrusage``, every data set generated included), in GB of 10^9 bytes. Last
line: ``bags=N seconds=S peak_rss_gb=G recall=R recall_module=.. precision=P
precision_05=..`` for the first shift, the same prefixed ``shift0_`` for pure Zipf, and
the load average.

Run: ``.venv/bin/python benchmarks/anchors.py [--bags 1000000] [--runs 3] [--shifts 20 0]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
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


def weighted_jaccard(bags: Bags, weight: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum_t min(w_a, w_b) / sum_t max(w_a, w_b) of rows a[p] and b[p], where ``weight``
    gives the weights of bag entries (by index): with integer multiplicities, the Jaccard
    similarity of the expanded multisets."""
    pair = np.arange(a.size)
    sides = []
    for rows in (a, b):
        lengths = bags.sizes[rows]
        entries = np.repeat(bags.offsets[rows], lengths) + ramp(lengths)
        sides.append((np.repeat(pair, lengths), bags.term_ids[entries], weight(entries)))
    owner = np.concatenate((sides[0][0], sides[1][0]))
    term = np.concatenate((sides[0][1], sides[1][1]))
    value = np.concatenate((sides[0][2], sides[1][2])).astype(np.float64)
    order = np.lexsort((term, owner))
    owner, term, value = owner[order], term[order], value[order]
    # Each term is at most once per side: equal neighbours are the shared terms.
    shared = np.flatnonzero((owner[1:] == owner[:-1]) & (term[1:] == term[:-1]))
    smaller = np.bincount(owner[shared], weights=np.minimum(value[shared], value[shared + 1]), minlength=a.size)
    total = np.bincount(owner, weights=value, minlength=a.size)
    return smaller / (total - smaller)


def independent_similarity(bags: Bags, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The paper's similarity from the raw term counts, without the module's code: tf x
    log(N / df) in floating point (no quantisation, no cap), N the bags with a term and df
    counted here, then the weighted Jaccard of rows a[p] and b[p]."""
    df = np.bincount(bags.term_ids, minlength=VOCABULARY).astype(np.float64)
    n = np.count_nonzero(np.diff(bags.offsets))
    idf = np.log(n / np.maximum(df, 1.0))
    return weighted_jaccard(bags, lambda entries: bags.counts[entries] * idf[bags.term_ids[entries]], a, b)


def pair_hits(pairs: SimilarPairs, n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of the pairs (a[p], b[p]) were found, and the index of each in ``pairs``."""
    found = pairs.first.astype(np.uint64) * np.uint64(n) + pairs.second.astype(np.uint64)
    wanted = a.astype(np.uint64) * np.uint64(n) + b.astype(np.uint64)
    order = np.argsort(found)
    where = np.minimum(np.searchsorted(found[order], wanted), max(found.size - 1, 0))
    if not found.size:
        return np.zeros(a.size, dtype=bool), where
    return found[order][where] == wanted, order[where]


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


def evaluate(args: argparse.Namespace, shift: float) -> dict[str, float]:
    """Generate the bags at one Zipf shift, time the pipeline ``--runs`` times, score it."""
    groups = args.groups if args.groups is not None else args.bags // 20
    t = time.perf_counter()
    bags, planted_a, planted_b = generate(args.bags, groups, shift, args.seed)
    term_keys = mix64(np.arange(VOCABULARY, dtype=np.uint64))
    commonest = np.bincount(bags.term_ids, minlength=VOCABULARY).max() / len(bags)
    print(
        f"shift {shift:g}: generated {len(bags):,} bags, {bags.term_ids.size:,} (bag, term) entries, "
        f"{int(bags.counts.sum()):,} occurrences, {planted_a.size:,} planted pairs in {time.perf_counter() - t:.1f} s; "
        f"the commonest term is in {commonest:.0%} of the bags"
    )
    runs = []
    for _ in range(args.runs):
        times, weighted, pairs, centres = run(bags, term_keys)
        runs.append(times)
        print("  " + "  ".join(f"{k}={v:.1f}s" for k, v in times.items()), flush=True)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}

    elements = int(weighted.counts.sum())
    print(f"  elements after tf-idf expansion: {elements:,} ({elements / len(bags):.0f} per bag)")
    module = weighted_jaccard(weighted, weighted.counts.__getitem__, planted_a, planted_b)
    exact = independent_similarity(bags, planted_a, planted_b)
    print(f"  planted pairs, the module's quantised similarity - the independent one: mean "
          f"{(module - exact).mean():+.4f}, mean absolute {np.abs(module - exact).mean():.4f}")  # fmt: skip
    hit, index = pair_hits(pairs, len(bags), planted_a, planted_b)
    for lo, hi in ((0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
        band = (exact >= lo) & (exact < hi)
        if band.any():
            print(f"  planted pairs at independent similarity [{lo}, {min(hi, 1.0)}): {int(band.sum()):,}, "
                  f"found {hit[band].mean():.4f}")  # fmt: skip
    if hit.any():
        error = pairs.similarity[index[hit]] - exact[hit]
        print(f"  estimate - independent similarity on found planted pairs: mean {error.mean():+.4f}, std {error.std():.4f}")

    # Precision: a uniform sample of the pairs the pipeline kept, their similarity
    # recomputed independently.
    rng = np.random.default_rng(args.seed + 1)
    sample = rng.choice(len(pairs), size=min(args.sample, len(pairs)), replace=False) if len(pairs) else np.zeros(0, int)
    sampled = independent_similarity(bags, pairs.first[sample], pairs.second[sample])
    kept_at = DEFAULT_PARAMS.min_agreement
    precision = float((sampled >= kept_at).mean()) if sample.size else float("nan")
    precision_half = float((sampled >= 0.5).mean()) if sample.size else float("nan")
    quartiles = np.percentile(sampled, [5, 25, 50, 75]) if sample.size else [float("nan")] * 4
    print(f"  precision on {sample.size:,} sampled kept pairs (of {len(pairs):,}): {precision:.4f} at independent "
          f"similarity >= {kept_at} (the filter's level), {precision_half:.4f} at >= 0.5; their similarity's "
          f"5/25/50/75th percentiles " + "/".join(f"{q:.3f}" for q in quartiles))  # fmt: skip
    sizes = np.bincount(centres, minlength=len(bags))
    print(f"  pairs kept: {len(pairs):,}; clusters of 2+: {int((sizes > 1).sum()):,}, largest {int(sizes.max(initial=0))}")
    print("  median stages: " + "  ".join(f"{k}={v:.1f}s" for k, v in median.items()))
    target = exact >= 0.5
    on_module = module >= 0.5
    return {
        "seconds": median["total"],
        "recall": float(hit[target].mean()) if target.any() else float("nan"),
        "recall_module": float(hit[on_module].mean()) if on_module.any() else float("nan"),
        "precision": precision,
        "precision_05": precision_half,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bags", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=None, help="planted groups (default bags / 20)")
    parser.add_argument("--shifts", type=float, nargs="+", default=[20.0, 0.0], help="Zipf-Mandelbrot shifts (0: pure Zipf)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", type=int, default=20_000, help="kept pairs sampled for precision")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(f"load average at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    results = {shift: evaluate(args, shift) for shift in args.shifts}
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    load_end = os.getloadavg()
    first, *others = args.shifts
    line = [f"bags={args.bags}"] + [f"{k}={v:.{1 if k == 'seconds' else 4}f}" for k, v in results[first].items()]
    line.insert(2, f"peak_rss_gb={peak_gb:.2f}")
    for shift in others:
        line += [f"shift{shift:g}_{k}={v:.{1 if k == 'seconds' else 4}f}" for k, v in results[shift].items()]
    print(" ".join(line) + f" load_avg={load_start[0]:.2f}-{load_end[0]:.2f}")


if __name__ == "__main__":
    main()
