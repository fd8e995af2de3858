"""Runs of equal keys in a sorted array, and the pairs of entries within each run.

Every pair-finding detector here works the way Broder, Glassman, Manasse and Zweig's
"Syntactic clustering of the Web" (WWW6, 1997) expands <shingle, document> pairs: sort
the entries by key, cut the sorted array into runs of equal keys, and pair the entries
of each run, g(g - 1) / 2 pairs for a run of g. LSH bands (``detectors.lsh``), anchor
LSH tables (``detectors.anchor_lsh``), posting lists of host features
(``detectors.mirror_features``) and sketch prefixes (``detectors.clustering``) all do
it, in numpy and without dicts, through the functions here.

A run can be too large to pair fully (a template's shingle on every page): with
``star_above`` such a run gives only the g - 1 pairs joining its first entry to the
others, so pairs stay linear in g. Pairs come in batches of about ``batch`` pairs,
which bounds memory on big runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["DEFAULT_PAIR_BATCH", "ramp", "run_pairs", "run_starts", "runs", "unique_sorted"]

#: Pairs per batch out of ``run_pairs``: two int64 positions each, 256 MiB a batch.
DEFAULT_PAIR_BATCH = 1 << 24


def ramp(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n_0 - 1, 0, 1, ..., n_1 - 1, ...: positions inside each segment."""
    if len(lengths) == 1:  # one segment: the common single-page call
        return np.arange(lengths[0], dtype=np.int64)
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) - (lengths.cumsum() - lengths).repeat(lengths)


def run_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each entry of a sorted array starts a run of equal keys (bool mask)."""
    return np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])) if sorted_keys.size else np.zeros(0, bool)


def runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length (int64) of each run of equal keys in a sorted array."""
    starts = np.flatnonzero(run_starts(sorted_keys))
    return starts, np.diff(np.append(starts, sorted_keys.size))


def unique_sorted(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, ascending; sorts ``keys`` in place.

    np.unique is orders of magnitude slower than sort and mask on numpy 2.4.
    """
    keys.sort()
    return keys[run_starts(keys)]


def run_pairs(
    starts: np.ndarray, lengths: np.ndarray, *, star_above: int | None = None, batch: int = DEFAULT_PAIR_BATCH
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of (left, right) positions, left < right, of the pairs within each run.

    Runs are ``[start, start + length)``; runs of one entry give nothing. A run longer
    than ``star_above`` gives only the pairs of its first entry with each other one.
    """
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    shared = lengths > 1
    starts, lengths = starts[shared], lengths[shared]
    star = np.zeros(lengths.size, bool) if star_above is None else lengths > star_above
    counts = np.where(star, lengths - 1, lengths * (lengths - 1) // 2)
    ends = np.cumsum(counts)
    first = 0
    while first < starts.size:
        last = max(first + 1, int(np.searchsorted(ends, ends[first] - counts[first] + batch, side="right")))
        yield _pairs_of(starts[first:last], lengths[first:last], star[first:last])
        first = last


def _pairs_of(starts: np.ndarray, lengths: np.ndarray, star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # The entry at offset q of a run of length g pairs with the g - 1 - q entries after
    # it; in a star run only the entry at offset 0 pairs, with all g - 1.
    position = np.repeat(starts, lengths) + ramp(lengths)
    after = np.repeat(starts + lengths, lengths) - position - 1
    after[np.repeat(star, lengths) & (position != np.repeat(starts, lengths))] = 0
    left = np.repeat(position, after)
    return left, left + 1 + ramp(after)
