"""Stored sketches decoded a batch at a time equal those decoded one by one."""

from __future__ import annotations

import numpy as np

from mirrorscope.detectors.clustering import sketch_arrays
from mirrorscope.detectors.sketch import DocumentSketch, SketchParams, sketch_many
from mirrorscope.detectors.sketch_columns import SketchArraysBuilder, decode_sketches, sketch_objects


def documents(seed: int, count: int) -> list[list[str]]:
    """Token lists of 0 to 600 tokens (empty and shorter-than-w documents included)."""
    rng = np.random.default_rng(seed)
    return [[f"w{t}" for t in rng.integers(0, 400, rng.integers(0, 600))] for _ in range(count)] + [[], ["one", "two"]]


def test_batch_decoding_equals_one_by_one() -> None:
    sketches = sketch_many(documents(1, 200))
    decoded = decode_sketches([k.to_bytes() for k in sketches])
    assert decoded.accepted.all()
    assert sketch_objects(decoded) == sketches
    assert [DocumentSketch.from_bytes(k.to_bytes()) for k in sketches] == sketch_objects(decoded)


def test_other_parameters_and_broken_blobs_are_refused() -> None:
    sketches = sketch_many(documents(2, 20))
    blobs = [k.to_bytes() for k in sketches]
    blobs[3] = sketch_many(documents(3, 1), SketchParams(seed=7))[0].to_bytes()
    blobs[5] = blobs[5][:-8]  # shorter than its header says
    blobs[6] = blobs[6] + b"\x00" * 8  # longer
    blobs[8] = b"MSKT"  # truncated header
    blobs[9] = b"XXXX" + blobs[9][4:]  # not a sketch
    decoded = decode_sketches(blobs)
    refused = [3, 5, 6, 8, 9]
    assert np.flatnonzero(~decoded.accepted).tolist() == refused
    assert sketch_objects(decoded) == [k for i, k in enumerate(sketches) if i not in refused]
    assert not decode_sketches([]).accepted.size


def test_builder_fills_the_arrays_of_sketch_arrays_batch_by_batch() -> None:
    sketches = sketch_many(documents(4, 300))
    blobs = [k.to_bytes() for k in sketches]
    expected = sketch_arrays(sketches)
    # Bounds from the stored bytes, and bounds far too small: the builder grows.
    for documents_bound, values_bound in ((len(blobs), sum(map(len, blobs)) // 8), (7, 100)):
        builder = SketchArraysBuilder(documents_bound, values_bound)
        for start in range(0, len(blobs), 64):
            builder.add(decode_sketches(blobs[start : start + 64]))
        built = builder.finish()
        for name in expected.__slots__:
            assert np.array_equal(getattr(built, name), getattr(expected, name)), name
