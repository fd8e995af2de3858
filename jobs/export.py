"""``mirror-report export --parquet DIR``: the store's sketches, pages, hosts and links as
Parquet files, the input of the detection jobs on Spark (``jobs.spark_detect``) or any
other engine that reads Parquet.

Written with pyarrow a store batch at a time (``Store.stream_batch`` rows), one row group
each, so memory stays bounded by a batch whatever the store's size:

* ``sketches.parquet``: per page with a readable sketch of the default parameters (the
  ones ``jobs.duplicates`` clusters), in page id order: ``page_id``, ``fingerprint`` (the
  whole document's), ``min_s`` (the MIN_s sketch, ascending), ``mod_m`` (the MOD_m
  sample, ascending) and ``super_shingles`` (6 values).
* ``hosts.parquet``, ``pages.parquet``, ``links.parquet``: the columns of
  ``storage.export.EXPORT_COLUMNS`` (page fingerprints as stored: two's complement).
* ``manifest.json``: counts (with the sketches left out: of other parameters, or
  unreadable), the sketch parameters and the encoding below.

Sketch values are unsigned 64-bit; Spark has no unsigned type and reads Parquet's
UINT_64 as DECIMAL(20, 0), slow to sort and join. They are written as int64 with the top
bit flipped (``to_ordered``: v XOR 2^63), which keeps order: the signed order of the
encoded values is the unsigned order of the values, so "the k smallest" and every sort
mean the same on both sides, and equality is untouched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mirrorscope.detectors.clustering import SketchArrays
from mirrorscope.detectors.sketch import DEFAULT_PARAMS
from mirrorscope.detectors.sketch_columns import decode_sketches
from mirrorscope.jobs.duplicates import unreadable_count
from mirrorscope.storage.export import EXPORT_COLUMNS
from mirrorscope.storage.store import Store

__all__ = ["MANIFEST", "ExportError", "export_parquet", "from_ordered", "read_manifest", "sketch_batch", "to_ordered",
           "write_sketches"]

MANIFEST = "manifest.json"
#: What the manifest says the sketch values are (``to_ordered``).
ENCODING = "uint64 xor 2^63 as int64 (order-preserving)"
_FLIP = np.uint64(1 << 63)
_TABLES = ("sketches", "hosts", "pages", "links")


class ExportError(ValueError):
    """The export directory cannot be written or read as an export (one line)."""


def to_ordered(values: np.ndarray) -> np.ndarray:
    """uint64 values as int64 in the same order (top bit flipped)."""
    return (np.asarray(values, dtype=np.uint64) ^ _FLIP).view(np.int64)


def from_ordered(values: np.ndarray) -> np.ndarray:
    """The inverse of ``to_ordered``."""
    return np.asarray(values, dtype=np.int64).view(np.uint64) ^ _FLIP


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401  (the submodule is used through ``pyarrow``)
    except ImportError:
        raise ExportError("the Parquet export needs pyarrow: pip install 'mirrorscope[spark]'") from None
    return pyarrow


def _lists(pa: Any, offsets: np.ndarray, values: np.ndarray) -> Any:
    """A list<int64> column from CSR arrays (no Python object per value)."""
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(to_ordered(values)))


def sketch_batch(page_ids: np.ndarray, arrays: SketchArrays) -> Any:
    """One record batch of ``sketches.parquet`` from sketches as the clustering takes them."""
    pa = _pyarrow()
    groups = arrays.super_shingles.shape[1]
    return pa.RecordBatch.from_pydict({
        "page_id": pa.array(np.asarray(page_ids, dtype=np.int64)),
        "fingerprint": pa.array(to_ordered(arrays.fingerprints)),
        "min_s": _lists(pa, arrays.offsets, arrays.min_s),
        "mod_m": _lists(pa, arrays.mod_offsets, arrays.mod_m),
        "super_shingles": _lists(pa, np.arange(page_ids.size + 1) * groups, arrays.super_shingles.ravel()),
    }, schema=_schema(pa, "sketches"))


def write_sketches(path: str | Path, page_ids: np.ndarray, arrays: SketchArrays, batch: int = 1 << 16) -> None:
    """``sketches.parquet`` from arrays (``benchmarks/spark_scale.py``: sketches that were
    never in a store), ``batch`` documents a row group."""
    pa = _pyarrow()
    with pa.parquet.ParquetWriter(path, _schema(pa, "sketches")) as writer:
        for lo in range(0, page_ids.size, batch):
            hi = min(page_ids.size, lo + batch)
            start, end, mod_start, mod_end = arrays.offsets[lo], arrays.offsets[hi], arrays.mod_offsets[lo], arrays.mod_offsets[hi]
            part = SketchArrays(arrays.offsets[lo : hi + 1] - start, arrays.min_s[start:end],
                                arrays.mod_offsets[lo : hi + 1] - mod_start, arrays.mod_m[mod_start:mod_end],
                                arrays.fingerprints[lo:hi], arrays.signatures[lo:hi], arrays.super_shingles[lo:hi])
            writer.write_batch(sketch_batch(page_ids[lo:hi], part))


def _sketch_batches(store: Store) -> Iterator[tuple[Any, int, int]]:
    """Record batches of the readable default-parameter sketches, how many sketches each
    batch left out (other parameters, not comparable, or unreadable: ``jobs.duplicates``
    leaves them out too) and how many of those were unreadable."""
    for ids, blobs in store.sketch_blob_batches(DEFAULT_PARAMS.scheme):
        decoded = decode_sketches(blobs)
        arrays = SketchArrays(decoded.offsets, decoded.min_s, decoded.mod_offsets, decoded.mod_m, decoded.fingerprints,
                              decoded.signatures, decoded.super_shingles)
        refused = [b for b, ok in zip(blobs, decoded.accepted.tolist()) if not ok]
        yield sketch_batch(np.asarray(ids, dtype=np.int64)[decoded.accepted], arrays), len(refused), unreadable_count(refused)


_SKETCH_SCHEMA = {"page_id": "int64", "fingerprint": "int64", "min_s": "list", "mod_m": "list", "super_shingles": "list"}


def _schema(pa: Any, table: str) -> Any:
    if table == "sketches":
        return pa.schema([(name, pa.int64() if kind == "int64" else pa.list_(pa.int64())) for name, kind in _SKETCH_SCHEMA.items()])
    types = {"id": pa.int64(), "host_id": pa.int64(), "source_page_id": pa.int64(), "port": pa.int32(),
             "depth": pa.int32(), "status": pa.int32(), "position": pa.int32(), "fingerprint": pa.int64(),
             "word_count": pa.int32()}
    return pa.schema([(c.name, types.get(c.name, pa.string())) for c in EXPORT_COLUMNS[table]])


def _check_directory(directory: Path) -> None:
    """Refuse a directory that holds something other than an earlier export (never
    overwrite a user's files)."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"--parquet {directory} is not a directory")
    if directory.is_dir():
        ours = {MANIFEST} | {f"{t}.parquet" for t in _TABLES}
        foreign = sorted(p.name for p in directory.iterdir() if p.name not in ours)
        if foreign:
            raise ExportError(f"--parquet {directory} holds other files ({foreign[0]}, ...): name a new or empty directory")
    elif not directory.parent.is_dir():
        raise ExportError(f"--parquet {directory}: directory {directory.parent} does not exist")


def export_parquet(store: Store, directory: str | Path, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write the export into ``directory`` (created; an earlier export there is
    replaced); the manifest, which holds the row counts."""
    pa = _pyarrow()
    say = progress or (lambda _: None)
    target = Path(directory)
    _check_directory(target)
    target.mkdir(exist_ok=True)
    (target / MANIFEST).unlink(missing_ok=True)  # an export cut short has no manifest
    counts: dict[str, int] = {}
    left_out = unreadable = 0
    for table in _TABLES:
        schema = _schema(pa, table)
        rows = 0
        with pa.parquet.ParquetWriter(target / f"{table}.parquet", schema) as writer:
            if table == "sketches":
                for batch, refused, broken in _sketch_batches(store):
                    writer.write_batch(batch)
                    rows += batch.num_rows
                    left_out, unreadable = left_out + refused, unreadable + broken
            else:
                names = schema.names
                for batch in store.export_batches(table):
                    columns = list(zip(*batch))
                    writer.write_batch(pa.RecordBatch.from_arrays(
                        [pa.array(col, type=schema.field(k).type) for k, col in enumerate(columns)], names=names))
                    rows += len(batch)
        counts[table] = rows
        say(f"{table}: {rows} rows exported")
    manifest = {"tables": counts, "sketches_left_out": left_out, "sketches_unreadable": unreadable, "sketch_encoding": ENCODING, "sketch_params": _params()}
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _params() -> dict[str, Any]:
    p = DEFAULT_PARAMS
    return {"scheme": p.scheme, "seed": p.seed, "w": p.w, "s": p.s, "m": p.m, "signature_size": p.signature_size,
            "super_groups": p.super_groups, "super_size": p.super_size}


def read_manifest(directory: str | Path, text: str | None = None) -> dict[str, Any]:
    """The manifest of a finished export (``text``: the manifest's contents, read by the
    caller from elsewhere than a local directory); ExportError if ``directory`` holds
    none or one made with other sketch parameters."""
    try:
        if text is None:
            text = (Path(directory) / MANIFEST).read_text(encoding="utf-8")
        manifest = json.loads(text)
    except (OSError, ValueError):
        raise ExportError(f"--parquet {directory} holds no finished export (no readable {MANIFEST})") from None
    if not isinstance(manifest, dict) or manifest.get("sketch_params") != _params() or manifest.get("sketch_encoding") != ENCODING:
        raise ExportError(f"--parquet {directory} was exported with other sketch parameters: export again")
    return manifest
