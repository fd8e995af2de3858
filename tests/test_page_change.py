"""detectors.page_change on small inputs with exact answers."""

from __future__ import annotations

import numpy as np

from mirrorscope.detectors.page_change import (
    CHANGED, FETCHED, GONE, MISSING, MOVED, NOT_MODIFIED, UNCHANGED, UNKNOWN, UNREACHABLE,
    ChangeParams, Changes, agreement, classify, find_moves, host_rates, rapid_change,
)


def _sig(values: list[int], k: int = 10) -> np.ndarray:
    """A k-position signature: ``values`` then zeros."""
    out = np.zeros(k, dtype=np.uint64)
    out[: len(values)] = values
    return out


def test_agreement_is_the_fraction_of_equal_positions() -> None:
    a = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.uint64)
    b = np.array([[1, 2, 0, 0], [5, 6, 7, 8]], dtype=np.uint64)
    assert agreement(a, b).tolist() == [0.5, 1.0]


def test_moves_join_by_host_and_take_the_best_match() -> None:
    old = np.stack([np.arange(10, dtype=np.uint64), np.arange(100, 110, dtype=np.uint64), np.arange(200, 210, dtype=np.uint64)])
    new = np.stack([
        np.arange(10, dtype=np.uint64),             # host 0: all of gone page 0
        np.r_[np.arange(100, 108), 0, 0].astype(np.uint64),  # host 1: 8 of 10 of gone page 1
        np.r_[np.arange(100, 109), 0].astype(np.uint64),     # host 1: 9 of 10 of gone page 1
        np.arange(200, 210, dtype=np.uint64),       # host 0: gone page 2 is on host 2
    ])
    target, score = find_moves(np.array([0, 1, 2]), old, np.array([0, 1, 1, 0]), new, threshold=0.8)
    assert target.tolist() == [0, 2, -1]
    assert score[:2].tolist() == [1.0, 0.9] and np.isnan(score[2])


def test_classify_every_kind() -> None:
    k = 10
    old = np.stack([_sig(list(range(1, 11))), _sig(list(range(1, 11))), _sig(list(range(1, 11))),
                    _sig(list(range(11, 21))), _sig(list(range(21, 31))), _sig(list(range(31, 41)))])
    new = np.stack([_sig([]), _sig(list(range(1, 11))), _sig([1, 2, 3, 4, 5, 6, 7]), _sig([]), _sig([]), _sig([])])
    fetch = np.array([NOT_MODIFIED, FETCHED, FETCHED, MISSING, MISSING, UNREACHABLE])
    old_fp = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint64)
    new_fp = np.array([0, 2, 9, 0, 0, 0], dtype=np.uint64)
    hosts = np.array([0, 0, 0, 1, 1, 1])
    # One new page on host 1 holding gone page 3's text; gone page 4 finds nothing.
    found = np.stack([_sig(list(range(11, 20)) + [0], k)])
    changes = classify(fetch, old_fp, new_fp, old, new, hosts, np.array([1]), found)
    assert changes.kind.tolist() == [UNCHANGED, UNCHANGED, CHANGED, MOVED, GONE, UNKNOWN]
    assert changes.resemblance[:4].tolist() == [1.0, 1.0, 0.7, 0.9]
    assert np.isnan(changes.resemblance[4:]).all()
    assert changes.moved_to.tolist() == [-1, -1, -1, 0, -1, -1]


def test_host_rates_and_rapid_change() -> None:
    # Host 0: 5 pages all changed completely; host 1: 4 pages changed completely (too few);
    # host 2: 5 pages, 3 complete changes, 1 unchanged, 1 gone.
    kind = np.array([CHANGED] * 5 + [CHANGED] * 4 + [CHANGED] * 3 + [UNCHANGED, GONE], dtype=np.int8)
    resemblance = np.array([0.0, 0.05, 0.0, 0.02, 0.09] + [0.0] * 4 + [0.0, 0.0, 0.5] + [1.0, np.nan])
    hosts = np.array([0] * 5 + [1] * 4 + [2] * 5)
    changes = Changes(kind, resemblance, np.full(kind.size, -1))
    rates = host_rates(hosts, changes, 4)
    assert rates.counts.tolist() == [[0, 5, 0, 0], [0, 4, 0, 0], [1, 3, 1, 0], [0, 0, 0, 0]]
    assert rates.change_rate[:3].tolist() == [1.0, 1.0, 0.8] and np.isnan(rates.change_rate[3])
    assert rates.compared.tolist() == [5, 4, 4, 0]
    assert rates.complete.tolist() == [5, 4, 2, 0]
    assert rates.complete_share[:3].tolist() == [1.0, 1.0, 0.5]
    assert rapid_change(rates).tolist() == [True, False, False, False]
    assert rapid_change(rates, ChangeParams(rapid_min_pages=4)).tolist() == [True, True, False, False]


def test_follow_lags_finds_the_counterparts_next_change() -> None:
    from mirrorscope.detectors.page_change import follow_lags

    # Page pair 0 changes on a at re-crawl 1, on b at 2 and 3; pair 1 on a at 1 and b at 1
    # (together); pair 2 on a at 2, never on b; pair 3 on a at 3, on b before that only.
    found = follow_lags(np.array([0, 1, 2, 3]), np.array([1, 1, 2, 3]), np.array([0, 0, 1, 3]), np.array([3, 2, 1, 1]))
    assert found.tolist() == [1, 2, -1, -1]


def test_rapid_complete_change_is_a_reason_of_the_host_verdict() -> None:
    from mirrorscope.detectors.spam import HostEvidence, host_verdict

    fired = host_verdict(HostEvidence(host="www.rewriter.org", rapid_change_share=0.9))
    assert fired.score == 0.35 and not fired.is_spam
    assert fired.messages == ["share of pages changed completely between crawls 0.9 >= 0.8"]
    assert host_verdict(HostEvidence(host="www.rewriter.org", rapid_change_share=0.5)).reasons == ()
    assert host_verdict(HostEvidence(host="www.rewriter.org")).reasons == ()
