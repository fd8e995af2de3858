"""Benchmark: Broder's clustering of 10 million sketches, against DuckDB and datasketch.

Synthetic MIN_s sketches (s = 200) stand in for a crawl's pages. Each document is a set of
100-400 64-bit shingle fingerprints (its sketch: the 200 smallest, so 100-200 values),
made by a counter-based hash of (set, position), so any slice of documents is generated on
its own, in any order, and 10 million documents stream to disk in slices. Documents, in
shuffled order:

- 40 % in planted groups of 2-8: a base set and variants that each replace at most 5 % of
  it (resemblance >= 0.82); 15 % of the variants are exact copies (same whole-document
  fingerprint);
- 5 % in **near-threshold pairs**: a set A and a set B keeping a share of A chosen so the
  pairs' resemblance spreads uniformly over 0.3-0.7; the truth at Broder's threshold is
  the exact Jaccard |A n B| / |A u B| of the full sets (not the sketches) >= 0.5;
- 5 % decoys replacing 60 % of a group's base (resemblance ~0.25: must not join);
- the rest unrelated. 16 boilerplate fingerprints are each in ~2 % of the documents (more
  than 1,000 of them: the common-fingerprint cut-off drops them).

Figures, each against its baseline in the same run:

(i) ``detectors.clustering.cluster_sketches`` on ``--docs`` documents (10,000,000) read
    from a memory-mapped .npy (14.7 GB of fingerprints at 10M: more than the 8 GB the
    issue allows), in a fresh subprocess (peak RSS is its VmHWM, 10^9 bytes). Pairwise
    precision and recall against the truth (planted groups; near pairs joined when their
    exact Jaccard is >= 0.5), ``near_threshold_f1``: F1 over the near-threshold pairs of
    "put in one cluster" against "exact Jaccard >= 0.5", and the false joins among them.
(ii) At 1,000,000 documents, the same algorithm in DuckDB (2 threads, 4 GB memory limit,
    spilling to a temp directory): identical documents removed by whole-document
    fingerprint, <fingerprint, doc> rows, fingerprints in more than 1,000 documents
    dropped, **the same prefix filter** (each document's 20 smallest kept fingerprints,
    ``row_number() OVER (PARTITION BY doc ORDER BY fp)``, self-joined for candidate pairs),
    the count-based resemblance |F(A) n F(B)| / |F(A) u F(B)| of the candidates on the
    kept sketches (``list_intersect``), >= 0.5, connected components by min-label
    propagation. Ours: ``cluster_sketches(estimator="jaccard")``, the same estimate; the
    clusters must be equal. Both from the same .npy files, loading included, each in a
    fresh subprocess; ``duckdb_ratio`` = DuckDB seconds / our seconds (medians).
(iii) LSH candidate generation over 100,000 84-value signatures (30 % in planted groups
    at pairwise agreement 0.8-0.95): ``detectors.lsh.candidate_pairs`` against
    datasketch ``MinHashLSH(threshold=0.8, num_perm=84, params=(b, r))`` with the same
    bands, inserting and querying ``LeanMinHash`` objects built from the same values; the
    candidate pairs must be the same. Also the online ``LSHIndex`` per page.
(iv) End to end: ``--detect-docs`` pages (1,000,000) with their sketches bulk-loaded into a
    SQLite file and a PostgreSQL schema made for the run and dropped after it
    (``Store.insert_new_pages``, batches of 20,000; seconds reported apart), then
    ``mirror-report detect --db URL`` timed as a subprocess, loading included (its peak
    RSS from /usr/bin/time); the broder clusters it stored are scored against the truth. Each page's sketch is the synthetic MIN_s; its MOD_m sample is the
    MIN_s values divisible by 25 and its 84-value signature the hashes of its 84 smallest
    fingerprints (sizes as real sketches; only the MIN_s clusters are scored). 1,000 pages
    a host.

The machine has 2 cores and is shared: the load average is printed with every figure,
and figures are medians of ``--runs`` runs (the 10M run is one run unless asked). The
last line is ``docs=.. cluster_s=.. peak_rss_gb=.. precision=.. recall=..
near_threshold_f1=.. duckdb_ratio=.. lsh_speedup_vs_datasketch=.. detect_1m_sqlite_s=..
detect_1m_postgres_s=..``; a detect figure measured at fewer than 1,000,000 pages is
scaled linearly to 1M and says so on its own line.

Run: ``.venv/bin/python benchmarks/cluster.py [--docs 10000000] [--runs 3] [--big-runs 1]
[--detect-docs 1000000] [--workdir /tmp]`` (needs ~16 GB of disk at 10M, PostgreSQL at
``--postgres``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirrorscope.detectors.clustering import cluster_sketches, default_prefix
from mirrorscope.detectors.lsh import LSHIndex, candidate_pairs, choose_bands, mix64
from mirrorscope.detectors.minhash import EMPTY

S = 200
THRESHOLD = 0.5
MAX_DOCS = 1000
COMPARE_DOCS = 1_000_000
SIGNATURES = 100_000
WIDTH = 400
BOILER = 16
_TOP = np.uint64(2**64 - 1)
# Kinds of document in the plan.
GROUP, NEAR_A, NEAR_B, DECOY, UNRELATED = range(5)
# Salts of the counter-based hash: one stream each.
_SALT = {name: np.uint64(int(mix64(np.uint64(k + 1)))) for k, name in enumerate(
    ("length", "value", "change", "new", "boiler", "boilerplate", "whole")
)}


def _hash(keys: np.ndarray, stream: str) -> np.ndarray:
    return mix64(np.asarray(keys, dtype=np.uint64) ^ _SALT[stream])


def _uniform(keys: np.ndarray, stream: str) -> np.ndarray:
    return (_hash(keys, stream) >> np.uint64(11)) * (1.0 / 2**53)


def _boiler_bits(slots: np.ndarray) -> np.ndarray:
    keys = (np.asarray(slots, dtype=np.uint64)[:, None] << np.uint64(5)) | np.arange(BOILER, dtype=np.uint64)
    return _uniform(keys, "boiler") < 0.02


def _base_lengths(base: np.ndarray) -> np.ndarray:
    return (100 + _hash(base, "length") % np.uint64(WIDTH - 99)).astype(np.int64)


def plan(n: int, seed: int = 1) -> dict[str, np.ndarray]:
    """Per document (in shuffled order): its base set, replacement rate, kind, partner
    (near pairs: the A of each B), truth label before the near pairs are judged, whole
    fingerprint and sketch length. Small arrays: the sets are made slice by slice."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, n)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), int(0.4 * n), side="right")]
    groups, grouped = sizes.size, int(sizes.sum())
    pairs, decoys = int(0.025 * n), int(0.05 * n)
    unrelated = n - grouped - 2 * pairs - decoys
    group = np.repeat(np.arange(groups), sizes)
    first = np.cumsum(sizes) - sizes
    rate_group = rng.uniform(0, 0.05, grouped)
    copies = rng.random(grouped) < 0.15
    copies[first] = False
    rate_group[copies] = 0.0
    rate_group[first] = 0.0
    target = rng.uniform(0.3, 0.7, pairs)
    near = np.arange(pairs)
    base = np.concatenate((group, groups + near, groups + near, rng.integers(0, groups, decoys),
                           groups + pairs + np.arange(unrelated)))
    rate = np.concatenate((rate_group, np.zeros(pairs), 1 - 2 * target / (1 + target), np.full(decoys, 0.6),
                           np.zeros(unrelated)))
    kind = np.repeat(np.array([GROUP, NEAR_A, NEAR_B, DECOY, UNRELATED], dtype=np.int8),
                     [grouped, pairs, pairs, decoys, unrelated])
    truth = np.concatenate((group, groups + np.arange(n - grouped)))
    slot = rng.permutation(n)  # generation index k goes to slot[k]
    partner = np.full(n, -1, dtype=np.int64)
    partner[grouped + pairs + near] = slot[grouped + near]
    whole_of = np.arange(n)
    whole_of[np.flatnonzero(copies)] = first[group[copies]]
    result = {"base": base, "rate": rate, "kind": kind, "truth": truth, "partner": partner,
              "whole": _hash(slot[whole_of].astype(np.uint64), "whole")}
    shuffled = {}
    for name, array in result.items():
        shuffled[name] = np.empty_like(array)
        shuffled[name][slot] = array
    lengths = np.minimum(S, _base_lengths(shuffled["base"].astype(np.uint64)) + _boiler_count(n))
    shuffled["lengths"] = lengths
    return shuffled


def _boiler_count(n: int, step: int = 1 << 20) -> np.ndarray:
    return np.concatenate([_boiler_bits(np.arange(lo, min(n, lo + step))).sum(axis=1) for lo in range(0, n, step)])


def sketches(p: dict[str, np.ndarray], lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The MIN_s sketches of documents lo..hi (concatenated, each ascending) and, for the
    B of each near pair, the exact Jaccard of its full set with its A's (NaN elsewhere)."""
    slots = np.arange(lo, hi, dtype=np.uint64)
    base = p["base"][lo:hi].astype(np.uint64)
    length = _base_lengths(base)
    position = np.arange(WIDTH, dtype=np.uint64)
    values = np.minimum(_hash((base[:, None] << np.uint64(10)) | position, "value"), _TOP - np.uint64(1))
    own = (slots[:, None] << np.uint64(10)) | position
    change = (_uniform(own, "change") < p["rate"][lo:hi, None]) & (position < length[:, None])
    values[change] = np.minimum(_hash(own[change], "new"), _TOP - np.uint64(1))
    values[position >= length[:, None]] = _TOP
    bits = _boiler_bits(slots)
    boiler = _hash(np.arange(BOILER, dtype=np.uint64), "boilerplate") >> np.uint64(8)
    sets = np.concatenate((values, np.where(bits, boiler, _TOP)), axis=1)
    sketch = np.sort(np.partition(sets, S - 1, axis=1)[:, :S], axis=1)
    exact = np.full(hi - lo, np.nan)
    b = np.flatnonzero(p["kind"][lo:hi] == NEAR_B)
    if b.size:
        a_bits = _boiler_bits(p["partner"][lo:hi][b])
        changed = change[b].sum(axis=1)
        common = length[b] - changed + (a_bits & bits[b]).sum(axis=1)
        union = length[b] + changed + (a_bits | bits[b]).sum(axis=1)
        exact[b] = common / union
    return sketch[sketch != _TOP], exact


def write_dataset(n: int, folder: Path, step: int = 50_000) -> dict[str, np.ndarray]:
    """Writes offsets.npy, values.npy (slice by slice), whole.npy into ``folder``; returns
    the plan with ``exact`` (near pairs' exact Jaccard) and the final ``truth``."""
    folder.mkdir(parents=True, exist_ok=True)
    p = plan(n)
    offsets = np.concatenate(([0], np.cumsum(p["lengths"]))).astype(np.int64)
    np.save(folder / "offsets.npy", offsets)
    np.save(folder / "whole.npy", p["whole"])
    exact = np.full(n, np.nan)
    with open(folder / "values.npy", "wb") as out:
        np.lib.format.write_array_header_2_0(out, {"descr": "<u8", "fortran_order": False, "shape": (int(offsets[-1]),)})
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            values, exact[lo:hi] = sketches(p, lo, hi)
            if values.size != offsets[hi] - offsets[lo]:
                raise SystemExit("sketch lengths differ from the plan's")
            values.tofile(out)
    b = np.flatnonzero(p["kind"] == NEAR_B)
    truth = p["truth"].copy()
    joined = b[exact[b] >= THRESHOLD]
    truth[joined] = truth[p["partner"][joined]]
    return p | {"exact": exact, "truth": truth}


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


def near_threshold(labels: np.ndarray, p: dict[str, np.ndarray]) -> dict[str, float]:
    """F1 of "in one cluster" against "exact Jaccard >= 0.5" over the near pairs, and
    their false joins (to their partner below 0.5, or to anything else)."""
    b = np.flatnonzero(p["kind"] == NEAR_B)
    a = p["partner"][b]
    truth = p["exact"][b] >= THRESHOLD
    joined = labels[a] == labels[b]
    tp, fp, fn = int(np.sum(joined & truth)), int(np.sum(joined & ~truth)), int(np.sum(~joined & truth))
    sizes = np.bincount(labels, minlength=labels.size)
    outside = int(np.sum(sizes[labels[a]] > np.where(joined, 2, 1)) + np.sum(~joined & (sizes[labels[b]] > 1)))
    return {"pairs": b.size, "positives": int(truth.sum()), "tp": tp, "fp": fp, "fn": fn,
            "f1": 2 * tp / max(1, 2 * tp + fp + fn), "joined_outside": outside}


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


def load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def child_ours(data: Path, mapped: bool, estimator: str, budget: int) -> None:
    """One clustering run in this fresh process, loading included; a JSON line on stdout."""
    start = time.perf_counter()
    offsets = np.load(data / "offsets.npy")
    values = np.load(data / "values.npy", mmap_mode="r" if mapped else None)
    whole = np.load(data / "whole.npy")
    loaded = time.perf_counter() - start
    result = cluster_sketches(np.arange(offsets.size - 1), offsets, values, document_fingerprints=whole,
                              estimator=estimator, memory_budget=budget)
    seconds = time.perf_counter() - start
    np.save(data / f"labels-{estimator}-{int(mapped)}.npy", result.labels)
    print(json.dumps({"seconds": seconds, "load": loaded, "peak_rss_gb": peak_rss_gb(), "stats": result.stats}))


def child_duckdb(data: Path) -> None:
    """The same algorithm in DuckDB, loading included; a JSON line on stdout."""
    import duckdb

    times = {}
    start = time.perf_counter()
    offsets = np.load(data / "offsets.npy")
    n = offsets.size - 1
    rows_np = {"doc": np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets)), "fp": np.load(data / "values.npy")}  # noqa: F841
    docs_np = {"doc": np.arange(n, dtype=np.int32), "dfp": np.load(data / "whole.npy")}  # noqa: F841
    con = duckdb.connect()
    spill = data / "duckdb-spill"
    con.execute(f"SET threads = 2; SET memory_limit = '4GB'; SET temp_directory = '{spill}'; "
                "SET preserve_insertion_order = false")
    con.execute("CREATE TEMP TABLE docs AS SELECT * FROM docs_np")
    con.execute("CREATE TEMP TABLE rows AS SELECT * FROM rows_np")
    del rows_np, docs_np
    times["load"] = time.perf_counter() - start
    k = default_prefix(THRESHOLD, S)
    con.execute("CREATE TEMP TABLE rep AS SELECT doc, min(doc) OVER (PARTITION BY dfp) AS rep FROM docs")
    con.execute(
        """CREATE TEMP TABLE kept AS
        WITH r AS (SELECT rows.doc, fp FROM rows SEMI JOIN (SELECT doc FROM rep WHERE doc = rep) x USING (doc))
        SELECT doc, fp FROM r ANTI JOIN (SELECT fp FROM r GROUP BY fp HAVING count(*) > ?) c USING (fp)""",
        [MAX_DOCS],
    )
    con.execute("DROP TABLE rows")
    con.execute(f"""CREATE TEMP TABLE prefix AS SELECT doc, fp FROM kept
        QUALIFY row_number() OVER (PARTITION BY doc ORDER BY fp) <= {k}""")
    con.execute("""CREATE TEMP TABLE cand AS SELECT DISTINCT a.doc AS i, b.doc AS j
        FROM prefix a JOIN prefix b ON a.fp = b.fp AND a.doc < b.doc""")
    times["candidates"] = time.perf_counter() - start - times["load"]
    con.execute("CREATE TEMP TABLE sk AS SELECT doc, list(fp) AS l, count(*) AS k FROM kept GROUP BY doc")
    con.execute("DROP TABLE kept")
    con.execute(f"""CREATE TEMP TABLE edges AS SELECT i, j FROM (
            SELECT c.i, c.j, len(list_intersect(x.l, y.l)) AS common, x.k AS ka, y.k AS kb
            FROM cand c JOIN sk x ON x.doc = c.i JOIN sk y ON y.doc = c.j)
        WHERE common >= {THRESHOLD} * (ka + kb - common)""")
    times["pairs"] = time.perf_counter() - start - times["load"] - times["candidates"]
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
    con.close()
    times["seconds"] = time.perf_counter() - start
    np.save(data / "labels-duckdb.npy", np.asarray(result["label"], dtype=np.int64))
    print(json.dumps(times | {"peak_rss_gb": peak_rss_gb()}))


def run_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"child {args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def clustering_at_scale(data: Path, p: dict[str, np.ndarray], runs: int, budget: int) -> dict[str, float]:
    """(i): ours on every document, memory-mapped, each run in a fresh subprocess."""
    docs = p["truth"].size
    results = []
    for _ in range(runs):
        before = load()
        results.append(run_child("--child", str(data), "--mapped", "--budget", str(budget)))
        print(f"  run: {results[-1]['seconds']:.1f} s, peak {results[-1]['peak_rss_gb']:.2f} GB ({before}; after: {load()})")
    labels = np.load(data / "labels-min_s-1.npy")
    seconds = statistics.median(r["seconds"] for r in results)
    peak = max(r["peak_rss_gb"] for r in results)
    precision, recall = precision_recall(labels, p["truth"])
    near = near_threshold(labels, p)
    stats = results[-1]["stats"]
    phases = ", ".join(f"{k[8:]} {v:.1f}" for k, v in stats.items() if k.startswith("seconds_"))
    print(
        f"ours: {docs} documents ({stats['fingerprints'] * 8 / 1e9:.1f} GB of fingerprints, memory-mapped) in "
        f"{seconds:.1f} s loading included (runs {_each(results)}; {phases}), "
        f"peak RSS {peak:.2f} GB, {stats['candidate_pairs']} candidate pairs, {stats['pairs']} pairs >= {THRESHOLD}, "
        f"{stats['clusters']} clusters of {stats['clustered_documents']} documents; precision {precision:.4f} "
        f"recall {recall:.4f}"
    )
    print(
        f"near-threshold pairs: {near['pairs']} planted (exact Jaccard 0.3-0.7), {near['positives']} >= {THRESHOLD}; "
        f"joined right {near['tp']}, false joins {near['fp']} (below {THRESHOLD}) + {near['joined_outside']} to other "
        f"documents, missed {near['fn']}; F1 {near['f1']:.4f}"
    )
    return {"seconds": seconds, "peak": peak, "precision": precision, "recall": recall, "f1": near["f1"]}


def duckdb_comparison(data: Path, runs: int) -> float:
    """(ii): DuckDB and ours, the same algorithm on the same files, loading included."""
    theirs, ours = [], []
    for _ in range(runs):
        theirs.append(run_child("--duckdb-child", str(data)))
        ours.append(run_child("--child", str(data), "--estimator", "jaccard"))
    ours_default = run_child("--child", str(data))
    same = np.array_equal(canonical(np.load(data / "labels-jaccard-0.npy")), canonical(np.load(data / "labels-duckdb.npy")))
    t, o = statistics.median(r["seconds"] for r in theirs), statistics.median(r["seconds"] for r in ours)
    last = theirs[-1]
    print(
        f"duckdb at {np.load(data / 'offsets.npy').size - 1} documents, same algorithm (prefix {default_prefix(THRESHOLD, S)}, count-based "
        f"estimate), loading included: DuckDB {t:.1f} s (runs {_each(theirs)}; "
        f"load {last['load']:.1f}, candidates {last['candidates']:.1f}, pairs {last['pairs']:.1f}; peak "
        f"{max(r['peak_rss_gb'] for r in theirs):.2f} GB), ours {o:.1f} s (runs "
        f"{_each(ours)}; load {ours[-1]['load']:.1f}; peak "
        f"{max(r['peak_rss_gb'] for r in ours):.2f} GB); same clusters: {same}; ours with the MIN_s estimator, "
        f"in memory: {ours_default['seconds']:.1f} s, peak {ours_default['peak_rss_gb']:.2f} GB ({load()})"
    )
    if not same:
        raise SystemExit("clusters differ from DuckDB's")
    return t / o

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




def _each(results: list[dict], key: str = "seconds") -> str:
    return ", ".join(f"{r[key]:.1f}" for r in results)


def write_store(url: str, p: dict[str, np.ndarray], data: Path, n: int, batch: int = 20_000) -> float:
    """Pages 0..n with their sketches into the store at ``url``, bulk-loaded by
    ``Store.insert_new_pages`` (plain INSERTs, no upserts)."""
    from mirrorscope.crawler.pipelines import sketch_record
    from mirrorscope.detectors.runs import ramp
    from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch
    from mirrorscope.detectors.supershingles import super_shingles
    from mirrorscope.storage.records import PageRecord
    from mirrorscope.storage.store import Store

    offsets = np.load(data / "offsets.npy")
    values = np.load(data / "values.npy", mmap_mode="r")
    size = DEFAULT_PARAMS.signature_size
    start = time.perf_counter()
    store = Store(url)
    now = datetime.now(timezone.utc)
    for lo in range(0, n, batch):
        hi = min(n, lo + batch)
        block = np.asarray(values[offsets[lo] : offsets[hi]])
        local = offsets[lo : hi + 1] - offsets[lo]
        # The signature: hashes of the sketch's first 84 values, EMPTY past its end.
        width = np.minimum(np.diff(local), size)
        rows, columns = np.repeat(np.arange(hi - lo), width), ramp(width)
        signatures = np.full((hi - lo, size), EMPTY, dtype=np.uint64)
        signatures[rows, columns] = mix64(block[np.repeat(local[:-1], width) + columns])
        supers = super_shingles(signatures)
        records = []
        for k, doc in enumerate(range(lo, hi)):
            min_s = block[local[k] : local[k + 1]]
            sketch = DocumentSketch(DEFAULT_PARAMS, 500, 400, False, int(p["whole"][doc]), min_s,
                                    min_s[min_s % np.uint64(25) == 0], signatures[k], supers[k])
            host = f"h{doc // 1000}.example:80"
            records.append(PageRecord(
                url=f"http://{host}/p{doc}.html", host=host, hostname=host[:-3], port=80, path=f"/p{doc}.html",
                depth=1, outcome="ok", fetched_at=now, status=200, ip=f"10.{doc // 1000 // 65536 % 256}."
                f"{doc // 1000 // 256 % 256}.{doc // 1000 % 256}", content_type="text/html", length=4000,
                fingerprint=int(p["whole"][doc]), title=f"page {doc}", sketch=sketch_record(sketch),
            ))
        store.insert_new_pages(records)
    store.close()
    return time.perf_counter() - start


def stored_broder_labels(url: str, n: int) -> np.ndarray:
    """Each page's cluster as the detect run stored it (page p{doc}: document doc)."""
    from mirrorscope.storage.store import Store

    store = Store(url, access="read")
    labels = np.arange(n)
    for cluster in store.duplicate_clusters("broder"):
        docs = np.array([int(u.rsplit("/p", 1)[1].removesuffix(".html")) for u in cluster["members"]])
        labels[docs] = docs.min()
    store.close()
    return labels


def detect_end_to_end(p: dict[str, np.ndarray], data: Path, n: int, postgres: str) -> dict[str, float]:
    """(iv): pages written into SQLite and PostgreSQL, then ``mirror-report detect`` timed."""
    import sqlalchemy

    report = Path(sys.executable).with_name("mirror-report")
    results = {}
    schema = f"ms_bench_{uuid.uuid4().hex[:10]}"
    engine = sqlalchemy.create_engine(postgres)
    with engine.connect() as conn:
        conn.execute(sqlalchemy.text(f'CREATE SCHEMA "{schema}"'))
        conn.commit()
    urls = {"sqlite": f"sqlite:///{data / 'detect.db'}", "postgres": f"{postgres}?options=-csearch_path%3D{schema}"}
    try:
        for name, url in urls.items():
            written = write_store(url, p, data, n)
            before = load()
            start = time.perf_counter()
            out = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", str(report), "detect", "--db", url],
                                 capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if out.returncode:
                raise SystemExit(f"mirror-report detect failed on {name}:\n{out.stderr[-3000:]}")
            peak = int(out.stderr.rsplit("maxrss_kb=", 1)[1].split()[0]) * 1024 / 1e9
            lines = [line for line in out.stderr.splitlines() if line.startswith(("broder", "mirrors", "spam"))]
            precision, recall = precision_recall(stored_broder_labels(url, n), p["truth"][:n])
            print(f"detect on {name}: {n} pages written in {written:.0f} s (Store.insert_new_pages); "
                  f"mirror-report detect {seconds:.1f} s, peak RSS {peak:.2f} GB ({before}; after: {load()}); "
                  + "; ".join(lines) + f"; stored broder clusters: precision {precision:.4f} recall {recall:.4f}")
            results[name] = seconds * COMPARE_DOCS / n
            if n != COMPARE_DOCS:
                print(f"  measured at {n} pages, not {COMPARE_DOCS}: scaled linearly to {results[name]:.0f} s")
    finally:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(f'DROP SCHEMA "{schema}" CASCADE'))
            conn.commit()
        engine.dispose()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of the 1M comparison and LSH")
    parser.add_argument("--big-runs", type=int, default=1, help="runs at --docs")
    parser.add_argument("--budget", type=int, default=1 << 30, help="memory_budget of the --docs run")
    parser.add_argument("--detect-docs", type=int, default=COMPARE_DOCS)
    parser.add_argument("--postgres", default="postgresql+psycopg://127.0.0.1:5432/test")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: duckdb,lsh,detect")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--duckdb-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mapped", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--estimator", default="min_s", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_ours(args.child, args.mapped, args.estimator, args.budget if args.mapped else 1 << 29)
        return 0
    if args.duckdb_child:
        child_duckdb(args.duckdb_child)
        return 0

    skip = set(filter(None, args.skip.split(",")))
    print(f"start: {load()}, {os.cpu_count()} cores")
    folder = Path(tempfile.mkdtemp(prefix="cluster-bench-", dir=args.workdir))
    nan = float("nan")
    try:
        start = time.perf_counter()
        big = write_dataset(args.docs, folder / "big")
        print(f"data: {args.docs} documents, {np.load(folder / 'big' / 'offsets.npy')[-1]} fingerprints, "
              f"written in {time.perf_counter() - start:.0f} s ({load()})")
        ours = clustering_at_scale(folder / "big", big, args.big_runs, args.budget)
        small_n = min(COMPARE_DOCS, args.docs)
        if skip >= {"duckdb", "lsh", "detect"}:
            small, small_folder = big, folder / "big"
        elif small_n == args.docs:
            small, small_folder = big, folder / "big"
        else:
            del big
            small_folder = folder / "small"
            small = write_dataset(small_n, small_folder)
        duckdb_ratio = nan if "duckdb" in skip else duckdb_comparison(small_folder, args.runs)
        speedup = nan if "lsh" in skip else lsh_benchmark(args.runs)
        detect = ({} if "detect" in skip else
                  detect_end_to_end(small, small_folder, min(args.detect_docs, small_n), args.postgres))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"end: {load()}")
    print(
        f"docs={args.docs} cluster_s={ours['seconds']:.1f} peak_rss_gb={ours['peak']:.2f} "
        f"precision={ours['precision']:.4f} recall={ours['recall']:.4f} near_threshold_f1={ours['f1']:.4f} "
        f"duckdb_ratio={duckdb_ratio:.2f} lsh_speedup_vs_datasketch={speedup:.1f} "
        f"detect_1m_sqlite_s={detect.get('sqlite', nan):.0f} detect_1m_postgres_s={detect.get('postgres', nan):.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
