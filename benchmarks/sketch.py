"""Benchmark: our document sketch against datasketch MinHash and against parsing.

On at least 500 real multi-kilobyte HTML pages (Debian's python3.11-doc, in
/usr/share/doc/python3.11/html: ``apt-get install python3.11-doc``; without it, pages of
the project's sandbox world), three stages run side by side, each run interleaving them
so machine noise hits all three alike; figures are medians of the runs:

a. lxml parse + canonicalise: ``detectors.canonical.canonical_tokens`` on each page;
b. our full sketch from those tokens: shingles, Rabin fingerprints, MIN_s, MOD_m, the
   84-value signature, super-shingles and the document fingerprint (``sketch_many``,
   token memo cleared before every run so the run pays for every new token; timed
   again with the memo warm, and one page per call with ``sketch_tokens``);
c. datasketch ``MinHash(num_perm=128).update_batch`` over the same 10-word shingles,
   built as its users build them (``" ".join(window).encode()``); update_batch alone is
   timed too.

The last line is ``ours_docs_s=X datasketch_docs_s=Y speedup_vs_datasketch=X/Y
sketch_vs_parse=R`` with R = our sketch time / parse + canonicalise time.

Run: ``.venv/bin/python benchmarks/sketch.py [--runs 3] [--limit N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datasketch import MinHash  # noqa: E402

from mirrorscope.detectors.canonical import canonical_tokens  # noqa: E402
from mirrorscope.detectors.shingles import default_table  # noqa: E402
from mirrorscope.detectors.sketch import DEFAULT_PARAMS, sketch_many, sketch_tokens  # noqa: E402

DOCS = Path("/usr/share/doc/python3.11/html")
MIN_PAGES = 500
MIN_BYTES = 2048
# The stages, in the order each run times them, and how the medians name them.
STAGES = {
    "parse": "a. lxml parse + canonicalise",
    "ours": "b. our full sketch (sketch_many, cold memo)",
    "ours_warm": "b'. our full sketch (sketch_many, warm memo)",
    "ours_per_doc": "b''. our full sketch (sketch_tokens per page)",
    "datasketch": "c. datasketch MinHash(128), shingles + update_batch",
    "ds_update": "c'. datasketch update_batch alone",
}


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


def datasketch_shingles(tokens: list[str], w: int) -> list[bytes]:
    width = min(w, len(tokens))
    return [" ".join(tokens[i : i + width]).encode("utf-8") for i in range(max(1, len(tokens) - width + 1))]


def timed(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def run_stages(pages: list[str], runs: int) -> tuple[dict[str, list[float]], list[list[str]], list]:
    """Every stage's seconds per run, interleaved; the pages' tokens and our sketches of them."""
    w = DEFAULT_PARAMS.w
    times: dict[str, list[float]] = {k: [] for k in STAGES}
    for run in range(runs):
        elapsed, documents = timed(lambda: [canonical_tokens(p) for p in pages])
        times["parse"].append(elapsed)

        default_table(w).clear()
        elapsed, sketches = timed(lambda: sketch_many(documents))
        times["ours"].append(elapsed)
        times["ours_warm"].append(timed(lambda: sketch_many(documents))[0])

        times["ours_per_doc"].append(timed(lambda: [sketch_tokens(t) for t in documents])[0])  # memo warm

        def run_datasketch() -> None:
            for tokens in documents:
                MinHash(num_perm=128).update_batch(datasketch_shingles(tokens, w))

        times["datasketch"].append(timed(run_datasketch)[0])

        shingled = [datasketch_shingles(t, w) for t in documents]

        def run_update_only() -> None:
            for shingles in shingled:
                MinHash(num_perm=128).update_batch(shingles)

        times["ds_update"].append(timed(run_update_only)[0])
        print(f"run {run + 1}: " + "  ".join(f"{k}={v[-1]:.3f}s" for k, v in times.items()), flush=True)
    return times, documents, sketches


def print_medians(times: dict[str, list[float]], pages: int, megabytes: float) -> None:
    """Each stage's median throughput, the ratios between them, and the last line."""
    median = {k: statistics.median(v) for k, v in times.items()}
    print(f"medians of {len(times['parse'])} runs:")
    for key, label in STAGES.items():
        seconds = median[key]
        print(f"  {label:<52} {pages / seconds:9.1f} docs/s {megabytes / seconds:8.2f} MB/s ({seconds:.3f} s)")
    print(f"  speedup vs datasketch: batch {median['datasketch'] / median['ours']:.2f}x, "
          f"per page {median['datasketch'] / median['ours_per_doc']:.2f}x; "
          f"vs update_batch alone: batch {median['ds_update'] / median['ours']:.2f}x, "
          f"per page {median['ds_update'] / median['ours_per_doc']:.2f}x")  # fmt: skip
    print(f"  sketch / parse time: batch {median['ours'] / median['parse']:.3f}, "
          f"per page {median['ours_per_doc'] / median['parse']:.3f}")  # fmt: skip
    ours = pages / median["ours"]
    theirs = pages / median["datasketch"]
    speedup, ratio = ours / theirs, median["ours"] / median["parse"]
    print(
        f"ours_docs_s={ours:.1f} datasketch_docs_s={theirs:.1f} "
        f"speedup_vs_datasketch={speedup:.2f} sketch_vs_parse={ratio:.3f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N pages")
    args = parser.parse_args()

    source, pages = load_pages(args.limit)
    if len(pages) < MIN_PAGES and args.limit is None:
        print(f"only {len(pages)} pages >= {MIN_BYTES} bytes in {source}; need {MIN_PAGES}", file=sys.stderr)
        return 1
    megabytes = sum(len(p.encode("utf-8")) for p in pages) / 1e6
    times, documents, sketches = run_stages(pages, args.runs)
    tokens = sum(len(t) for t in documents)
    sizes = sorted(len(s.to_bytes()) for s in sketches)
    print(f"pages: {len(pages)} from {source}, {megabytes:.1f} MB HTML, {tokens} tokens "
          f"(median {statistics.median(len(t) for t in documents):.0f} per page)")  # fmt: skip
    print(f"serialised sketch: median {statistics.median(sizes):.0f} B, mean {statistics.fmean(sizes):.0f} B per page")
    print_medians(times, len(pages), megabytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
