"""Union-find components and CENTER clustering against plain Python references."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.unionfind import connected_components


def reference_components(n: int, edges: list[tuple[int, int]]) -> list[int]:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    roots = [find(x) for x in range(n)]
    smallest: dict[int, int] = {}
    for x, r in enumerate(roots):
        smallest.setdefault(r, x)
    return [smallest[r] for r in roots]


def reference_center(n: int, pairs: list[tuple[int, int, float]]) -> list[int]:
    """Haveliwala et al.'s scan, literally: descending similarity, ties by (i, j)."""
    state = ["free"] * n
    centre = list(range(n))
    for u, v, _ in sorted((p for p in pairs if p[0] != p[1]), key=lambda p: (-p[2], p[0], p[1])):
        if state[u] == "free" and state[v] == "free":
            state[u], state[v], centre[v] = "centre", "member", u
        elif state[u] == "centre" and state[v] == "free":
            state[v], centre[v] = "member", u
        elif state[u] == "free" and state[v] == "centre":
            state[u], centre[u] = "member", v
    return centre


def test_chain_union_find_joins_it_center_does_not() -> None:
    # a ~ b and b ~ c, but a and c are not similar.
    a, b, c = 0, 1, 2
    i, j, sim = [a, b], [b, c], [0.9, 0.8]
    assert connected_components(3, i, j).tolist() == [0, 0, 0]
    assert center_clusters(3, i, j, sim).tolist() == [a, a, c]


def test_center_hand_made() -> None:
    # 0-1 strongest: 0 centre, 1 member. 2-1 skipped (1 is a member). 2-0: 2 joins centre 0.
    # 3-4: new centre 3 with member 4. 4-5: 4 is a member, skipped. 5 is alone; 6 untouched.
    pairs = [(0, 1, 0.95), (2, 1, 0.9), (2, 0, 0.85), (3, 4, 0.8), (4, 5, 0.7)]
    i, j, sim = zip(*pairs)
    assert center_clusters(7, i, j, sim).tolist() == [0, 0, 0, 3, 3, 5, 6]
    assert center_clusters(7, i, j, sim).tolist() == reference_center(7, pairs)


def test_empty_and_self_pairs() -> None:
    assert connected_components(0, [], []).tolist() == []
    assert connected_components(3, [], []).tolist() == [0, 1, 2]
    assert center_clusters(2, [1], [1], [1.0]).tolist() == [0, 1]
    assert connected_components(2, [1], [1]).tolist() == [0, 1]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80))
    )
)
def test_union_find_matches_reference(case: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = case
    i = [a for a, _ in edges]
    j = [b for _, b in edges]
    expected = reference_components(n, edges)
    assert connected_components(n, i, j).tolist() == expected
    # Batches merged through ``labels`` give the same components.
    half = len(edges) // 2
    first = connected_components(n, i[:half], j[:half])
    assert connected_components(n, i[half:], j[half:], labels=first).tolist() == expected


def test_union_find_long_chains_and_large_graphs() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    perm = rng.permutation(n)
    labels = connected_components(n, perm[:-1], perm[1:])  # one path through all nodes
    assert (labels == 0).all()
    i, j = rng.integers(0, n, 15_000), rng.integers(0, n, 15_000)
    assert connected_components(n, i, j).tolist() == reference_components(n, list(zip(i.tolist(), j.tolist())))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 30).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(
                    st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
                ),
                max_size=60,
            ),
        )
    )
)
def test_center_matches_sequential_reference(case: tuple[int, list[tuple[int, int, float]]]) -> None:
    n, pairs = case
    i, j, sim = (list(x) for x in zip(*pairs)) if pairs else ([], [], [])
    assert center_clusters(n, i, j, sim).tolist() == reference_center(n, pairs)


def test_center_rounds_match_sequential_on_large_graphs() -> None:
    # Thousands of pairs take the vectorised rounds; ties in similarity are frequent.
    rng = np.random.default_rng(11)
    for n, k in ((500, 3000), (5000, 4000), (200, 20_000)):
        i, j = rng.integers(0, n, k), rng.integers(0, n, k)
        sim = rng.integers(50, 100, k) / 100
        got = center_clusters(n, i, j, sim).tolist()
        assert got == reference_center(n, list(zip(i.tolist(), j.tolist(), sim.tolist())))


def test_every_member_is_similar_to_its_centre() -> None:
    rng = np.random.default_rng(5)
    n, k = 300, 2000
    i, j = rng.integers(0, n, k), rng.integers(0, n, k)
    sim = rng.random(k)
    centre = center_clusters(n, i, j, sim)
    linked = set(zip(i.tolist(), j.tolist())) | set(zip(j.tolist(), i.tolist()))
    for node, c in enumerate(centre.tolist()):
        assert c == node or (node, c) in linked
        assert centre[c] == c
