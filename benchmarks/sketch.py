"""Benchmark: our document sketch against datasketch's fastest MinHash, speed and accuracy.

On at least 500 real multi-kilobyte HTML pages (Debian's python3.11-doc, in
/usr/share/doc/python3.11/html: ``apt-get install python3.11-doc``; without it, pages of
the project's sandbox world), the stages run side by side, each run interleaving them so
machine noise hits all alike; figures are medians of the runs:

a. lxml parse + canonicalise: ``detectors.canonical.canonical_tokens`` on each page;
b. our full sketch from those tokens: shingles and their polynomial fingerprints, MIN_s
   (s = 200), MOD_m (m = 25), the 84-value signature, super-shingles and the document
   fingerprint (``sketch_many``; nothing is kept between calls, so every run hashes every
   token's bytes; timed again one page per call with ``sketch_tokens``);
c. datasketch at the size of our signature, 84 hash values, in the fastest configuration
   its documentation gives: ``MinHash.bulk`` (one set of permutations for all pages) with
   a fast non-cryptographic ``hashfunc`` passed as the C function itself, each of
   xxhash's ``xxh32_intdigest``, mmh3's ``mmh3_32_uintdigest`` and pyfarmhash's ``hash32``
   (datasketch's docstring names farmhash, its 1.4 notes mmh3), over the same 10-word
   shingles built the cheaper of two ways (``" ".join(window).encode()`` or
   ``b" ".join`` of pre-encoded tokens, timed alone too). The fastest of them by median
   is the baseline (``datasketch_config``); datasketch's default (SHA-1, 128
   permutations, ``MinHash()`` a page), the earlier baseline, is timed for reference.

Accuracy: at least 1,000 pairs of a real page and an edited copy of it (a share of its
words replaced by other words of the corpus, deleted or followed by an inserted word,
scattered or in blocks), chosen so that the exact resemblance, the Jaccard index of the
two 10-word shingle sets computed with Python sets of token tuples
(``detectors.shingles.shingle_set``), spreads evenly over 0.2-0.95 (15 bands of 0.05).
Each estimator's mean absolute error against it, at equal size: our 84-value signature
(``signature_agreement``) against datasketch with 84 permutations, our MIN_s estimator
(``resemblance_min_s``, s = 200: what the duplicate detector confirms with) against
datasketch with 200; and, at the detector's threshold 0.8, the pairs each puts on the
wrong side.

Last line: ``ours_docs_s=.. datasketch_docs_s=.. speedup_vs_datasketch=..
datasketch_config=.. mae_ours=.. mae_datasketch=.. sketch_vs_parse=..`` (mae_* at 84 hash
values), then the MIN_s figures, the speedup in CPU seconds, the pair count and the load
average.

Run: ``.venv/bin/python benchmarks/sketch.py [--runs 5] [--limit N] [--pairs 1200]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import farmhash  # noqa: E402
import mmh3  # noqa: E402
import xxhash  # noqa: E402
from datasketch import MinHash  # noqa: E402

from mirrorscope.detectors.canonical import canonical_tokens  # noqa: E402
from mirrorscope.detectors.shingles import shingle_set  # noqa: E402
from mirrorscope.detectors.sketch import (  # noqa: E402
    DEFAULT_PARAMS,
    resemblance_min_s,
    signature_agreement,
    sketch_many,
    sketch_tokens,
)

DOCS = Path("/usr/share/doc/python3.11/html")
MIN_PAGES = 500
MIN_BYTES = 2048
SIZE = DEFAULT_PARAMS.signature_size  # 84
#: datasketch's fast configurations at our signature's size: name -> hashfunc.
HASHES: dict[str, Callable[[bytes], int]] = {
    "xxh32": xxhash.xxh32_intdigest,
    "mmh3": mmh3.mmh3_32_uintdigest,
    "farmhash32": farmhash.hash32,
}
#: The near-duplicate threshold of the crawl's duplicate detector (``settings``).
THRESHOLD = 0.8
BANDS = np.round(np.arange(0.20, 0.951, 0.05), 2)


def load_pages(limit: int | None) -> tuple[str, list[str]]:
    if DOCS.is_dir():
        paths = sorted(p for p in DOCS.rglob("*.html") if p.stat().st_size >= MIN_BYTES)
        return str(DOCS), [p.read_text(encoding="utf-8", errors="replace") for p in paths][:limit]
    # Only without the Python docs: the sandbox's generated sites.
    from mirrorscope.sandbox.world import build_linkheavy_world, build_world

    pages = [
        resource.body.decode("utf-8", errors="replace")
        for world in (build_world(), build_linkheavy_world())
        for host in world.hosts
        for resource in host.resources.values()
        if resource.status == 200
        and (resource.content_type or "").startswith("text/html")
        and len(resource.body) >= MIN_BYTES
    ]
    return "sandbox worlds", pages[:limit]


def shingles_joined(tokens: list[str], w: int) -> list[bytes]:
    """The shingles as datasketch's users build them: each window joined, then encoded."""
    width = min(w, len(tokens))
    return [" ".join(tokens[i : i + width]).encode("utf-8") for i in range(max(1, len(tokens) - width + 1))]


def shingles_preencoded(tokens: list[str], w: int) -> list[bytes]:
    """The same bytes, each token encoded once and the windows joined as bytes."""
    encoded = [t.encode("utf-8") for t in tokens]
    width = min(w, len(tokens))
    return [b" ".join(encoded[i : i + width]) for i in range(max(1, len(tokens) - width + 1))]


#: CPU seconds of every timed stage, by stage, beside the wall-clock seconds the runs
#: return: on a shared machine CPU time is what other processes inflate least.
CPU: dict[str, list[float]] = {}


def timed(action: Callable[[], object], stage: str | None = None) -> tuple[float, object]:
    start, cpu = time.perf_counter(), time.process_time()
    result = action()
    if stage is not None:
        CPU.setdefault(stage, []).append(time.process_time() - cpu)
    return time.perf_counter() - start, result


def run_stages(pages: list[str], runs: int) -> tuple[dict[str, list[float]], list[list[str]]]:
    """Every stage's seconds per run, interleaved, and the pages' tokens."""
    w = DEFAULT_PARAMS.w
    times: dict[str, list[float]] = {}
    documents: list[list[str]] = []
    for run in range(runs):
        elapsed, documents = timed(lambda: [canonical_tokens(p) for p in pages], "parse")
        times.setdefault("parse", []).append(elapsed)

        times.setdefault("ours", []).append(timed(lambda: sketch_many(documents), "ours")[0])
        times.setdefault("ours_per_doc", []).append(timed(lambda: [sketch_tokens(t) for t in documents])[0])

        # The baseline's shingles: whichever way of building them is faster this run.
        joined, shingled = timed(lambda: [shingles_joined(t, w) for t in documents], "shingles_joined")
        preencoded, _ = timed(lambda: [shingles_preencoded(t, w) for t in documents], "shingles_preencoded")
        times.setdefault("shingles_joined", []).append(joined)
        times.setdefault("shingles_preencoded", []).append(preencoded)
        build = min(joined, preencoded)
        for name, hashfunc in HASHES.items():
            bulk, _ = timed(lambda: MinHash.bulk(shingled, num_perm=SIZE, hashfunc=hashfunc), f"bulk_{name}_{SIZE}_alone")
            CPU.setdefault(f"bulk_{name}_{SIZE}", []).append(
                min(CPU["shingles_joined"][-1], CPU["shingles_preencoded"][-1]) + CPU[f"bulk_{name}_{SIZE}_alone"][-1]
            )
            times.setdefault(f"bulk_{name}_{SIZE}", []).append(build + bulk)
            times.setdefault(f"bulk_{name}_{SIZE}_alone", []).append(bulk)

        def default_per_page() -> None:
            for tokens in documents:
                MinHash(num_perm=128).update_batch(shingles_joined(tokens, w))

        times.setdefault("default_sha1_128", []).append(timed(default_per_page)[0])
        print(f"run {run + 1}: " + "  ".join(f"{k}={v[-1]:.3f}s" for k, v in times.items()), flush=True)
    return times, documents


# --- accuracy -------------------------------------------------------------------------


def edit(tokens: list[str], rate: float, blocks: bool, vocabulary: list[str], rng: random.Random) -> list[str]:
    """A copy of ``tokens`` with about ``rate`` of its positions edited: replaced by a
    corpus word, deleted, or followed by an inserted word (a third each); scattered, or
    in runs of 5-40 positions when ``blocks``."""
    n = len(tokens)
    edited = np.zeros(n, dtype=bool)
    if blocks:
        target = int(rate * n)
        while edited.sum() < target:
            start, length = rng.randrange(n), rng.randint(5, 40)
            edited[start : start + length] = True
    else:
        edited = np.random.default_rng(rng.getrandbits(64)).random(n) < rate
    out: list[str] = []
    for token, hit in zip(tokens, edited.tolist()):
        if not hit:
            out.append(token)
            continue
        op = rng.randrange(3)
        if op == 0:
            out.append(rng.choice(vocabulary))
        elif op == 2:
            out += (token, rng.choice(vocabulary))
    return out


def exact_resemblance(a: list[str], b: list[str], w: int) -> float:
    sa, sb = shingle_set(a, w), shingle_set(b, w)
    return len(sa & sb) / len(sa | sb)


def make_pairs(documents: list[list[str]], wanted: int, seed: int) -> tuple[list[tuple[list[str], list[str]]], np.ndarray]:
    """``wanted`` (page, edited copy) pairs spread evenly over the resemblance bands."""
    w = DEFAULT_PARAMS.w
    rng = random.Random(seed)
    pool = [d for d in documents if len(d) >= 200]
    vocabulary = sorted({t for d in pool for t in d})
    quota = -(-wanted // (len(BANDS) - 1))
    filled = [0] * (len(BANDS) - 1)
    pairs, exact = [], []
    attempts = 0
    while min(filled) < quota and attempts < 40 * wanted:
        attempts += 1
        band = min(range(len(filled)), key=filled.__getitem__)  # aim at the emptiest band
        target = rng.uniform(BANDS[band], BANDS[band + 1])
        # Scattered edits at rate p keep a shingle with probability (1 - p)^w, so
        # r ~ q / (2 - q), q = (1 - p)^w; blocks keep more, so their rate is larger.
        q = 2 * target / (1 + target)
        blocks = rng.random() < 0.5
        rate = (1 - q ** (1 / w)) * rng.uniform(0.7, 1.3) * (w / 4 if blocks else 1)
        base = rng.choice(pool)
        copy = edit(base, min(rate, 0.9), blocks, vocabulary, rng)
        r = exact_resemblance(base, copy, w)
        slot = int(np.searchsorted(BANDS, r, side="right")) - 1
        if 0 <= slot < len(filled) and filled[slot] < quota:
            filled[slot] += 1
            pairs.append((base, copy))
            exact.append(r)
    return pairs, np.array(exact)


def accuracy(pairs: list[tuple[list[str], list[str]]], exact: np.ndarray, hashfunc: Callable) -> dict[str, np.ndarray]:
    """Each estimator's resemblance of every pair."""
    w = DEFAULT_PARAMS.w
    ours = sketch_many([d for pair in pairs for d in pair])
    estimates = {
        "ours_signature_84": np.array([signature_agreement(a, b) for a, b in zip(ours[::2], ours[1::2])]),
        "ours_min_s_200": np.array([resemblance_min_s(a, b) for a, b in zip(ours[::2], ours[1::2])]),
    }
    shingled = [shingles_joined(d, w) for pair in pairs for d in pair]
    for size in (SIZE, DEFAULT_PARAMS.s):
        theirs = MinHash.bulk(shingled, num_perm=size, hashfunc=hashfunc)
        estimates[f"datasketch_{size}"] = np.array([a.jaccard(b) for a, b in zip(theirs[::2], theirs[1::2])])
    return estimates


def print_accuracy(estimates: dict[str, np.ndarray], exact: np.ndarray) -> dict[str, float]:
    print(f"accuracy on {exact.size} pairs, exact resemblance {exact.min():.3f}-{exact.max():.3f} "
          f"(median {np.median(exact):.3f}); mean absolute error, overall and per band:")  # fmt: skip
    print("  " + " " * 20 + "   all " + " ".join(f"{lo:.2f}+" for lo in BANDS[:-1]))
    mae = {}
    near = np.abs(exact - THRESHOLD) < 0.05
    for name, values in estimates.items():
        error = np.abs(values - exact)
        mae[name] = float(error.mean())
        slots = np.searchsorted(BANDS, exact, side="right") - 1
        per_band = " ".join(f"{error[slots == b].mean():.3f}" for b in range(len(BANDS) - 1))
        wrong = int(((values >= THRESHOLD) != (exact >= THRESHOLD)).sum())
        print(f"  {name:<20} {mae[name]:.4f} {per_band}  | bias {float((values - exact).mean()):+.4f}, "
              f"wrong side of {THRESHOLD}: {wrong} of {exact.size} ({int(near.sum())} within 0.05 of it)")  # fmt: skip
    return mae


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N pages")
    parser.add_argument("--pairs", type=int, default=1200, help="accuracy pairs (at least 1,000 for the figure)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    load_start = os.getloadavg()

    source, pages = load_pages(args.limit)
    if len(pages) < MIN_PAGES and args.limit is None:
        print(f"only {len(pages)} pages >= {MIN_BYTES} bytes in {source}; need {MIN_PAGES}", file=sys.stderr)
        return 1
    print(f"datasketch {version('datasketch')}, xxhash {version('xxhash')}, mmh3 {version('mmh3')}, "
          f"pyfarmhash {version('pyfarmhash')}, numpy {np.__version__}; load average at start "
          f"{load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")  # fmt: skip
    megabytes = sum(len(p.encode("utf-8")) for p in pages) / 1e6
    times, documents = run_stages(pages, args.runs)
    tokens = sum(len(t) for t in documents)
    print(f"pages: {len(pages)} from {source}, {megabytes:.1f} MB HTML, {tokens} tokens "
          f"(median {statistics.median(len(t) for t in documents):.0f} per page)")  # fmt: skip

    median = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    print(f"medians of {args.runs} runs (CPU seconds where measured):")
    for key, seconds in median.items():
        print(f"  {key:<28} {len(pages) / seconds:9.1f} docs/s {megabytes / seconds:8.2f} MB/s ({seconds:.3f} s"
              + (f", CPU {cpu[key]:.3f} s)" if key in cpu else ")"))
    configs = [f"bulk_{name}_{SIZE}" for name in HASHES]
    fastest = min(configs, key=median.__getitem__)
    ours = len(pages) / median["ours"]
    theirs = len(pages) / median[fastest]
    ratios = [b / a for a, b in zip(times["ours"], times[fastest])]
    print(f"  fastest datasketch configuration: {fastest}; speedup per run "
          + ", ".join(f"{r:.2f}" for r in ratios)
          + f"; vs its MinHash.bulk alone {median[fastest + '_alone'] / median['ours']:.2f}x; "
          f"per page (sketch_tokens) {median[fastest] / median['ours_per_doc']:.2f}x; "
          f"vs the default configuration {median['default_sha1_128'] / median['ours']:.2f}x; "
          f"in CPU time {cpu[fastest] / cpu['ours']:.2f}x")  # fmt: skip

    pairs, exact = make_pairs(documents, args.pairs, args.seed)
    estimates = accuracy(pairs, exact, HASHES[fastest.split("_")[1]])
    mae = print_accuracy(estimates, exact)
    load_end = os.getloadavg()
    print(
        f"ours_docs_s={ours:.1f} datasketch_docs_s={theirs:.1f} speedup_vs_datasketch={ours / theirs:.2f} "
        f"datasketch_config={fastest} mae_ours={mae['ours_signature_84']:.4f} "
        f"mae_datasketch={mae['datasketch_84']:.4f} sketch_vs_parse={median['ours'] / median['parse']:.3f} "
        f"mae_ours_min_s={mae['ours_min_s_200']:.4f} mae_datasketch_200={mae['datasketch_200']:.4f} "
        f"speedup_cpu={cpu[fastest] / cpu['ours']:.2f} pairs={exact.size} load_avg={load_start[0]:.2f}-{load_end[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
