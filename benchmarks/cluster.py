"""Benchmark: near-duplicate clustering of a million sketches, against DuckDB and datasketch.

Synthetic MIN_s sketches (s = 200) stand in for a crawl's pages. Each document is a set of
100-400 random 64-bit shingle fingerprints (its sketch: the 200 smallest, so 100-200
values). 40% of the documents are in planted groups of 2-8: a base set and variants
that each replace at most 5% of it (pairwise resemblance >= 0.82; 15% of the variants
are exact copies, with the same whole-document fingerprint). 5% are decoys replacing 60%
of a group's base (resemblance ~0.25: must not join). The rest are unrelated. 16
boilerplate fingerprints are each in ~2% of the documents (more than 1,000 of them: the
common-fingerprint cut-off drops them). Documents are shuffled.

(i) ``detectors.clustering.cluster_sketches`` on 1,000,000 documents, in a fresh
    subprocess per run that loads the arrays and clusters them (its peak RSS, VmHWM,
    includes the 1.5 GB of input); median time of the runs; pairwise precision and
    recall of the clusters against the planted groups.
(ii) On the first 200,000 of those documents, Broder's job literally in DuckDB (2
    threads): identical documents removed by whole-document fingerprint, <fingerprint,
    doc> rows exploded, fingerprints in more than 1,000 documents dropped, a self-join
    emitting and counting <doc, doc, count>, the threshold applied to the count-based
    resemblance count / (|F(A)| + |F(B)| - count) >= 0.5, then connected components by
    iterated min-label propagation in SQL. The same job with ours, in process; the
    clusters must be the same (ours with its default MIN_s estimator, and with the
    count-based one).
(iii) LSH candidate generation over 100,000 84-value signatures (30% in planted groups
    at pairwise agreement 0.8-0.95): ``detectors.lsh.candidate_pairs`` against
    datasketch ``MinHashLSH(threshold=0.8, num_perm=84, params=(b, r))`` with the same
    bands, inserting and querying ``LeanMinHash`` objects built from the same values; the
    candidate pairs must be the same. Also the online ``LSHIndex`` per page.

The machine has 2 cores and is shared: figures are medians of ``--runs`` runs. The last
line is ``docs=N cluster_s=S peak_rss_gb=G precision=P recall=R duckdb_ratio=D
lsh_speedup_vs_datasketch=X`` with D = DuckDB seconds / our seconds at 200,000 documents
and X = datasketch insert + query seconds / our candidate_pairs seconds.

Run: ``.venv/bin/python benchmarks/cluster.py [--docs 1000000] [--runs 2]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirrorscope.detectors.clustering import cluster_sketches
from mirrorscope.detectors.lsh import LSHIndex, candidate_pairs, choose_bands

S = 200
THRESHOLD = 0.5
MAX_DOCS = 1000
SUBSET = 200_000
SIGNATURES = 100_000
_TOP = np.uint64(2**64 - 1)


def synthetic_sketches(n_docs: int, seed: int = 1, batch: int = 50_000) -> dict[str, np.ndarray]:
    """offsets, values (the CSR sketches), truth (planted group of each document) and
    whole (whole-document fingerprints); see the module docstring."""
    rng = np.random.default_rng(seed)
    boiler = rng.integers(0, 2**56, 16, dtype=np.uint64)  # small: inside every sketch
    width = 400
    lengths, values, truth, whole = [], [], [], []
    label = 0
    while sum(x.size for x in lengths) < n_docs:
        nb = min(batch, n_docs - sum(x.size for x in lengths))
        sizes = rng.integers(2, 9, nb)
        sizes = sizes[: np.searchsorted(np.cumsum(sizes), int(0.4 * nb), side="right")]
        grouped, decoys = int(sizes.sum()), int(0.05 * nb)
        unrelated = nb - grouped - decoys
        bases = rng.integers(0, _TOP, (sizes.size, width), dtype=np.uint64)
        bases[np.arange(width) >= rng.integers(100, width + 1, sizes.size)[:, None]] = _TOP
        group = np.repeat(np.arange(sizes.size), sizes)
        first = np.cumsum(sizes) - sizes
        members = bases[group]
        replace = rng.uniform(0, 0.05, grouped)
        replace[rng.random(grouped) < 0.15] = 0.0
        replace[first] = 0.0
        change = (rng.random(members.shape) < replace[:, None]) & (members != _TOP)
        members[change] = rng.integers(0, _TOP, int(change.sum()), dtype=np.uint64)
        decoy = bases[rng.integers(0, sizes.size, decoys)]
        change = (rng.random(decoy.shape) < 0.6) & (decoy != _TOP)
        decoy[change] = rng.integers(0, _TOP, int(change.sum()), dtype=np.uint64)
        other = rng.integers(0, _TOP, (unrelated, width), dtype=np.uint64)
        other[np.arange(width) >= rng.integers(100, width + 1, unrelated)[:, None]] = _TOP
        has_boiler = rng.random((sizes.size, boiler.size)) < 0.02
        has_boiler = np.concatenate((has_boiler[group], rng.random((decoys + unrelated, boiler.size)) < 0.02))
        sets = np.concatenate((np.concatenate((members, decoy, other)), np.where(has_boiler, boiler, _TOP)), axis=1)
        sets.sort(axis=1)
        sketch = sets[:, :S]
        lengths.append(np.count_nonzero(sketch != _TOP, axis=1))
        values.append(sketch[sketch != _TOP])
        truth.append(np.concatenate((group + label, label + sizes.size + np.arange(decoys + unrelated))))
        label += sizes.size + decoys + unrelated
        fingerprint = rng.integers(0, _TOP, nb, dtype=np.uint64)
        copies = np.flatnonzero(replace == 0.0)
        fingerprint[copies] = fingerprint[first[group[copies]]]
        whole.append(fingerprint)
    length, value = np.concatenate(lengths), np.concatenate(values)
    order = rng.permutation(n_docs)
    starts = (np.cumsum(length) - length)[order]
    length = length[order]
    index = np.repeat(starts - (np.cumsum(length) - length), length) + np.arange(int(length.sum()))
    return {
        "offsets": np.concatenate(([0], np.cumsum(length))).astype(np.int64),
        "values": value[index],
        "truth": np.concatenate(truth)[order],
        "whole": np.concatenate(whole)[order],
    }


def canonical(labels: np.ndarray) -> np.ndarray:
    """Each label replaced by the smallest index holding it: equal arrays, equal partitions."""
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    starts = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    result = np.empty(labels.size, dtype=np.int64)
    result[order] = order[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    return result


def precision_recall(labels: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Pairwise: of the document pairs put together, the share planted together, and of
    the pairs planted together, the share put together."""
    found, planted = canonical(labels), canonical(truth)
    n = labels.size

    def together(*columns: np.ndarray) -> int:
        key = np.sort(columns[0] * n + columns[-1])
        counts = np.diff(np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1], [True]))))
        return int((counts * (counts - 1) // 2).sum())

    both = together(found, planted)
    return both / max(1, together(found)), both / max(1, together(planted))


def child(data: Path) -> None:
    """One clustering run in this fresh process; a JSON line on stdout."""
    offsets = np.load(data / "offsets.npy")
    values = np.load(data / "values.npy")
    whole = np.load(data / "whole.npy")
    start = time.perf_counter()
    result = cluster_sketches(np.arange(offsets.size - 1), offsets, values, document_fingerprints=whole)
    seconds = time.perf_counter() - start
    np.save(data / "labels.npy", result.labels)
    print(json.dumps({"seconds": seconds, "peak_rss_gb": peak_rss_gb(), "stats": result.stats}))


def peak_rss_gb() -> float:
    """This process's peak resident set, in GB (10^9 bytes).

    VmHWM, the high-water mark of this process image's memory. ``ru_maxrss`` would do in
    a process started afresh, but Linux carries it across fork and exec, so a child of
    the data-generating parent starts with the parent's RSS.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e9
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def duckdb_job(offsets: np.ndarray, values: np.ndarray, whole: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
    """Broder's job, literally, in DuckDB; cluster labels (smallest member) per document."""
    import duckdb

    n = offsets.size - 1
    rows_np = {"doc": np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets)), "fp": values}  # noqa: F841
    docs_np = {"doc": np.arange(n, dtype=np.int32), "dfp": whole}  # noqa: F841
    times = {}
    start = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute("CREATE TEMP TABLE docs AS SELECT * FROM docs_np")
    con.execute("CREATE TEMP TABLE rows AS SELECT * FROM rows_np")
    times["load"] = time.perf_counter() - start
    con.execute("CREATE TEMP TABLE rep AS SELECT doc, min(doc) OVER (PARTITION BY dfp) AS rep FROM docs")
    con.execute(
        """CREATE TEMP TABLE kept AS
        WITH r AS (SELECT rows.doc, fp FROM rows SEMI JOIN (SELECT doc FROM rep WHERE doc = rep) x USING (doc))
        SELECT doc, fp FROM r ANTI JOIN (SELECT fp FROM r GROUP BY fp HAVING count(*) > ?) c USING (fp)""",
        [MAX_DOCS],
    )
    con.execute("CREATE TEMP TABLE sizes AS SELECT doc, count(*) AS k FROM kept GROUP BY doc")
    con.execute("""CREATE TEMP TABLE pairs AS SELECT a.doc AS i, b.doc AS j, count(*) AS c
        FROM kept a JOIN kept b ON a.fp = b.fp AND a.doc < b.doc GROUP BY ALL""")
    con.execute(f"""CREATE TEMP TABLE edges AS SELECT i, j FROM pairs
        JOIN sizes si ON si.doc = i JOIN sizes sj ON sj.doc = j WHERE c >= {THRESHOLD} * (si.k + sj.k - c)""")
    times["pairs"] = time.perf_counter() - start - times["load"]
    con.execute(
        "CREATE TEMP TABLE lab AS SELECT doc, doc AS l FROM (SELECT i AS doc FROM edges UNION SELECT j FROM edges)"
    )
    while True:
        con.execute("""CREATE OR REPLACE TEMP TABLE nxt AS
            WITH offer AS (SELECT e.i AS doc, b.l FROM edges e JOIN lab b ON b.doc = e.j
                           UNION ALL SELECT e.j, a.l FROM edges e JOIN lab a ON a.doc = e.i
                           UNION ALL SELECT doc, l FROM lab),
                 low AS (SELECT doc, min(l) AS l FROM offer GROUP BY doc)
            SELECT x.doc, y.l FROM low x JOIN low y ON y.doc = x.l""")  # hook, then one pointer jump
        changed = con.execute("SELECT count(*) FROM nxt JOIN lab USING (doc) WHERE nxt.l <> lab.l").fetchone()[0]
        con.execute("CREATE OR REPLACE TEMP TABLE lab AS SELECT * FROM nxt")
        if not changed:
            break
    result = con.execute(
        "SELECT coalesce(l.l, d.rep) AS label FROM rep d LEFT JOIN lab l ON l.doc = d.rep ORDER BY d.doc"
    ).fetchnumpy()
    times["total"] = time.perf_counter() - start
    con.close()
    return np.asarray(result["label"], dtype=np.int64), times


def synthetic_signatures(n: int, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sig = rng.integers(0, _TOP, (n, 84), dtype=np.uint64)
    sizes = rng.integers(2, 7, n)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), int(0.3 * n), side="right")]
    first = np.cumsum(sizes) - sizes
    group = np.repeat(np.arange(sizes.size), sizes)
    rows = np.arange(group.size)
    keep = np.sqrt(rng.uniform(0.8, 0.95, sizes.size))[group]  # pairwise agreement 0.8-0.95
    copy = (rng.random((rows.size, 84)) < keep[:, None]) & (rows != first[group])[:, None]
    sig[rows] = np.where(copy, sig[first[group]], sig[rows])
    return sig[rng.permutation(n)]


def lsh_benchmark(runs: int) -> float:
    from datasketch import LeanMinHash, MinHashLSH

    sig = synthetic_signatures(SIGNATURES)
    bands, rows = choose_bands(84, 0.8)
    ours, pairs = [], None
    for _ in range(max(3, runs)):
        start = time.perf_counter()
        pairs = candidate_pairs(sig, bands, rows)
        ours.append(time.perf_counter() - start)
    start = time.perf_counter()
    sketches = [LeanMinHash(seed=1, hashvalues=row, scheme="affine64") for row in sig]
    build = time.perf_counter() - start
    theirs, found = [], set()
    for _ in range(max(1, runs - 1)):
        start = time.perf_counter()
        lsh = MinHashLSH(threshold=0.8, num_perm=84, params=(bands, rows))
        for key, m in enumerate(sketches):
            lsh.insert(key, m)
        found = set()
        for key, m in enumerate(sketches):
            found.update((min(key, other), max(key, other)) for other in lsh.query(m) if other != key)
        theirs.append(time.perf_counter() - start)
    same = found == set(map(tuple, pairs.tolist()))
    index = LSHIndex(bands=bands, rows=rows)
    start = time.perf_counter()
    for key, row in enumerate(sig):
        index.query_and_insert(key, row)
    online = (time.perf_counter() - start) / SIGNATURES
    ours_s, theirs_s = statistics.median(ours), statistics.median(theirs)
    print(
        f"lsh: {SIGNATURES} signatures, {bands} bands x {rows} rows, {len(pairs)} candidate pairs, "
        f"same as datasketch: {same}; candidate_pairs {ours_s:.3f} s (runs {', '.join(f'{t:.3f}' for t in ours)}); "
        f"datasketch MinHashLSH insert + query {theirs_s:.2f} s (runs {', '.join(f'{t:.2f}' for t in theirs)}; "
        f"LeanMinHash objects {build:.2f} s more); "
        f"online LSHIndex.query_and_insert {online * 1e6:.0f} us/page, {index.nbytes / len(index):.0f} bytes/doc"
    )
    if not same:
        raise SystemExit("LSH candidates differ from datasketch's")
    return theirs_s / ours_s


def full_run(data: dict[str, np.ndarray], runs: int) -> dict[str, float]:
    """(i): ``cluster_sketches`` on every document, each run in a fresh subprocess; its figures."""
    docs = data["truth"].size
    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as tmp:
        folder = Path(tmp)
        for name in ("offsets", "values", "whole"):
            np.save(folder / f"{name}.npy", data[name])
        results = []
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(folder)], capture_output=True, text=True, check=True
            )
            results.append(json.loads(out.stdout.splitlines()[-1]))
        labels = np.load(folder / "labels.npy")
    seconds = statistics.median(r["seconds"] for r in results)
    peak = max(r["peak_rss_gb"] for r in results)
    precision, recall = precision_recall(labels, data["truth"])
    stats = results[-1]["stats"]
    phases = ", ".join(f"{k[8:]} {v:.1f}" for k, v in stats.items() if k.startswith("seconds_"))
    each = ", ".join(f"{r['seconds']:.1f}" for r in results)
    print(
        f"ours: {docs} documents in {seconds:.1f} s (runs {each}; {phases}), "
        f"peak RSS {peak:.2f} GB, {stats['candidate_pairs']} candidate pairs, {stats['pairs']} pairs >= {THRESHOLD}, "
        f"{stats['clusters']} clusters of {stats['clustered_documents']} documents; "
        f"precision {precision:.4f} recall {recall:.4f}"
    )
    return {"seconds": seconds, "peak": peak, "precision": precision, "recall": recall}


def duckdb_comparison(offsets: np.ndarray, values: np.ndarray, whole: np.ndarray, truth: np.ndarray, runs: int) -> float:
    """(ii): Broder's job in DuckDB and ours on the same documents; DuckDB seconds / our seconds."""
    n = whole.size
    theirs, duck_times = [], {}
    for _ in range(runs):
        duck_labels, duck_times = duckdb_job(offsets, values, whole)
        theirs.append(duck_times["total"])
    ours = []
    for _ in range(max(3, runs)):
        start = time.perf_counter()
        result = cluster_sketches(np.arange(n), offsets, values, document_fingerprints=whole)
        ours.append(time.perf_counter() - start)
    counted = cluster_sketches(np.arange(n), offsets, values, document_fingerprints=whole, estimator="jaccard")
    same = np.array_equal(canonical(result.labels), canonical(duck_labels))
    same_counted = np.array_equal(canonical(counted.labels), canonical(duck_labels))
    ours_s, theirs_s = statistics.median(ours), statistics.median(theirs)
    p, r = precision_recall(result.labels, truth)
    print(
        f"duckdb: {n} documents, {values.size} <fingerprint, doc> rows: DuckDB {theirs_s:.2f} s (runs "
        f"{', '.join(f'{t:.2f}' for t in theirs)}; load {duck_times['load']:.2f}, pairs {duck_times['pairs']:.2f}), "
        f"ours {ours_s:.2f} s (runs {', '.join(f'{t:.2f}' for t in ours)}); same clusters: {same} "
        f"(count-based estimator: {same_counted}); ours precision {p:.4f} recall {r:.4f}"
    )
    if not (same and same_counted):
        raise SystemExit("clusters differ from DuckDB's")
    return theirs_s / ours_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0

    start = time.perf_counter()
    data = synthetic_sketches(args.docs)
    made = time.perf_counter() - start
    print(f"data: {args.docs} documents, {data['values'].size} fingerprints, generated in {made:.0f} s")
    ours = full_run(data, args.runs)
    n = min(SUBSET, args.docs)
    offsets = data["offsets"][: n + 1]
    values = data["values"][: offsets[-1]]
    whole, truth = data["whole"][:n], data["truth"][:n]
    del data
    duckdb_ratio = duckdb_comparison(offsets, values, whole, truth, args.runs)
    speedup = lsh_benchmark(args.runs)
    print(
        f"docs={args.docs} cluster_s={ours['seconds']:.1f} peak_rss_gb={ours['peak']:.2f} precision={ours['precision']:.4f} "
        f"recall={ours['recall']:.4f} duckdb_ratio={duckdb_ratio:.2f} lsh_speedup_vs_datasketch={speedup:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
