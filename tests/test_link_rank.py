"""Rank propagation (detectors.link_rank) against closed forms and hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from mirrorscope.detectors.spam_links import link_evidence
from mirrorscope.detectors.link_rank import (
    DAMPING,
    anti_trust_rank,
    pagerank,
    rank_series,
    supporters,
    trust_rank,
)


def dense_series(n: int, src: np.ndarray, dst: np.ndarray, start: np.ndarray, skip: int = 0) -> np.ndarray:
    """(1 − α)(I − αPᵀ)⁻¹ start, less the first ``skip`` terms of its series."""
    p = np.zeros((n, n))
    np.add.at(p, (src, dst), 1.0)
    out = p.sum(axis=1)
    p[out > 0] /= out[out > 0, None]
    full = np.linalg.solve(np.eye(n) - DAMPING * p.T, (1 - DAMPING) * start)
    term = (1 - DAMPING) * start
    for _ in range(skip):
        full -= term
        term = DAMPING * p.T @ term
    return full


@pytest.mark.parametrize("seed", range(5))
def test_pagerank_and_truncated_match_the_closed_form(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 25
    src, dst = rng.integers(0, n, 90), rng.integers(0, n, 90)
    uniform = np.full(n, 1 / n)
    assert np.allclose(pagerank(n, src, dst), dense_series(n, src, dst, uniform), atol=1e-9)
    assert np.allclose(pagerank(n, src, dst, skip=3), dense_series(n, src, dst, uniform, skip=3), atol=1e-9)


def test_pagerank_of_a_two_cycle() -> None:
    """0 <-> 1: x0 = 0.15/2 + 0.85 x1 and symmetric, so both are 1/2."""
    assert pagerank(2, [0, 1], [1, 0]).tolist() == pytest.approx([0.5, 0.5], abs=1e-9)


def test_trust_propagation_along_a_chain() -> None:
    """Seed 0 -> 1 -> 2, and 3 unreached: trust (1 − α)α^k at distance k (2 dangling keeps its own)."""
    trust = trust_rank(4, [0, 1], [1, 2], trusted=[0])
    a = DAMPING
    assert trust.tolist() == pytest.approx([1 - a, (1 - a) * a, (1 - a) * a * a, 0.0], abs=1e-12)


def test_trust_splits_over_out_weight() -> None:
    """Seed 0 links to 1 with weight 3 and to 2 with weight 1."""
    trust = rank_series(3, [0, 0], [1, 2], [1.0, 0, 0], weight=[3, 1])
    assert trust.tolist() == pytest.approx([0.15, 0.15 * 0.85 * 0.75, 0.15 * 0.85 * 0.25], abs=1e-12)


def test_distrust_flows_to_the_hosts_linking_to_spam() -> None:
    """1 -> 0 (condemned) and 2 -> 1: distrust goes backwards; 3, linked from 0, gets none."""
    distrust = anti_trust_rank(4, [1, 2, 0], [0, 1, 3], condemned=[0])
    a = DAMPING
    assert distrust.tolist() == pytest.approx([1 - a, (1 - a) * a, (1 - a) * a * a, 0.0], abs=1e-12)


def test_supporters_count_hosts_within_two_links() -> None:
    # 0 -> 1 -> 2 -> 3, 4 -> 2: 3 is reached from 2 in one link, from 1 and 4 in two.
    assert supporters(5, [0, 1, 2, 4], [1, 2, 3, 2]).tolist() == [0, 1, 3, 3, 0]
    assert supporters(5, [0, 1, 2, 4], [1, 2, 3, 2], distance=3).tolist() == [0, 1, 3, 4, 0]


def test_supporters_in_slices_match_all_at_once() -> None:
    rng = np.random.default_rng(7)
    n = 300
    src, dst = rng.integers(0, n, 900), rng.integers(0, n, 900)
    links = np.zeros((n, n), dtype=np.int64)
    links[src, dst] = 1
    reach = np.eye(n, dtype=np.int64)  # reach[a, b]: b within the steps so far from a
    for _ in range(2):
        reach = ((reach + reach @ links) > 0).astype(np.int64)
    expected = reach.sum(axis=0) - 1
    assert supporters(n, src, dst).tolist() == expected.tolist()
    assert supporters(n, src, dst, memory=1).tolist() == expected.tolist()  # a word of 64 at a time


def test_camouflage_links_lower_nothing() -> None:
    """Good hosts 0-3 (0 trusted) link in a ring, 3 also to spam host 4 (a comment link);
    spam hosts 4-6 (4 condemned) link to each other. Spam adding links to every good host
    changes no host's trust and raises no good host's distrust."""
    good_src, good_dst = [0, 1, 2, 3, 3], [1, 2, 3, 0, 4]
    spam_src, spam_dst = [4, 5, 6, 4], [5, 6, 4, 6]
    camouflage_src, camouflage_dst = [4, 5, 6, 4, 5, 6], [0, 1, 2, 3, 3, 3]
    before = link_evidence(7, good_src + spam_src, good_dst + spam_dst, None, trusted=[0], condemned=[4])
    after = link_evidence(7, good_src + spam_src + camouflage_src, good_dst + spam_dst + camouflage_dst, None,
                          trusted=[0], condemned=[4])
    assert [e.trust for e in after] == pytest.approx([e.trust for e in before], abs=1e-12)
    assert all(a.distrust <= b.distrust + 1e-12 for a, b in zip(after[:4], before[:4]))
    assert [e.trust for e in after[5:]] == [0.0, 0.0]  # trust stops at the condemned host
    assert before[3].distrust > 0  # the good host that links to spam carries some distrust


def test_a_store_without_links_gets_no_link_evidence() -> None:
    """A crawl whose pages link nowhere (or a store of sketches only) has an empty host graph."""
    assert supporters(0, [], []).tolist() == []
    assert link_evidence(0, [], [], None, [], []) == []
    assert [e.supporters for e in link_evidence(2, [], [], None, [0], [])] == [0, 0]
