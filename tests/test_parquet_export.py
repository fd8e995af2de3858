"""``mirror-report export --parquet``: what the Parquet files hold equals what the numpy
job loads from the store (the same pages, sketches, whole-document fingerprints and
super-shingles, in page order, values order-preserved), on SQLite and PostgreSQL, written
in batches far smaller than the store; a directory of someone else's files is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mirrorscope.jobs.duplicates import load_sketches
from mirrorscope.jobs.export import ExportError, export_parquet, from_ordered, read_manifest, to_ordered
from mirrorscope.storage.store import Store
from tests.helpers import mirror_report
from tests.test_detect_streamed import store  # noqa: F401  (the planted store fixture)


def _csr(column: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(column) + 1, dtype=np.int64)
    np.cumsum([len(v) for v in column], out=offsets[1:])
    values = np.array([x for v in column for x in v], dtype=np.int64)
    return offsets, from_ordered(values)


def test_the_export_holds_what_the_numpy_job_loads(store: Store, tmp_path: Path) -> None:  # noqa: F811
    manifest = export_parquet(store, tmp_path / "export")
    page_ids, arrays, unreadable = load_sketches(store)
    sketches = pq.read_table(tmp_path / "export" / "sketches.parquet")
    # One row group per store batch (stream_batch = 333): never the whole table at once.
    assert pq.ParquetFile(tmp_path / "export" / "sketches.parquet").num_row_groups == -(-1343 // 333)
    assert manifest["tables"]["sketches"] == page_ids.size == sketches.num_rows == 1341
    # One unreadable, one of other parameters (not comparable).
    assert manifest["sketches_left_out"] == 2 and manifest["sketches_unreadable"] == unreadable == 1
    assert sketches.column("page_id").to_pylist() == page_ids.tolist()
    assert np.array_equal(from_ordered(sketches.column("fingerprint").to_numpy()), arrays.fingerprints)
    offsets, values = _csr(sketches.column("min_s").to_pylist())
    assert np.array_equal(offsets, arrays.offsets) and np.array_equal(values, arrays.min_s)
    offsets, values = _csr(sketches.column("mod_m").to_pylist())
    assert np.array_equal(offsets, arrays.mod_offsets) and np.array_equal(values, arrays.mod_m)
    supers = from_ordered(np.array(sketches.column("super_shingles").to_pylist(), dtype=np.int64))
    assert np.array_equal(supers, arrays.super_shingles)
    pages = pq.read_table(tmp_path / "export" / "pages.parquet")
    assert pages.num_rows == manifest["tables"]["pages"] == 1343
    assert pages.column("url").to_pylist() == [p["url"] for p in store.pages()]
    assert pq.read_table(tmp_path / "export" / "hosts.parquet").num_rows == manifest["tables"]["hosts"] == 14
    assert read_manifest(tmp_path / "export") == manifest


def test_encoded_values_keep_their_unsigned_order() -> None:
    values = np.array([0, 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1], dtype=np.uint64)
    encoded = to_ordered(values)
    assert encoded.tolist() == [-(2**63), -(2**63) + 1, -(2**62), -1, 0, 2**63 - 1]
    assert np.array_equal(from_ordered(encoded), values)


def test_a_directory_of_other_files_is_refused(sqlite_url: str, tmp_path: Path) -> None:
    Store(sqlite_url).close()
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(ExportError, match="holds other files"):
        export_parquet(Store(sqlite_url), tmp_path)
    with pytest.raises(ExportError, match="no finished export"):
        read_manifest(tmp_path)
    result = mirror_report("export", "--parquet", str(tmp_path), "--db", sqlite_url)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "holds other files" in result.stderr
    assert (tmp_path / "mine.txt").read_text() == "keep me"
