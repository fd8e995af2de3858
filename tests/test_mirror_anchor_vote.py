"""Anchor bags as an extra vote in mirror candidate generation
(``detectors.mirror_candidates``: cross-host URL pairs with matching anchor bags)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mirrorscope.detectors.mirror_candidates import ANCHOR_VOTE, candidate_pairs
from tests.helpers import pair_of, profile, score_of, site, text


def renamed_copy(seed: int, pages: dict[str, list[str]]) -> dict[str, list[str]]:
    """The same documents under other names and with other words: a mirror no path,
    name or content feature can see (a site rewritten for another server), so only
    how others link to it can."""
    rng = random.Random(seed)
    return {f"/node/{i}": text(rng) for i, _ in enumerate(pages)}


def web() -> list:
    docs = site(1, {"lib": 20}, common=False)
    return [
        profile("docs.example.org", docs),
        profile("copy.example.net", renamed_copy(2, docs)),
        profile("news.example.com", site(3, {"news": 20}, common=False)),
        profile("blog.example.com", site(4, {"posts": 20}, common=False)),
    ]


def test_without_anchor_evidence_nothing_changes() -> None:
    hosts = web()
    plain = candidate_pairs(hosts, min_score=0.0)
    assert candidate_pairs(hosts, min_score=0.0, anchor_pairs=None) == plain
    empty = candidate_pairs(hosts, min_score=0.0, anchor_pairs=([], []))
    assert [(p.a, p.b, p.score) for p in empty] == [(p.a, p.b, p.score) for p in plain]
    assert all(p.features["anchors"] == 0.0 for p in empty) and all("anchors" not in p.features for p in plain)


def test_matching_anchor_bags_make_a_candidate_of_an_unseen_mirror() -> None:
    hosts = web()
    assert score_of(candidate_pairs(hosts), "docs.example.org", "copy.example.net") == 0.0
    before = {(p.a, p.b): p.score for p in candidate_pairs(hosts, min_score=0.0)}
    # 16 URL pairs between the original and the copy (bags matching for 16 of the 20
    # pages); one stray pair joins news and blog; a same-host pair is ignored.
    first = [0] * 16 + [2, 0]
    second = [1] * 16 + [3, 0]
    found = candidate_pairs(hosts, anchor_pairs=(np.array(first), np.array(second)))
    pair = pair_of(found, "docs.example.org", "copy.example.net")
    anchors = min(16 / 20, 1.0)
    assert pair.features["anchors"] == pytest.approx(anchors)
    base = before.get((pair.a, pair.b), 0.0)
    assert pair.score == pytest.approx(base + ANCHOR_VOTE * anchors * (1 - base))
    # One stray URL pair (1/20 of the paths) is too little to make a candidate.
    assert score_of(found, "news.example.com", "blog.example.com") == score_of(candidate_pairs(hosts), "news.example.com", "blog.example.com")
    # The vote never lowers a pair: every score is at least what it was.
    with_votes = candidate_pairs(hosts, min_score=0.0, anchor_pairs=(first, second))
    for p in with_votes:
        assert p.score >= before.get((p.a, p.b), before.get((p.b, p.a), 0.0)) - 1e-12


def test_invalid_anchor_evidence_is_refused() -> None:
    hosts = web()
    with pytest.raises(ValueError):
        candidate_pairs(hosts, anchor_pairs=([0, 1], [1]))
    with pytest.raises(ValueError):
        candidate_pairs(hosts, anchor_pairs=([0], [4]))
    with pytest.raises(ValueError):
        candidate_pairs(hosts, anchor_pairs=([0], [1]), anchor_vote=1.5)
