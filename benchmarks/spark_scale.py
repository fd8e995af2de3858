"""Benchmark: the near-duplicate job on Spark against the numpy path, on the same sketches.

Baseline: the numpy path (``jobs.duplicates.duplicate_results``: Broder's clusters by
union-find and by CENTER, super-shingle clusters, containments), in one process, in
memory. Against it: ``jobs.spark_detect.spark_duplicates`` on a local Spark
(``--master``, default local[2]: this machine's 2 cores), reading the same sketches from
a Parquet export. Both must give the same results (``spark_same=1``: every cluster,
pair, similarity and containment equal, in order).

The sketches are ``benchmarks/cluster.py``'s synthetic documents (planted groups of 2-8
near-duplicates with exact copies, near-threshold pairs, decoys, unrelated documents and
16 boilerplate fingerprints each in ~2 % of them, dropped past 1,000 documents), made
into full sketches: MIN_s (s = 200), the MOD_m sample (the MIN_s values divisible by 25),
the 84-value signature (hashes of the 84 smallest values) and its 6 super-shingles.

Times: ``numpy_s`` is ``duplicate_results`` on arrays in memory; ``spark_s`` is
``spark_duplicates`` with the session already started (reading the Parquet files
included); Spark's start (``spark_start_s``) and writing the Parquet files
(``export_s``) are reported apart. Medians of ``--runs`` runs, with the load average.

Spark is expected to be slower here: on one machine of 2 cores its shuffles, its JVM and
its row format cost more than numpy's sorts over arrays in memory (earlier, at 1M
documents: spark_s=1581.1 numpy_s=46.0 at load 7.7-10). It pays only where one machine's
memory does not hold the sketches (the numpy path needs them in one process: about 1.6 KB
a document, 16 GB at 10M pages), with executors on several machines.

Run: ``.venv/bin/python benchmarks/spark_scale.py [--docs 100000] [--million] [--runs 1]
[--master local[2]]``. Last line: ``spark_same=.. spark_s=.. numpy_s=.. docs=..
spark_start_s=.. export_s=..``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cluster import load, plan, sketches  # noqa: E402

from mirrorscope.detectors.clustering import SketchArrays  # noqa: E402
from mirrorscope.detectors.lsh import mix64  # noqa: E402
from mirrorscope.detectors.minhash import EMPTY  # noqa: E402
from mirrorscope.detectors.runs import ramp  # noqa: E402
from mirrorscope.detectors.sketch import DEFAULT_PARAMS  # noqa: E402
from mirrorscope.detectors.supershingles import super_shingles  # noqa: E402
from mirrorscope.jobs.duplicates import duplicate_results  # noqa: E402
from mirrorscope.jobs.export import ENCODING, MANIFEST, _params, write_sketches  # noqa: E402
from mirrorscope.jobs.spark_detect import spark_duplicates, spark_session  # noqa: E402

#: The 10x run (``--million``).
MILLION = 1_000_000


def synthetic_sketches(docs: int, step: int = 50_000) -> tuple[np.ndarray, SketchArrays]:
    """Page ids 1..docs and full sketches of ``benchmarks/cluster.py``'s documents."""
    p = plan(docs)
    parts = [sketches(p, lo, min(docs, lo + step))[0] for lo in range(0, docs, step)]
    min_s = np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    offsets = np.concatenate(([0], np.cumsum(p["lengths"]))).astype(np.int64)
    sampled = min_s % np.uint64(25) == 0
    owner = np.repeat(np.arange(docs), np.diff(offsets))
    mod_m = min_s[sampled]
    mod_offsets = np.concatenate(([0], np.cumsum(np.bincount(owner[sampled], minlength=docs)))).astype(np.int64)
    size = DEFAULT_PARAMS.signature_size
    width = np.minimum(np.diff(offsets), size)
    signatures = np.full((docs, size), EMPTY, dtype=np.uint64)
    signatures[np.repeat(np.arange(docs), width), ramp(width)] = mix64(min_s[np.repeat(offsets[:-1], width) + ramp(width)])
    arrays = SketchArrays(offsets, min_s, mod_offsets, mod_m, p["whole"].astype(np.uint64), signatures, super_shingles(signatures))
    return np.arange(1, docs + 1, dtype=np.int64), arrays


def spark_figures(docs: int = 100_000, master: str = "local[2]", runs: int = 1, workdir: str | None = None,
                  say: Any = print) -> dict[str, float]:
    """Generate ``docs`` sketches, run both engines on them ``runs`` times, check that
    they agree; the figures (medians) with ``spark_same`` 1 or 0."""
    import json

    page_ids, arrays = synthetic_sketches(docs)
    say(f"{docs} documents, {arrays.min_s.size} MIN_s values ({load()})")
    numpy_times, spark_times = [], []
    expected = None
    for _ in range(runs):
        started = time.perf_counter()
        expected = duplicate_results(page_ids, arrays)
        numpy_times.append(time.perf_counter() - started)
        say(f"  numpy: {numpy_times[-1]:.1f} s ({load()})")
    with tempfile.TemporaryDirectory(dir=workdir, prefix="spark-scale-") as folder:
        started = time.perf_counter()
        write_sketches(Path(folder, "sketches.parquet"), page_ids, arrays)
        manifest = {"tables": {"sketches": docs}, "sketches_left_out": 0, "sketches_unreadable": 0,
                    "sketch_encoding": ENCODING, "sketch_params": _params()}
        Path(folder, MANIFEST).write_text(json.dumps(manifest))
        export_s = time.perf_counter() - started
        say(f"  Parquet written: {export_s:.1f} s")
        started = time.perf_counter()
        with spark_session(master) as spark:
            start_s = time.perf_counter() - started
            say(f"  Spark started on {master}: {start_s:.1f} s")
            same = True
            for _ in range(runs):
                started = time.perf_counter()
                found = spark_duplicates(spark, folder)
                spark_times.append(time.perf_counter() - started)
                same &= found == expected
                say(f"  spark: {spark_times[-1]:.1f} s, same as numpy: {found == expected} ({load()})")
    assert expected is not None
    for method, (groups, pairs) in expected.methods.items():
        say(f"  {method}: {len(groups)} clusters, {len(pairs)} pairs")
    say(f"  containments: {len(expected.contained)}")
    return {"spark_same": int(same), "spark_s": round(statistics.median(spark_times), 1),
            "numpy_s": round(statistics.median(numpy_times), 1), "docs": docs, "spark_start_s": round(start_s, 1),
            "export_s": round(export_s, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--million", action="store_true", help=f"{MILLION} documents (needs ~6 GB of memory)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workdir", help="where the Parquet files go (default: the temp directory)")
    args = parser.parse_args()
    figures = spark_figures(MILLION if args.million else args.docs, args.master, args.runs, args.workdir)
    print(f"baseline: the numpy path on one process; Spark {args.master} on the same sketches ({load()})")
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0 if figures["spark_same"] else 1


if __name__ == "__main__":
    sys.exit(main())
