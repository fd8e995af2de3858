"""A compact page and host link graph: the connectivity server of the CS276 notes.

Bharat, Broder, Henzinger, Kumar and Venkatasubramanian, "The Connectivity Server: fast
access to linkage information on the Web" (WWW7, 1998), and Randall, Stata, Wickremesinghe
and Wiener, "The Link Database: fast access to graphs of the Web" (DCC 2002): URLs get
dense ids in lexicographic order, so that the pages of a host, which mostly link to each
other (80% of links stay on their host, the notes say), have close ids; each adjacency
list is sorted and stored as gaps, small numbers, in variable-length integers.

Encoding (both directions, out-links and in-links, alike). The list of node ``u`` with
sorted distinct neighbours ``v1 < v2 < ...`` is stored as ``zigzag(v1 − u)``, then
``v2 − v1 − 1``, ``v3 − v2 − 1``, ...: the first gap is signed (a neighbour may come
before its node), the others are not and lose the 1 that distinct neighbours always
differ by. Each number is a LEB128 varint (7 bits a byte, the high bit set on every byte
but the last), so a neighbour on the same host costs 1 byte, mostly. The list index
is the notes' Link Database's "base + 8 bits": an 8-byte offset per block of
``INDEX_BLOCK`` (64) lists, and each list's size in one byte, a list of 255 bytes or
more marked 255 and its size kept aside (sorted node ids and sizes, 16 bytes each). A
list's offset is its block's base plus the sizes before it in the block (at most 63
bytes summed), so the index costs 1.1 bytes a node rather than a CSR's 8; a crawl's graph
has more URLs only linked to than fetched, whose out-lists are empty. The Link
Database's inter-list compression (a list as the edits of a neighbour's list, 8–11 bits
a link down to ~5.5) is not done here.

Encoding and decoding are numpy over whole arrays: a varint's bytes are written one
byte position at a time (at most 10 passes over the array, not a loop per link), and
decoded by locating the terminating bytes. A single list decodes from its slice.

The host graph (:meth:`LinkGraph.host_graph`) has an edge between two hosts weighted by
the page links from one to the other; links within a host are left out.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Adjacency", "HostGraph", "LinkGraph", "host_of", "varint_decode", "varint_encode"]

#: Payload bits per varint byte; the eighth bit says "more bytes follow".
VARINT_BITS = 7
#: Bytes a uint64 can take as a varint: ceil(64 / 7).
VARINT_MAX_BYTES = 10
#: Lists per block of the list index: one 8-byte base each, then 1 byte per list.
INDEX_BLOCK = 64
#: A list's size byte saying "this size is kept aside": lists of this many bytes or more.
LONG_LIST = 255


def varint_encode(values: ArrayLike) -> np.ndarray:
    """Non-negative integers as LEB128 varints, concatenated (uint8)."""
    v = np.asarray(values, dtype=np.uint64)
    lengths = np.ones(v.size, dtype=np.int64)
    rest = v >> np.uint64(VARINT_BITS)
    while rest.any():
        lengths += rest > 0
        rest >>= np.uint64(VARINT_BITS)
    ends = np.cumsum(lengths)
    out = np.empty(int(ends[-1]) if v.size else 0, dtype=np.uint8)
    starts = ends - lengths
    for k in range(int(lengths.max()) if v.size else 0):
        has = lengths > k
        chunk = (v[has] >> np.uint64(VARINT_BITS * k)) & np.uint64(0x7F)
        more = (lengths[has] > k + 1).astype(np.uint64) << np.uint64(VARINT_BITS)
        out[starts[has] + k] = (chunk | more).astype(np.uint8)
    return out


def _varint_ends(data: np.ndarray) -> np.ndarray:
    """Index of the last byte of each varint in ``data``."""
    return np.flatnonzero(data < 0x80)


def varint_decode(data: ArrayLike) -> np.ndarray:
    """The uint64 values of concatenated LEB128 varints."""
    b = np.asarray(data, dtype=np.uint8)
    ends = _varint_ends(b)
    if not ends.size:
        return np.zeros(0, dtype=np.uint64)
    starts = np.concatenate(([0], ends[:-1] + 1))
    position = np.arange(b.size) - np.repeat(starts, ends - starts + 1)
    if position.max() >= VARINT_MAX_BYTES:
        raise ValueError("varint longer than 10 bytes")
    parts = (b & np.uint8(0x7F)).astype(np.uint64) << (np.uint64(VARINT_BITS) * position.astype(np.uint64))
    return np.bitwise_or.reduceat(parts, starts)


def _zigzag(x: np.ndarray) -> np.ndarray:
    """Signed int64 as uint64 with small magnitudes small: 0, -1, 1, -2 -> 0, 1, 2, 3."""
    return ((x << 1) ^ (x >> 63)).astype(np.uint64)


def _unzigzag(z: np.ndarray) -> np.ndarray:
    return (z >> np.uint64(1)).astype(np.int64) ^ -(z & np.uint64(1)).astype(np.int64)


def _segment_starts(keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the first element of each run of equal ``keys``."""
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return first


@dataclass(frozen=True)
class Adjacency:
    """Gap-encoded sorted adjacency lists of ``n`` nodes: list ``u`` is the ``size(u)``
    bytes of varints of ``data`` from byte ``offset(u)`` (encoding and index: module
    docstring). ``sizes[u]`` is the size, or ``LONG_LIST`` for the ``long_nodes``, whose
    sizes are ``long_sizes``; ``bases`` are every ``INDEX_BLOCK``-th list's offset."""

    bases: np.ndarray
    sizes: np.ndarray
    long_nodes: np.ndarray
    long_sizes: np.ndarray
    data: np.ndarray

    @classmethod
    def encode(cls, n: int, src: np.ndarray, dst: np.ndarray) -> Adjacency:
        """The lists of the edges ``src -> dst`` (int64 node ids in [0, n))."""
        order = np.lexsort((dst, src))
        s, d = src[order], dst[order]
        keep = np.ones(s.size, dtype=bool)
        keep[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
        s, d = s[keep], d[keep]
        first = _segment_starts(s)
        gaps = np.empty(s.size, dtype=np.uint64)
        gaps[first] = _zigzag(d[first] - s[first])
        gaps[~first] = (d[1:] - d[:-1] - 1)[~first[1:]].astype(np.uint64)
        data = varint_encode(gaps)
        lengths = np.diff(np.concatenate(([-1], _varint_ends(data))))
        per_node = np.bincount(s, weights=lengths, minlength=n).astype(np.int64)
        bases = np.concatenate(([0], np.cumsum(per_node)))[:n:INDEX_BLOCK]
        long_nodes = np.flatnonzero(per_node >= LONG_LIST)
        sizes = np.minimum(per_node, LONG_LIST).astype(np.uint8)
        return cls(bases.astype(np.uint64), sizes, long_nodes, per_node[long_nodes], data)

    def _true_sizes(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The sizes of lists ``start`` to ``stop`` (int64), the long ones put back."""
        sizes = self.sizes[start:stop].astype(np.int64)
        lo, hi = np.searchsorted(self.long_nodes, [start, self.sizes.size if stop is None else stop])
        sizes[self.long_nodes[lo:hi] - start] = self.long_sizes[lo:hi]
        return sizes

    @property
    def offsets(self) -> np.ndarray:
        """Every list's starting byte, and the end of the last (int64)."""
        return np.concatenate(([0], np.cumsum(self._true_sizes())))

    def offset(self, u: int) -> int:
        block = u // INDEX_BLOCK
        return int(self.bases[block]) + int(self._true_sizes(block * INDEX_BLOCK, u).sum())

    @property
    def nbytes(self) -> int:
        parts = (self.bases, self.sizes, self.long_nodes, self.long_sizes, self.data)
        return sum(int(part.nbytes) for part in parts)

    def neighbours(self, u: int) -> np.ndarray:
        """The sorted neighbour ids of node ``u``."""
        start = self.offset(u)
        gaps = varint_decode(self.data[start : start + int(self._true_sizes(u, u + 1)[0])])
        if not gaps.size:
            return np.zeros(0, dtype=np.int64)
        steps = gaps.astype(np.int64) + 1
        steps[0] = u + _unzigzag(gaps[:1])[0]
        return np.cumsum(steps)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Every edge as (source ids, target ids), sorted by source then target."""
        gaps = varint_decode(self.data)
        ends = _varint_ends(self.data)
        src = np.searchsorted(self.offsets, ends, side="right") - 1
        first = _segment_starts(src)
        steps = gaps.astype(np.int64) + 1
        steps[first] = src[first] + _unzigzag(gaps[first])
        total = np.cumsum(steps)
        # Each list's running sum restarts at its first value.
        before_list = total[first] - steps[first]
        return src, total - np.repeat(before_list, np.diff(np.append(np.flatnonzero(first), src.size)))


@dataclass(frozen=True)
class HostGraph:
    """Hosts and the weighted links between them: ``names[src[i]]`` links to
    ``names[dst[i]]`` from ``weight[i]`` distinct (page, target page) pairs."""

    names: list[str]
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray

    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}


def host_of(url: str) -> str:
    """The network location of an absolute URL (``host:port``), lower-cased."""
    return url.partition("//")[2].partition("/")[0].partition("?")[0].partition("#")[0].lower()


class LinkGraph:
    """The link graph of ``urls`` (sorted, distinct) with edges ``src -> dst`` as indices
    into them, in- and out-lists gap-encoded (module docstring). Build it with
    :meth:`from_urls` or :meth:`from_ids`."""

    def __init__(self, urls: Sequence[str], src: np.ndarray, dst: np.ndarray) -> None:
        self.urls = list(urls)
        n = len(self.urls)
        self.out = Adjacency.encode(n, src, dst)
        self.into = Adjacency.encode(n, dst, src)
        hosts = [host_of(url) for url in self.urls]  # one per distinct URL, not per link
        self.host_names, self.host_ids = np.unique(np.array(hosts, dtype=object), return_inverse=True)

    @classmethod
    def from_ids(cls, urls: Sequence[str], src: ArrayLike, dst: ArrayLike) -> LinkGraph:
        """The graph of edges given as indices into ``urls`` (any order, repeats allowed):
        ids are reassigned in URL order."""
        names = np.array(urls, dtype=object)
        order = np.argsort(names, kind="stable")
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        return cls(names[order].tolist(), rank[s], rank[d])

    @classmethod
    def from_urls(cls, sources: Sequence[str], targets: Sequence[str]) -> LinkGraph:
        """The graph of the links ``sources[i] -> targets[i]``."""
        names, ids = np.unique(np.array([*sources, *targets], dtype=object), return_inverse=True)
        ids = ids.astype(np.int64)
        return cls(names.tolist(), ids[: len(sources)], ids[len(sources) :])

    def __len__(self) -> int:
        return len(self.urls)

    @property
    def links(self) -> int:
        """Distinct (source, target) page links."""
        return int(self.out.data.size and (self.out.data < 0x80).sum())

    @property
    def nbytes(self) -> int:
        """Bytes of both directions' lists and list indexes (the URL table not counted)."""
        return self.out.nbytes + self.into.nbytes

    def id(self, url: str) -> int | None:
        """The id of ``url``, None when it is not in the graph."""
        at = bisect_left(self.urls, url)
        return at if at < len(self.urls) and self.urls[at] == url else None

    def out_links(self, url: str) -> list[str]:
        """The URLs ``url`` links to, in URL order."""
        return self._lookup(self.out, url)

    def in_links(self, url: str) -> list[str]:
        """The URLs linking to ``url``, in URL order."""
        return self._lookup(self.into, url)

    def _lookup(self, lists: Adjacency, url: str) -> list[str]:
        u = self.id(url)
        return [] if u is None else [self.urls[v] for v in lists.neighbours(u).tolist()]

    def host_graph(self) -> HostGraph:
        """The hosts and the weighted links between them (links within a host left out)."""
        src, dst = self.out.edges()
        hs, hd = self.host_ids[src], self.host_ids[dst]
        across = hs != hd
        pairs, weight = np.unique(hs[across] * len(self.host_names) + hd[across], return_counts=True)
        n = len(self.host_names)
        return HostGraph(self.host_names.tolist(), pairs // n, pairs % n, weight)
