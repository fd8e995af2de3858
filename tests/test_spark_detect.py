"""The near-duplicate job on Spark (``jobs.spark_detect``, ``mirror-report detect --engine
spark``) finds exactly what the numpy path finds: the same Broder clusters (union-find and
CENTER), super-shingle clusters, pairs with their similarities and containments, and after
the whole ``detect`` the same mirror and spam verdicts in the store. On a real crawl of the
standard sandbox and of the small real-page world (SQLite), on planted near-duplicates with
decoys and contained pages (SQLite and PostgreSQL), there also with boilerplate removal
forced (a fingerprint limit of 3 documents: truncated sketches). One local[2] SparkSession for the
module; bad input to the command is one line and exit status 2."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorscope.jobs.detect import detect
from mirrorscope.jobs.duplicates import METHODS, duplicate_results, load_sketches, write_duplicates
from mirrorscope.jobs.export import export_parquet
from mirrorscope.jobs.spark_detect import spark_duplicates, spark_job, spark_session
from mirrorscope.report.cli import main
from mirrorscope.sandbox import build_real_world, build_world
from mirrorscope.storage.store import Store
from tests.helpers import _real_pages_missing, crawl_world, mirror_report
from tests.test_detect_streamed import store  # noqa: F401  (the planted store, on SQLite and PostgreSQL)

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_session("local[2]", partitions=4) as session:
        yield session


def _crawled(world: Any, tmp: Path) -> Path:
    """A SQLite file holding a finished crawl of ``world``."""
    path = tmp / "crawl.db"
    crawl_world(world, tmp, f"sqlite:///{path}")
    return path


@pytest.fixture(scope="module")
def standard_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _crawled(build_world(0), tmp_path_factory.mktemp("standard"))


@pytest.fixture(scope="module")
def real_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = _real_pages_missing()
    if missing:
        pytest.skip(missing)
    return _crawled(build_real_world(0, small=True), tmp_path_factory.mktemp("real"))


def stored(store: Store) -> dict[str, Any]:
    """What ``detect`` left in the store, by URL: clusters, pairs, containments, mirror
    pairs and clusters, host verdicts (sets where the order is not part of the result)."""
    found: dict[str, Any] = {}
    for method in METHODS:
        found[f"{method} clusters"] = [(c["representative"], tuple(c["members"]), c["identical"]) for c in store.duplicate_clusters(method)]
        found[f"{method} pairs"] = set(store.duplicate_pairs(method))
    found["containments"] = {(c["page"], c["container"], c["containment"], c["source"]) for c in store.containment_pairs()}
    # Rows are compared but for when they were written and their row ids.
    found["mirror pairs"] = {
        tuple(sorted((k, repr(v)) for k, v in p.items() if k not in ("id", "detected_at"))) for p in store.mirror_pairs(include_none=True)
    }
    found["mirror clusters"] = sorted(sorted(map(repr, c)) for c in store.mirror_clusters())
    found["host verdicts"] = {tuple(sorted((k, repr(v)) for k, v in h.items() if k != "detected_at")) for h in store.host_verdicts()}
    return found


def _same_detection(crawl: Path, spark: Any, tmp: Path) -> dict[str, Any]:
    """Run ``detect`` with each engine on its own copy of ``crawl``; assert both stores
    hold the same; what the numpy path stored."""
    copies = {engine: tmp / f"{engine}.db" for engine in ("numpy", "spark")}
    results = {}
    for engine, path in copies.items():
        shutil.copy(crawl, path)
        store = Store(f"sqlite:///{path}")
        try:
            job = spark_job(parquet=tmp / "export", spark=spark) if engine == "spark" else None
            summary = detect(store, duplicates_job=job) if job else detect(store)
            results[engine] = (summary["duplicates"], stored(store))
        finally:
            store.close()
    assert results["spark"][0] == results["numpy"][0]
    for key, value in results["numpy"][1].items():
        assert results["spark"][1][key] == value, key
    return results["numpy"][1]


def test_both_engines_store_the_same_on_the_standard_sandbox(standard_crawl: Path, spark: Any, tmp_path: Path) -> None:
    found = _same_detection(standard_crawl, spark, tmp_path)
    # Not an empty comparison: the sandbox's mirrors make clusters, pairs and verdicts.
    assert found["broder clusters"] and found["super-shingles clusters"]
    assert found["mirror pairs"] and found["mirror clusters"] and found["host verdicts"]


def test_both_engines_store_the_same_on_real_pages(real_crawl: Path, spark: Any, tmp_path: Path) -> None:
    found = _same_detection(real_crawl, spark, tmp_path)
    assert found["broder clusters"] and found["center pairs"] and found["containments"]


def test_both_engines_find_the_same_planted_duplicates(store: Store, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """On SQLite and PostgreSQL: results equal in order too, and written as the numpy
    path's (the writer ``spark_job`` calls; the crawls above run the job itself)."""
    page_ids, arrays, unreadable = load_sketches(store)
    expected = duplicate_results(page_ids, arrays, unreadable)
    export_parquet(store, tmp_path / "export")
    found = spark_duplicates(spark, tmp_path / "export")
    assert found == expected
    assert len(expected.methods["broder"][0]) > 100 and len(expected.methods["broder"][1]) > 100
    assert len(expected.methods["super-shingles"][1]) > 10 and len(expected.contained) > 100
    summary = write_duplicates(store, found)
    assert summary["broder"]["pairs"] == len(store.duplicate_pairs("broder")) == len(expected.methods["broder"][1])
    assert len(store.duplicate_pairs("center")) == len(expected.methods["center"][1])
    assert len(store.containment_pairs()) == len(expected.contained)
    if store.engine.dialect.name == "sqlite":  # the same export again: once is enough
        # Fingerprints in more than 3 sketches dropped: sketches lose values (the
        # truncated-sketch rule of the estimate) and MOD_m samples shrink below the minimum.
        # Read through a URI, as executors on a cluster read a shared export.
        truncated = duplicate_results(page_ids, arrays, unreadable, limit=3)
        assert truncated.methods["broder"][1] != expected.methods["broder"][1]  # the limit changed the estimates
        assert spark_duplicates(spark, (tmp_path / "export").as_uri(), limit=3) == truncated


def test_an_empty_store_gives_nothing_on_both(spark: Any, tmp_path: Path, sqlite_url: str) -> None:
    opened = Store(sqlite_url)
    page_ids, arrays, unreadable = load_sketches(opened)
    export_parquet(opened, tmp_path / "export")
    opened.close()
    assert spark_duplicates(spark, tmp_path / "export") == duplicate_results(page_ids, arrays, unreadable)


def test_bad_engine_input_is_one_line(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    Store(sqlite_url).close()
    result = mirror_report("detect", "--engine", "duckdb", "--db", sqlite_url)
    assert result.returncode == 2 and result.stderr == "mirror-report: error: unknown --engine 'duckdb': numpy or spark\n"
    result = mirror_report("detect", "--parquet", str(tmp_path), "--db", sqlite_url)
    assert result.returncode == 2 and "go with --engine spark" in result.stderr and result.stderr.count("\n") == 1
    # An export of another store is refused, not read.
    (tmp_path / "other").mkdir()
    other = tmp_path / "other.db"
    opened = Store(f"sqlite:///{other}")
    from tests.test_detect_streamed import _record

    from mirrorscope.crawler.pipelines import sketch_record
    from mirrorscope.detectors.sketch import sketch_many

    opened.insert_new_pages([_record(0, sketch_record(sketch_many([["a", "b"] * 20])[0]))])
    export_parquet(opened, tmp_path / "other")
    opened.close()
    result = mirror_report("detect", "--engine", "spark", "--parquet", str(tmp_path / "other"), "--db", sqlite_url)
    assert result.returncode == 2 and "export again" in result.stderr and result.stderr.count("\n") == 1
    # Without pyspark (an import that fails, as on an install without the extra).
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert main(["detect", "--engine", "spark", "--db", sqlite_url]) == 2
    err = capsys.readouterr().err
    assert err == "mirror-report: error: --engine spark needs pyspark: pip install 'mirrorscope[spark]' (and Java 17)\n"


def test_detect_engine_spark_from_the_command_line(tmp_path: Path) -> None:
    """``mirror-report detect --engine spark`` (its own Spark, a temporary export) stores
    what ``--engine numpy`` stores, and Spark's JVM logging stays quiet."""
    from tests.helpers import prose
    from tests.test_detect_streamed import _record

    from mirrorscope.crawler.pipelines import sketch_record
    from mirrorscope.detectors.sketch import sketch_many

    # A page, a near-duplicate, an exact copy, an unrelated page, a part of the page (40%
    # of it: contained, not resembling) and an empty page.
    base = prose(1, 1000)
    documents = [base, base[:990] + prose(2, 10), list(base), prose(3, 500), base[:400], []]
    first = tmp_path / "numpy.db"
    opened = Store(f"sqlite:///{first}")
    opened.insert_new_pages([_record(n, sketch_record(k)) for n, k in enumerate(sketch_many(documents))])
    opened.close()
    shutil.copy(first, tmp_path / "spark.db")
    for engine in ("numpy", "spark"):
        result = mirror_report("detect", "--engine", engine, "--db", f"sqlite:///{tmp_path / engine}.db")
        assert result.returncode == 0, result.stderr[-2000:]
        assert "broder: 1 clusters holding 3 of 6 pages (1 pairs)" in result.stderr
        assert "spark:" not in result.stderr and "WARN" not in result.stderr.replace("WARNING: Using incubator", "")
    found = {}
    for engine in ("numpy", "spark"):
        store = Store(f"sqlite:///{tmp_path / engine}.db")
        found[engine] = stored(store)
        store.close()
    assert found["spark"] == found["numpy"] and found["numpy"]["containments"]
