"""The near-duplicate job on Spark: ``mirror-report detect --engine spark``.

The same clusters, pairs and containments as the numpy path (``jobs.duplicates``,
``detectors.clustering``), from a Parquet export (``jobs.export``), with Spark's built-in
DataFrame expressions only (no Python UDF: windows, joins, group-bys, ``explode`` and the
array functions), written back through ``jobs.duplicates.write_duplicates``. What runs
where:

* **Identical documents** (Broder et al., WWW6 1997, phase 1): equal whole-document
  fingerprints and equal non-empty sketches (or super-shingle rows) found by windows over
  each key. Only the documents in a group of two or more reach the driver, which joins the
  two relations and picks each group's representative with the numpy code
  (``detectors.clustering._collapse``): the union-find and its smallest-index labels are
  the numpy path's own.
* **Common fingerprints**: values in more than 1,000 representatives' sketches
  (``DEFAULT_MAX_DOCS_PER_FINGERPRINT``), counted by a group-by, are removed from every
  sketch by an anti-join.
* **Candidates**: representatives sharing one of their k smallest kept values (the prefix
  of ``detectors.clustering.default_prefix``: k = 20 at 0.5): ``slice`` and ``explode``
  the prefixes, self-join on the value.
* **Estimates**: Broder's MIN_s estimate |MIN_s(A u B) n A n B| / |MIN_s(A u B)| per
  candidate with ``array_union``/``array_sort``/``slice``/``array_intersect``, with the
  numpy path's truncated-sketch rule (a sketch left with s' < s values by the removal
  limits the union's sample to s'); pairs at or above the threshold go to the driver.
* **Super-shingles** (Henzinger, SIGIR 2006): representatives sharing at least 2 of their
  6 super-shingles, by ``posexplode`` and a self-join on (position, value); similarity the
  fraction shared.
* **Containment** from the MOD_m samples (Broder's |V(A) n V(B)| / |V(A)|, >= 0.8, the
  contained side with at least 10 values left after the common ones are dropped), by the
  literal <doc, doc, count> expansion as a self-join and a group-by.
* **The join**: union-find (``detectors.unionfind``) or CENTER (``detectors.center``) over
  the pairs, on the driver, on the pages that are in a pair or an identical group only
  (renumbered in page order, so smallest-index labels and CENTER's tie order are the
  numpy path's). CENTER's scan is sequential by definition.

Indices in the numpy path are positions in page id order; here page ids stand for them
(the export is in page id order, so "smallest index" is "smallest page id").

The driver holds the pairs and the pages in identical groups, not the sketches: the
sketches stay in Spark's executors. Anchor-bag similar pairs, mirror candidates and spam
run afterwards on the numpy path (``jobs.detect``); reading straight from PostgreSQL
over JDBC is not built: export first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.clustering import (
    DEFAULT_MAX_DOCS_PER_FINGERPRINT,
    DEFAULT_THRESHOLD,
    _collapse,
    default_prefix,
)
from mirrorscope.detectors.minhash import DEFAULT_S, EMPTY
from mirrorscope.detectors.sketch import DEFAULT_PARAMS
from mirrorscope.detectors.supershingles import DEFAULT_GROUP_SIZE, DEFAULT_GROUPS, NEAR_DUPLICATE_MATCHES, super_shingles
from mirrorscope.detectors.unionfind import connected_components
from mirrorscope.jobs.duplicates import DuplicateResults, cluster_rows, scored, write_duplicates
from mirrorscope.jobs.export import MANIFEST, ExportError, export_parquet, from_ordered, read_manifest, to_ordered
from mirrorscope.storage.store import Store

__all__ = ["SparkUnavailable", "check_spark", "detect_duplicates_spark", "spark_duplicates", "spark_job", "spark_session"]

#: Containment as the numpy path finds it (``detectors.clustering.containment_pairs``' defaults).
CONTAINMENT_THRESHOLD = 0.8
CONTAINMENT_MIN_SAMPLE = 10
# Only Spark's errors reach the console: its INFO and WARN lines would drown the job's.
# Spark's own loggers are named at the root's level: Spark takes PySpark for a shell and,
# unless its logger is configured so, sets it to WARN and announces it.
_LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
"""


class SparkUnavailable(RuntimeError):
    """pyspark or Java is missing, or Spark did not start (one line)."""


def check_spark() -> None:
    """SparkUnavailable unless pyspark imports and a Java runtime is found (before any work)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable("--engine spark needs pyspark: pip install 'mirrorscope[spark]' (and Java 17)") from None
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and Path(java_home, "bin", "java").is_file()) and shutil.which("java") is None:
        raise SparkUnavailable("--engine spark needs Java 17: no java on PATH and no JAVA_HOME (apt-get install openjdk-17-jre-headless)")


@contextmanager
def spark_session(master: str = "local[2]", partitions: int = 8, memory: str = "2g") -> Iterator[Any]:
    """A SparkSession on ``master``, stopped afterwards, with Spark's logging at ERROR.

    ``partitions`` is ``spark.sql.shuffle.partitions``: Spark's 200 are far too many for
    a few cores (adaptive execution merges small ones, but not for free).
    """
    check_spark()
    from pyspark.sql import SparkSession

    # Spark otherwise binds to the address the host name resolves to, which may not be loopback.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="mirrorscope-spark-") as scratch:
        log4j = Path(scratch, "log4j2.properties")
        log4j.write_text(_LOG4J)
        builder = (
            SparkSession.builder.master(master).appName("mirrorscope-detect")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(partitions))
            .config("spark.driver.memory", memory)
            .config("spark.local.dir", scratch)
            .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile=file:{log4j}")
        )
        try:
            spark = builder.getOrCreate()
        except Exception as exc:  # Java missing or the JVM did not start: py4j says so in many ways
            raise SparkUnavailable(f"Spark did not start on {master}: {str(exc).strip().splitlines()[0]}") from None
        try:
            yield spark
        finally:
            spark.stop()


def _ids(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


class _Groups:
    """Identical groups of one clustering, from the rows of the pages in a group of two
    or more (``_collapse`` on them, renumbered in page order)."""

    def __init__(self, rows: list[Any]) -> None:
        rows = sorted(rows, key=lambda r: r["page_id"])
        self.page_ids = _ids([r["page_id"] for r in rows])
        self.whole = from_ordered(_ids([r["fingerprint"] for r in rows]))
        same = np.searchsorted(self.page_ids, _ids([r["same"] for r in rows]))
        filled = np.flatnonzero(np.array([r["filled"] for r in rows], dtype=bool))
        _, self.combined, reps, self.anchor = _collapse(same, self.whole, filled)
        chosen = np.zeros(self.page_ids.size, dtype=bool)
        chosen[reps] = True
        #: Pages with a sketch that are not their group's representative: left out of the pairs.
        self.not_representatives = self.page_ids[~chosen & np.isin(np.arange(self.page_ids.size), filled)].tolist()


def _identical(frame: Any, key: str, filled: Any) -> _Groups:
    """The identical groups of ``frame`` (page_id, fingerprint, ``key``): equal whole
    fingerprints, or equal ``key`` among the pages where ``filled`` holds."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_fingerprint, by_key = Window.partitionBy("fingerprint"), Window.partitionBy(key)
    keyed = F.when(F.col("filled"), F.col("page_id"))
    rows = (
        frame.withColumn("filled", filled)
        .withColumn("fingerprint_count", F.count(F.lit(1)).over(by_fingerprint))
        .withColumn("key_count", F.count(keyed).over(by_key))
        .withColumn("same", F.when(F.col("filled"), F.min(keyed).over(by_key)).otherwise(F.col("page_id")))
        .where((F.col("fingerprint_count") > 1) | (F.col("filled") & (F.col("key_count") > 1)))
        .select("page_id", "fingerprint", "same", "filled")
        .collect()
    )
    return _Groups(rows)


def _representatives(frame: Any, groups: _Groups, filled: Any) -> Any:
    """The pages with a sketch that represent their identical group."""
    from pyspark.sql import functions as F

    kept = frame.where(filled)
    if groups.not_representatives:
        spark = frame.sparkSession
        others = spark.createDataFrame([(p,) for p in groups.not_representatives], "page_id long")
        kept = kept.join(F.broadcast(others), "page_id", "left_anti")
    return kept


def _dropped(values: Any, documents: int, limit: int) -> Any | None:
    """The values (column ``v`` of one row per document and value) in more than ``limit``
    documents, or None when there are none (so no anti-join is needed)."""
    from pyspark.sql import functions as F

    if documents <= limit:
        return None
    common = values.groupBy("v").count().where(F.col("count") > limit).select("v").cache()
    if common.isEmpty():
        return None
    return common


def _join(
    pairs: list[Any], groups: _Groups, method: str, similarity: str
) -> tuple[list[tuple[int, list[int], bool]], list[tuple[int, int, float]]]:
    """Clusters and pairs of one method from the pairs above the threshold (a, b,
    similarity, fa, fb: the pages' whole fingerprints) and the identical groups, with the
    numpy path's union-find or CENTER on the pages involved, renumbered in page order."""
    pairs = sorted(pairs, key=lambda r: (r["a"], r["b"]))
    a, b = _ids([r["a"] for r in pairs]), _ids([r["b"] for r in pairs])
    weight = np.array([r[similarity] for r in pairs], dtype=np.float64)
    nodes, first = np.unique(np.concatenate((groups.page_ids, a, b)), return_index=True)
    whole = from_ordered(_ids([*to_ordered(groups.whole).tolist(), *(r["fa"] for r in pairs), *(r["fb"] for r in pairs)]))[first]
    n, in_groups = nodes.size, np.searchsorted(nodes, groups.page_ids)
    left, right = np.searchsorted(nodes, a), np.searchsorted(nodes, b)
    if method == "union-find":
        combined = np.arange(n, dtype=np.int64)
        combined[in_groups] = in_groups[groups.combined]
        labels = connected_components(n, left, right, labels=combined)
    else:
        anchor = np.arange(n, dtype=np.int64)
        anchor[in_groups] = in_groups[groups.anchor]
        labels = center_clusters(n, left, right, weight)[anchor]
    return cluster_rows(labels, nodes, whole), scored(nodes, left, right, weight)


def _broder_pairs(reps: Any, threshold: float, s: int, limit: int) -> list[Any]:
    """Pairs of representatives whose MIN_s estimate is at least ``threshold``, with the
    estimate and both whole fingerprints (``cluster_sketches``' phases 2-4)."""
    from pyspark.sql import functions as F

    reps = reps.select("page_id", "fingerprint", "min_s", F.size("min_s").alias("full")).cache()
    count = reps.count()
    values = reps.select("page_id", F.explode("min_s").alias("v"))
    dropped = _dropped(values, count, limit)
    if dropped is None:
        kept = reps.withColumn("kept", F.col("min_s"))
    else:
        # A sketch left without values keeps an empty one (it still counts for its length).
        rebuilt = values.join(F.broadcast(dropped), "v", "left_anti").groupBy("page_id").agg(
            F.array_sort(F.collect_list("v")).alias("kept"))
        kept = reps.join(rebuilt, "page_id", "left").withColumn(
            "kept", F.coalesce(F.col("kept"), F.array().cast("array<bigint>")))
    kept = kept.select("page_id", "fingerprint", "kept", "full", F.size("kept").alias("size")).cache()
    # The numpy path takes max(s, the longest kept sketch): a MIN_s sketch holds at most s
    # values (the export's manifest vouches for s), so that is s, without a pass over them.
    k = default_prefix(threshold, s)
    prefix = kept.select("page_id", F.explode(F.slice("kept", 1, k)).alias("v"))
    left, right = prefix.alias("l"), prefix.alias("r")
    candidates = (
        left.join(right, (F.col("l.v") == F.col("r.v")) & (F.col("l.page_id") < F.col("r.page_id")))
        .select(F.col("l.page_id").alias("a"), F.col("r.page_id").alias("b")).distinct()
    )
    A = kept.select(*(F.col(c).alias(f"{c}_a") for c in ("page_id", "fingerprint", "kept", "full", "size")))
    B = kept.select(*(F.col(c).alias(f"{c}_b") for c in ("page_id", "fingerprint", "kept", "full", "size")))
    joined = candidates.join(A, F.col("a") == F.col("page_id_a")).join(B, F.col("b") == F.col("page_id_b"))
    # The union's sample: s values, fewer when a sketch holding s values lost some to
    # the common ones (beyond its s' kept values it no longer knows its document).
    unbounded = F.lit(2**31 - 1)
    s_pair = F.least(
        F.lit(s),
        F.when(F.col("full_a") >= s, F.col("size_a")).otherwise(unbounded),
        F.when(F.col("full_b") >= s, F.col("size_b")).otherwise(unbounded),
    )
    union = F.array_sort(F.array_union("kept_a", "kept_b"))
    inside = F.size(F.array_intersect(F.array_intersect(F.slice(union, 1, s_pair), F.col("kept_a")), F.col("kept_b")))
    sample = F.least(s_pair, F.size(union))
    estimate = F.when(sample > 0, inside / sample).otherwise(F.lit(0.0))
    return (
        joined.select("a", "b", estimate.alias("similarity"), F.col("fingerprint_a").alias("fa"), F.col("fingerprint_b").alias("fb"))
        .where(F.col("similarity") >= threshold)
        .collect()
    )


def _super_shingle_pairs(reps: Any, min_matches: int, groups: int) -> list[Any]:
    """Pairs of representatives sharing at least ``min_matches`` super-shingles, with the
    fraction shared (``cluster_super_shingles``)."""
    from pyspark.sql import functions as F

    spread = reps.select("page_id", "fingerprint", F.posexplode("super_shingles").alias("g", "v"))
    left, right = spread.alias("l"), spread.alias("r")
    on = (F.col("l.g") == F.col("r.g")) & (F.col("l.v") == F.col("r.v")) & (F.col("l.page_id") < F.col("r.page_id"))
    return (
        left.join(right, on)
        .groupBy(F.col("l.page_id").alias("a"), F.col("r.page_id").alias("b"), F.col("l.fingerprint").alias("fa"),
                 F.col("r.fingerprint").alias("fb"))
        .count()
        .where(F.col("count") >= min_matches)
        .select("a", "b", "fa", "fb", (F.col("count") / groups).alias("similarity"))
        .collect()
    )


def _containments(sketches: Any, documents: int, limit: int) -> list[tuple[int, int, float]]:
    """(page, container, containment) from the MOD_m samples, pages of different whole
    fingerprints only, by (page, container) (``containment_pairs`` and the numpy job)."""
    from pyspark.sql import functions as F

    values = sketches.select("page_id", F.explode("mod_m").alias("v"))
    dropped = _dropped(values, documents, limit)
    if dropped is not None:
        values = values.join(F.broadcast(dropped), "v", "left_anti")
    values = values.cache()
    sizes = values.groupBy("page_id").agg(F.count(F.lit(1)).alias("size"))
    left, right = values.alias("l"), values.alias("r")
    common = (
        left.join(right, (F.col("l.v") == F.col("r.v")) & (F.col("l.page_id") < F.col("r.page_id")))
        .groupBy(F.col("l.page_id").alias("x"), F.col("r.page_id").alias("y")).count()
    )
    # Each unordered pair gives both directions: "page" is the contained side.
    both = common.select(F.col("x").alias("page"), F.col("y").alias("container"), "count").unionByName(
        common.select(F.col("y").alias("page"), F.col("x").alias("container"), "count"))
    whole = sketches.select("page_id", "fingerprint")
    rows = (
        both.join(sizes, F.col("page") == F.col("page_id")).drop("page_id")
        .where(F.col("size") >= CONTAINMENT_MIN_SAMPLE)
        .withColumn("containment", F.col("count") / F.col("size"))
        .where(F.col("containment") >= CONTAINMENT_THRESHOLD)
        .join(whole.select(F.col("page_id").alias("page"), F.col("fingerprint").alias("fp")), "page")
        .join(whole.select(F.col("page_id").alias("container"), F.col("fingerprint").alias("fc")), "container")
        .where(F.col("fp") != F.col("fc"))
        .select("page", "container", "containment")
        .collect()
    )
    values.unpersist()
    return sorted((r["page"], r["container"], round(r["containment"], 4)) for r in rows)


def spark_duplicates(
    spark: Any,
    directory: str | Path,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Callable[[str], None] | None = None,
    limit: int = DEFAULT_MAX_DOCS_PER_FINGERPRINT,
) -> DuplicateResults:
    """Broder's clusters (union-find and CENTER), super-shingle clusters and containments
    of the sketches in the export at ``directory`` (a local directory, or a URI Spark
    reads: hdfs://, s3a://, file://), as ``duplicate_results`` finds them."""
    from pyspark.sql import functions as F

    say = progress or (lambda _: None)
    where = str(directory).rstrip("/")
    if "://" in where:  # hdfs://, s3a://, file://: what every executor of a cluster reads
        try:
            text = spark.read.text(f"{where}/{MANIFEST}", wholetext=True).first()[0]
        except Exception:  # Spark's AnalysisException for a missing path, or a file system's own
            text = ""
        manifest = read_manifest(where, text)
    else:
        manifest = read_manifest(where)
    sketches = spark.read.parquet(f"{where}/sketches.parquet").cache()
    n = sketches.count()
    say(f"{n} sketches read from the Parquet export")
    methods: dict[str, tuple[list[tuple[int, list[int], bool]], list[tuple[int, int, float]]]] = {}
    if n:
        has_sketch = F.size("min_s") > 0
        groups = _identical(sketches.select("page_id", "fingerprint", "min_s"), "min_s", has_sketch)
        reps = _representatives(sketches, groups, has_sketch)
        pairs = _broder_pairs(reps, threshold, DEFAULT_S, limit)
        say(f"broder: {len(pairs)} pairs at or above {threshold}")
        methods["broder"] = _join(pairs, groups, "union-find", "similarity")
        methods["center"] = _join(pairs, groups, "center", "similarity")
        empty = to_ordered(super_shingles(np.full((1, DEFAULT_GROUPS * DEFAULT_GROUP_SIZE), EMPTY, dtype=np.uint64)))[0]
        has_rows = F.col("super_shingles") != F.array(*(F.lit(int(v)) for v in empty)).cast("array<bigint>")
        groups = _identical(sketches.select("page_id", "fingerprint", "super_shingles"), "super_shingles", has_rows)
        reps = _representatives(sketches, groups, has_rows)
        pairs = _super_shingle_pairs(reps, NEAR_DUPLICATE_MATCHES, DEFAULT_GROUPS)
        methods["super-shingles"] = _join(pairs, groups, "union-find", "similarity")
        contained = _containments(sketches, n, limit)
    else:
        methods = {method: ([], []) for method in ("broder", "center")}
        contained = []
    sketches.unpersist()
    return DuplicateResults(n, int(manifest.get("sketches_unreadable", 0)), threshold, methods, contained)


def detect_duplicates_spark(
    store: Store,
    spark: Any,
    directory: str | Path,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``spark_duplicates`` over the export, written to ``store`` as the numpy job writes."""
    return write_duplicates(store, spark_duplicates(spark, directory, threshold, progress), progress)


@contextmanager
def _export(store: Store, parquet: str | Path | None, say: Callable[[str], None]) -> Iterator[Path]:
    """The export Spark reads: ``parquet`` when it holds one of this store (same sketch
    and page counts), a new one there when it is new or empty, else a temporary one."""
    if parquet is None:
        with tempfile.TemporaryDirectory(prefix="mirrorscope-export-") as scratch:
            export_parquet(store, scratch, say)
            yield Path(scratch)
        return
    target = Path(parquet)
    if (target / MANIFEST).is_file():
        manifest = read_manifest(target)
        exported = manifest["tables"]["sketches"] + manifest["sketches_left_out"], manifest["tables"]["pages"]
        stored = store.sketch_totals(DEFAULT_PARAMS.scheme)[0], store.page_count()
        if exported != stored:
            raise ExportError(
                f"--parquet {parquet} holds an export of {exported[1]} pages and {exported[0]} sketches, the store "
                f"{stored[1]} and {stored[0]}: export again (mirror-report export) or name a new directory"
            )
        say(f"reading the Parquet export in {parquet}")
    else:
        export_parquet(store, target, say)
    yield target


def spark_job(master: str = "local[2]", parquet: str | Path | None = None, spark: Any = None) -> Callable[..., dict[str, Any]]:
    """The near-duplicate job of ``jobs.detect`` on Spark at ``master``: export (or read
    the export in ``parquet``), cluster on Spark, write through ``write_duplicates``.
    Spark is started for the job and stopped before the next one, unless a running
    ``spark`` session is given."""

    def job(store: Store, threshold: float = DEFAULT_THRESHOLD, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        say = progress or (lambda _: None)
        with _export(store, parquet, say) as directory:
            if spark is not None:
                return detect_duplicates_spark(store, spark, directory, threshold, say)
            with spark_session(master) as session:
                say(f"clustering near-duplicate pages on Spark ({master})")
                return detect_duplicates_spark(store, session, directory, threshold, say)

    return job
