"""The estimators against exact resemblance and containment over generated document pairs.

The spread is tested, not only the mean: estimate - exact must have a standard deviation
within 1.5x of the sampling theory sqrt(r(1 - r) / k) (k = s = 200 for MIN_s, 84 for the
signature, the expected sample size |A u B| / m or |A| / m for MOD_m). A weak permutation
(universal hashing with a small multiplier, say) shows up as an inflated spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mirrorscope.detectors.shingles import containment, resemblance, shingle_fingerprints
from mirrorscope.detectors.sketch import (
    DEFAULT_PARAMS,
    DocumentSketch,
    containment_mod_m,
    is_near_duplicate,
    resemblance_min_s,
    resemblance_mod_m,
    signature_agreement,
    sketch_many,
    super_shingle_matches,
)

PAIRS = 360
# Object arrays: the sampled tokens share their str objects, as words of real text do.
VOCABULARIES = [
    np.array([f"{prefix}{i}" for i in range(n)], dtype=object) for prefix, n in (("q", 4), ("s", 60), ("w", 5_000))
]


@dataclass
class Pair:
    a: list[str]
    b: list[str]
    resemblance: float
    containment: float  # of a in b
    union: int
    size_a: int
    sketch_a: DocumentSketch | None = None
    sketch_b: DocumentSketch | None = None


def substitute(rng: np.random.Generator, tokens: np.ndarray, rate: float, vocabulary: np.ndarray) -> np.ndarray:
    edited = tokens.copy()
    where = rng.random(len(tokens)) < rate
    edited[where] = vocabulary[rng.integers(0, len(vocabulary), size=int(where.sum()))]
    return edited


def rate_for(surviving: float, w: int) -> float:
    """Substitution rate that keeps about ``surviving`` of the w-shingles."""
    return 1 - surviving ** (1 / w)


def finish(pairs: list[Pair]) -> list[Pair]:
    for pair in pairs:
        fa = np.unique(shingle_fingerprints(pair.a, DEFAULT_PARAMS.w))
        fb = np.unique(shingle_fingerprints(pair.b, DEFAULT_PARAMS.w))
        pair.resemblance, pair.containment = resemblance(fa, fb), containment(fa, fb)
        pair.union = len(np.union1d(fa, fb))
        pair.size_a = len(fa)
    sketches = sketch_many([d for p in pairs for d in (p.a, p.b)])
    for pair, sa, sb in zip(pairs, sketches[0::2], sketches[1::2]):
        pair.sketch_a, pair.sketch_b = sa, sb
    return pairs


def resemblance_pairs(seed: int) -> list[Pair]:
    """Pairs whose resemblance spreads over 0.1 .. 0.95, by three kinds of edit."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(PAIRS):
        vocabulary = VOCABULARIES[i % 3]
        a = vocabulary[rng.integers(0, len(vocabulary), size=int(rng.integers(400, 2500)))]
        target = rng.uniform(0.1, 0.95)
        kept = 2 * target / (1 + target)  # r = kept / (2 - kept) when B keeps `kept` of A
        kind = i % 4
        if kind == 0:  # scattered substitutions
            b = substitute(rng, a, rate_for(kept, DEFAULT_PARAMS.w), vocabulary)
        elif kind == 1:  # one block replaced by new text
            cut = int(len(a) * (1 - kept))
            start = int(rng.integers(0, len(a) - cut + 1))
            fresh = VOCABULARIES[2][rng.integers(0, 5_000, size=cut)]
            b = np.concatenate((a[:start], fresh, a[start + cut :]))
        elif kind == 2:  # text deleted here and inserted there
            cut = int(len(a) * (1 - kept) / 2)
            start = int(rng.integers(0, len(a) - cut + 1))
            fresh = VOCABULARIES[2][rng.integers(0, 5_000, size=cut)]
            rest = np.concatenate((a[:start], a[start + cut :]))
            at = int(rng.integers(0, len(rest) + 1))
            b = np.concatenate((rest[:at], fresh, rest[at:]))
        else:  # both, lighter each
            half = np.sqrt(kept)
            b = substitute(rng, a, rate_for(half, DEFAULT_PARAMS.w), vocabulary)
            cut = int(len(b) * (1 - half))
            b = np.concatenate((b[: len(b) - cut], VOCABULARIES[2][rng.integers(0, 5_000, size=cut)]))
        pairs.append(Pair(a.tolist(), b.tolist(), 0, 0, 0, 0))
    return finish(pairs)


def containment_pairs(seed: int) -> list[Pair]:
    """A mostly inside a larger B: B = new text + A lightly edited + new text."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(PAIRS):
        vocabulary = VOCABULARIES[1 + i % 2]
        a = vocabulary[rng.integers(0, len(vocabulary), size=int(rng.integers(600, 3000)))]
        inside = substitute(rng, a, rate_for(rng.uniform(0.3, 1.0), DEFAULT_PARAMS.w), vocabulary)
        extra = rng.integers(len(a) // 4, 2 * len(a), size=2)
        before, after = (VOCABULARIES[2][rng.integers(0, 5_000, size=int(n))] for n in extra)
        b = np.concatenate((before, inside, after))
        pairs.append(Pair(a.tolist(), b.tolist(), 0, 0, 0, 0))
    return finish(pairs)


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return resemblance_pairs(2024)


@pytest.fixture(scope="module")
def contained() -> list[Pair]:
    return containment_pairs(2025)


def check_spread(estimates: np.ndarray, exact: np.ndarray, samples: np.ndarray) -> None:
    """Mean error about 0; spread within 1.5x of sqrt(p(1 - p) / samples)."""
    error = estimates - exact
    variance = exact * (1 - exact) / samples
    interior = (exact > 0.02) & (exact < 0.98)
    z = error[interior] / np.sqrt(variance[interior])
    pooled = np.sqrt(variance.mean())
    assert abs(error.mean()) < 4 * error.std() / np.sqrt(len(error)) + 1e-3, f"biased: mean error {error.mean():.4f}"
    assert error.std() <= 1.5 * pooled, f"spread {error.std():.4f} > 1.5 x theory {pooled:.4f}"
    assert z.std() <= 1.5, f"standardised spread {z.std():.2f} > 1.5"
    # Not vacuous: the estimator does err, as sampling should.
    assert z.std() > 0.3


def test_pairs_cover_the_range(pairs: list[Pair]) -> None:
    r = np.array([p.resemblance for p in pairs])
    assert len(pairs) >= 300
    assert r.min() < 0.15 and r.max() > 0.9
    counts = np.histogram(r, bins=[0.1, 0.4, 0.7, 0.96])[0]
    assert (counts >= 50).all(), counts


def test_min_s_resemblance(pairs: list[Pair]) -> None:
    estimates = np.array([resemblance_min_s(p.sketch_a, p.sketch_b) for p in pairs])
    exact = np.array([p.resemblance for p in pairs])
    check_spread(estimates, exact, np.full(len(pairs), DEFAULT_PARAMS.s))


def test_signature_agreement(pairs: list[Pair]) -> None:
    estimates = np.array([signature_agreement(p.sketch_a, p.sketch_b) for p in pairs])
    exact = np.array([p.resemblance for p in pairs])
    check_spread(estimates, exact, np.full(len(pairs), DEFAULT_PARAMS.signature_size))


def test_mod_m_resemblance(pairs: list[Pair]) -> None:
    estimates = np.array([resemblance_mod_m(p.sketch_a, p.sketch_b) for p in pairs])
    exact = np.array([p.resemblance for p in pairs])
    expected_sample = np.array([p.union for p in pairs]) / DEFAULT_PARAMS.m
    assert not np.isnan(estimates).any()
    check_spread(estimates, exact, expected_sample)


def test_mod_m_containment(contained: list[Pair]) -> None:
    estimates = np.array([containment_mod_m(p.sketch_a, p.sketch_b) for p in contained])
    exact = np.array([p.containment for p in contained])
    assert exact.min() < 0.45 and np.median(exact) > 0.5 and exact.max() > 0.95
    assert np.median([p.resemblance for p in contained]) < 0.5 * np.median(exact)  # B is much larger than A
    expected_sample = np.array([p.size_a for p in contained]) / DEFAULT_PARAMS.m
    check_spread(estimates, exact, expected_sample)


def test_super_shingles_follow_r_to_the_14(pairs: list[Pair]) -> None:
    r = np.array([p.resemblance for p in pairs])
    near = np.array([is_near_duplicate(p.sketch_a, p.sketch_b) for p in pairs])
    matches = np.array([super_shingle_matches(p.sketch_a, p.sketch_b) for p in pairs])
    # Expected matches per pair 6 r^14 (positions agree with probability r).
    assert abs(matches.sum() - (6 * r**14).sum()) < 4 * np.sqrt((6 * r**14).sum()) + 2
    assert not near[r < 0.6].any()
    assert near[r > 0.93].mean() > 0.6


def test_identical_documents_agree_everywhere(pairs: list[Pair]) -> None:
    a = pairs[0].sketch_a
    assert resemblance_min_s(a, a) == resemblance_mod_m(a, a) == containment_mod_m(a, a) == 1.0
    assert signature_agreement(a, a) == 1.0 and super_shingle_matches(a, a) == 6 and is_near_duplicate(a, a)


def test_densified_signature_is_unbiased_on_short_documents() -> None:
    """With 11 to 90 shingles most of the 84 bins are empty and borrow from others."""
    rng = np.random.default_rng(77)
    vocabulary = VOCABULARIES[2]
    pairs = []
    for _ in range(PAIRS):
        a = vocabulary[rng.integers(0, len(vocabulary), size=int(rng.integers(20, 100)))]
        b = substitute(rng, a, rng.uniform(0.0, 0.15), vocabulary)
        pairs.append(Pair(a.tolist(), b.tolist(), 0, 0, 0, 0))
    pairs = finish(pairs)
    error = np.array([signature_agreement(p.sketch_a, p.sketch_b) - p.resemblance for p in pairs])
    assert all(len(set(p.sketch_a.signature.tolist())) <= p.sketch_a.shingle_count for p in pairs)
    assert abs(error.mean()) < 4 * error.std() / np.sqrt(len(error)) + 1e-3
    # MIN_s holds every shingle of a document with at most s of them: exact.
    assert all(resemblance_min_s(p.sketch_a, p.sketch_b) == pytest.approx(p.resemblance) for p in pairs)
