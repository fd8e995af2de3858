"""Stored sketches decoded many at a time, straight into the arrays the clustering takes.

``DocumentSketch.from_bytes`` (``detectors.sketch``) decodes one sketch into one object of
five numpy arrays: over a million stored pages that is millions of small arrays and
several times the sketches' own size in memory. ``decode_sketches`` reads a batch of
serialised sketches (the format of ``DocumentSketch.to_bytes``) with a handful of numpy
passes: the fixed-size headers, joined into one table, are read through one structured
dtype, the payloads joined back to back are one u64 array, and its values are split
into the four sections by their position. Only sketches made with the expected
``SketchParams`` are accepted (others are not comparable); a blob that is not such a
sketch, or whose length disagrees with its header, is left out and reported as
``accepted[k] == False``, for the caller to decode on its own or count.

``SketchArraysBuilder`` appends decoded batches into arrays allocated once from an upper
bound on their size (the stored bytes), so loading N sketches peaks at their arrays, not
at the blobs, the objects and the arrays together. ``sketch_objects`` turns a decoded
batch into ``DocumentSketch`` objects whose arrays are views of the batch's (for the
per-page code of mirror detection), equal to what ``from_bytes`` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mirrorscope.detectors.clustering import SketchArrays
from mirrorscope.detectors.sketch import _FIELDS, _FORMAT, _MAGIC, _PREFIX, DEFAULT_PARAMS, DocumentSketch, SketchParams

__all__ = ["DecodedSketches", "SketchArraysBuilder", "decode_sketches", "sketch_objects"]

# The per-document fields of the header after the parameters: flags, token count,
# shingle count, fingerprint, |MIN_s|, |MOD_m| (the tail of ``sketch._FIELDS``).
_TAIL = np.dtype([("flags", "u1"), ("tokens", "<u8"), ("shingles", "<u8"), ("fingerprint", "<u8"),
                  ("n_min", "<u2"), ("n_mod", "<u4")])


def _header_head(params: SketchParams) -> bytes:
    """The bytes every sketch made with ``params`` starts with: magic, format, scheme and
    the parameters (the header up to its per-document tail)."""
    scheme = params.scheme.encode("ascii")
    fields = _FIELDS.pack(params.seed, params.w, params.s, params.m, params.signature_size, params.super_groups,
                          params.super_size, 0, 0, 0, 0, 0, 0)
    return _PREFIX.pack(_MAGIC, _FORMAT, len(scheme)) + scheme + fields[: _FIELDS.size - _TAIL.itemsize]


@dataclass(frozen=True, slots=True)
class DecodedSketches:
    """A batch of decoded sketches; every array but ``accepted`` is over the accepted ones."""

    #: (n,) bool: blob k is a sketch made with the expected parameters, of the right length.
    accepted: np.ndarray
    token_counts: np.ndarray
    shingle_counts: np.ndarray
    too_short: np.ndarray
    fingerprints: np.ndarray
    #: CSR MIN_s and MOD_m, (a, signature_size) signatures, (a, groups) super-shingles.
    offsets: np.ndarray
    min_s: np.ndarray
    mod_offsets: np.ndarray
    mod_m: np.ndarray
    signatures: np.ndarray
    super_shingles: np.ndarray


def decode_sketches(blobs: Sequence[bytes], params: SketchParams = DEFAULT_PARAMS) -> DecodedSketches:
    """Decode ``blobs`` (``DocumentSketch.to_bytes`` each) made with ``params``."""
    head = np.frombuffer(_header_head(params), dtype=np.uint8)
    header = head.size + _TAIL.itemsize
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    # Every header padded to full size (a short blob is refused below), as one (n, header) table.
    heads = np.frombuffer(b"".join(bytes(b[:header]).ljust(header, b"\0") for b in blobs), dtype=np.uint8)
    heads = heads.reshape(len(blobs), header)
    tail = heads[:, head.size :].copy().view(_TAIL).ravel()
    per_doc = tail["n_min"].astype(np.int64) + tail["n_mod"] + params.signature_size + params.super_groups
    accepted = (heads[:, : head.size] == head).all(axis=1) & (lengths == header + 8 * per_doc)
    tail = tail[accepted]
    # The payloads, u64 only, back to back: sections of document k follow those of k - 1.
    payload = b"".join(bytes(b[header:]) for b, ok in zip(blobs, accepted.tolist()) if ok)
    values = np.frombuffer(payload, dtype="<u8").astype(np.uint64)
    sections = np.stack((tail["n_min"].astype(np.int64), tail["n_mod"].astype(np.int64),
                         np.full(tail.size, params.signature_size), np.full(tail.size, params.super_groups)), axis=1)
    section = np.repeat(np.tile(np.arange(4, dtype=np.int8), tail.size), sections.ravel())
    return DecodedSketches(
        accepted, tail["tokens"].astype(np.int64), tail["shingles"].astype(np.int64), (tail["flags"] & 1).astype(bool),
        tail["fingerprint"].astype(np.uint64), _offsets(sections[:, 0]), values[section == 0],
        _offsets(sections[:, 1]), values[section == 1], values[section == 2].reshape(tail.size, params.signature_size),
        values[section == 3].reshape(tail.size, params.super_groups),
    )


def _grown(array: np.ndarray, needed: int) -> np.ndarray:
    """``array`` copied into one with room for at least ``needed`` rows (a quarter more)."""
    bigger = np.zeros((max(needed, array.shape[0] + array.shape[0] // 4), *array.shape[1:]), dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


def _offsets(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def sketch_objects(decoded: DecodedSketches, params: SketchParams = DEFAULT_PARAMS) -> list[DocumentSketch]:
    """The accepted sketches as ``DocumentSketch`` objects over views of ``decoded``'s arrays."""
    for array in (decoded.min_s, decoded.mod_m, decoded.signatures, decoded.super_shingles):
        array.setflags(write=False)
    bounds, mod_bounds = decoded.offsets.tolist(), decoded.mod_offsets.tolist()
    return [
        DocumentSketch(params, tokens, shingles, short, fingerprint, decoded.min_s[bounds[k] : bounds[k + 1]],
                       decoded.mod_m[mod_bounds[k] : mod_bounds[k + 1]], decoded.signatures[k], decoded.super_shingles[k])
        for k, (tokens, shingles, short, fingerprint) in enumerate(zip(
            decoded.token_counts.tolist(), decoded.shingle_counts.tolist(), decoded.too_short.tolist(),
            decoded.fingerprints.tolist(),
        ))
    ]


class SketchArraysBuilder:
    """``SketchArrays`` filled batch by batch into arrays allocated once.

    ``documents`` and ``values`` bound what will be added: the number of sketches and of
    u64 values in all of them (their stored bytes / 8 will do: it counts headers and
    signatures too). Pages of the value arrays that are never written are never touched,
    so a loose bound costs address space, not memory.
    """

    def __init__(self, documents: int, values: int, params: SketchParams = DEFAULT_PARAMS) -> None:
        self.n = self.filled = self.mod_filled = 0
        self.offsets = np.zeros(documents + 1, dtype=np.int64)
        self.mod_offsets = np.zeros(documents + 1, dtype=np.int64)
        self.min_s = np.empty(values, dtype=np.uint64)
        self.mod_m = np.empty(values, dtype=np.uint64)
        self.fingerprints = np.empty(documents, dtype=np.uint64)
        self.signatures = np.empty((documents, params.signature_size), dtype=np.uint64)
        self.super_shingles = np.empty((documents, params.super_groups), dtype=np.uint64)

    def add(self, decoded: DecodedSketches) -> None:
        """Append the accepted sketches of one batch (growing the arrays when the bounds
        given were short: sketches stored since they were taken)."""
        lo, hi = self.n, self.n + decoded.fingerprints.size
        if hi > self.fingerprints.size:
            for name in ("offsets", "mod_offsets", "fingerprints", "signatures", "super_shingles"):
                setattr(self, name, _grown(getattr(self, name), hi + 1))
        for name, used, more in (("min_s", self.filled, decoded.min_s.size), ("mod_m", self.mod_filled, decoded.mod_m.size)):
            if used + more > getattr(self, name).size:
                setattr(self, name, _grown(getattr(self, name), used + more))
        self.offsets[lo + 1 : hi + 1] = decoded.offsets[1:] + self.filled
        self.mod_offsets[lo + 1 : hi + 1] = decoded.mod_offsets[1:] + self.mod_filled
        self.min_s[self.filled : self.filled + decoded.min_s.size] = decoded.min_s
        self.mod_m[self.mod_filled : self.mod_filled + decoded.mod_m.size] = decoded.mod_m
        self.fingerprints[lo:hi] = decoded.fingerprints
        self.signatures[lo:hi] = decoded.signatures
        self.super_shingles[lo:hi] = decoded.super_shingles
        self.n, self.filled, self.mod_filled = hi, self.filled + decoded.min_s.size, self.mod_filled + decoded.mod_m.size

    def finish(self) -> SketchArrays:
        """The arrays of everything added (views: the unused tails are never touched)."""
        n = self.n
        return SketchArrays(
            self.offsets[: n + 1], self.min_s[: self.filled], self.mod_offsets[: n + 1], self.mod_m[: self.mod_filled],
            self.fingerprints[:n], self.signatures[:n], self.super_shingles[:n],
        )
