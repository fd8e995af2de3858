"""The compact link graph (detectors.linkgraph) against a plain-Python adjacency, on
random graphs and on the store of a crawl of the sandbox (the real-page world's figures:
benchmarks/evidence.py; its small version takes minutes to crawl)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors.linkgraph import Adjacency, LinkGraph, host_of, varint_decode, varint_encode
from mirrorscope.jobs.linkgraph import build_link_graph
from mirrorscope.sandbox import build_world
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world


def plain_adjacency(sources: list[str], targets: list[str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    out: dict[str, set[str]] = {}
    into: dict[str, set[str]] = {}
    for s, t in zip(sources, targets):
        out.setdefault(s, set()).add(t)
        into.setdefault(t, set()).add(s)
    return out, into


def assert_same_graph(graph: LinkGraph, sources: list[str], targets: list[str]) -> None:
    out, into = plain_adjacency(sources, targets)
    assert graph.urls == sorted(set(sources) | set(targets))
    for url in graph.urls:
        assert graph.out_links(url) == sorted(out.get(url, ()))
        assert graph.in_links(url) == sorted(into.get(url, ()))
    assert graph.links == len(set(zip(sources, targets)))
    hosts = Counter((host_of(s), host_of(t)) for s, t in set(zip(sources, targets)) if host_of(s) != host_of(t))
    host_graph = graph.host_graph()
    found = {(host_graph.names[a], host_graph.names[b]): int(w)
             for a, b, w in zip(host_graph.src.tolist(), host_graph.dst.tolist(), host_graph.weight.tolist())}
    assert found == dict(hosts)


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=200))
def test_varints_round_trip(values: list[int]) -> None:
    encoded = varint_encode(np.array(values, dtype=np.uint64))
    assert varint_decode(encoded).tolist() == values


def test_varint_lengths() -> None:
    assert varint_encode([0, 127, 128, 16383, 16384]).tolist() == [0, 127, 0x80, 1, 0xFF, 0x7F, 0x80, 0x80, 1]
    assert varint_encode(np.array([2**64 - 1], dtype=np.uint64)).size == 10


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 5), st.integers(0, 400), st.integers(0, 2**32 - 1))
def test_random_graphs_match_plain_adjacency(pages: int, hosts: int, links: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    urls = [f"http://h{i % hosts}.example/p/{i}" for i in range(pages)]
    sources = [urls[i] for i in rng.integers(0, pages, links)]
    targets = [urls[i] for i in rng.integers(0, pages, links)]
    assert_same_graph(LinkGraph.from_urls(sources, targets), sources, targets)


def test_unknown_url_has_no_links() -> None:
    graph = LinkGraph.from_urls(["http://a.example/"], ["http://b.example/"])
    assert graph.out_links("http://c.example/") == [] and graph.in_links("http://c.example/") == []
    assert graph.in_links("http://b.example/") == ["http://a.example/"]


def test_neighbours_before_their_node_are_encoded() -> None:
    """The first gap is signed: a page linking to URLs sorted before it."""
    sources = ["http://z.example/9"] * 3
    targets = ["http://a.example/1", "http://a.example/2", "http://z.example/99"]
    assert_same_graph(LinkGraph.from_urls(sources, targets), sources, targets)


@pytest.fixture(scope="module")
def crawled_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp_path = tmp_path_factory.mktemp("graph")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    crawl_world(build_world(0), tmp_path, url)
    return url


def test_crawled_store_graph(crawled_store: str) -> None:
    store = Store(crawled_store)
    try:
        links = [(row["source_url"], row["target_url"]) for row in store.links()]
        graph = build_link_graph(store, chunk=97)  # chunks that split pages' links
        table_bytes = store.links_table_bytes()
    finally:
        store.close()
    assert len(links) > 1000
    assert_same_graph(graph, [s for s, _ in links], [t for _, t in links])
    assert graph.nbytes <= 4 * graph.links  # the target
    assert table_bytes is not None and table_bytes > 10 * graph.nbytes


def test_long_lists_keep_their_sizes() -> None:
    """64 lists of 600 two-byte gaps: each past the size byte, 77 KB in one index block."""
    targets = np.arange(600, dtype=np.int64) * 129
    src = np.repeat(np.arange(64), targets.size)
    dst = np.tile(targets, 64)
    lists = Adjacency.encode(int(targets[-1]) + 1, src, dst)
    assert lists.long_nodes.tolist() == list(range(64)) and (lists.long_sizes == 1 + 599 * 2).all()
    assert all(lists.neighbours(u).tolist() == targets.tolist() for u in (0, 31, 63))
    decoded_src, decoded_dst = lists.edges()
    assert decoded_src.tolist() == src.tolist() and decoded_dst.tolist() == dst.tolist()
