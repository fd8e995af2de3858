"""Host profiles and the six feature sets that suggest two hosts mirror each other.

Top-down mirror detection (Bharat and Broder, "Mirror, mirror on the Web", WWW8 1999;
Bharat, Broder, Dean and Henzinger, "A comparison of techniques to find mirrored hosts on
the WWW", 2000): describe every host by a few sets of features, pair the hosts that share
a feature through an inverted index, and score each pair by how much it shares. Every
feature set here scores host pairs in [0, 1]:

``hostname``
    The host name without its port, split at dots, dashes and digit runs into words
    (www2.mirror-site.org and www.mirror-site.org agree); the public suffix, found with
    tldextract's bundled list (never the network), is one term. Unigrams and
    consecutive-word bigrams, idf-weighted cosine: www.elsevier.com and www.elsevier.nl
    share "www", "elsevier" and "www elsevier", and idf makes "www" count little.
``path_bigrams``
    Bharat and Broder's positional path bigrams: each path lowercased, split at
    punctuation and digit runs, ``STOP_TERMS`` dropped, then (i, t_i/t_i+1) for
    consecutive terms, so /docs/projabs/synsys/index.html gives {0: docs/projabs,
    1: projabs/synsys}. Weight (1 + ln tf) * idf, tf = the host's paths holding the
    bigram; cosine. Positions make it blind to a copy moved under a prefix: ``paths``
    covers those.
``ip``
    The same address (all 4 octets; an IPv6 address) or the same network (3 octets;
    IPv6 /64). A pair on an address that n hosts share scores 1 / (n - 1): exactly two
    hosts on one address are usually aliases of one server (score 1), many are an
    ISP's virtual hosting and say little (Bharat et al. 2000). The same network, a
    load-sharing replica at best, scores half that: 0.5 / (n - 1) for n hosts in it.
``outlinks``
    A host as the set of hosts it links to (Bharat et al.'s host connectivity), itself
    included: a copy's links to itself answer the original's links to the original, and
    a byte-identical copy's absolute self-links point back at the original. idf-weighted
    cosine, so the portal everybody links to counts little.
``paths``
    The relative path sets of two hosts under aligned prefixes; idf-weighted cosine, so
    paths every site has (index.html, search.html, about, contact, robots.txt) count
    little. Alignment: besides its root, each host offers as views the directories of
    its first ``prefix_depth`` (2) levels that hold at least ``min_prefix_pages`` (5)
    pages, with paths taken relative to the prefix. Copies sit one or two levels down
    (/pub/python/, /mirrors/gnu/), and each level deeper adds a view per directory for
    little; a directory of fewer than 5 pages could never validate as a mirror. Views of
    different hosts that share relative paths are compared, and each host pair keeps the
    pair of views sharing the most, those whose pages match counted twice (so a decoy's
    same-named paths at the root lose to a true copy under a prefix), then the shortest
    prefixes (so identical hosts align at their roots, not at every directory). So
    host2/pub/python/ meets host1/, and host2/ meets host1/docs/.
``content``
    The same, counting only shared relative paths whose pages match: identical
    fingerprints, or signatures agreeing on at least ``near_agreement`` (0.8, the
    resemblance above which pages are usually called near-duplicates) of their
    positions. Norms count only pages whose content is known. Signatures are compared
    as b-bit min-hashes (Li and Koenig, WWW 2010): the low byte of each value, 84 bytes a
    page instead of 672, the chance agreement of 1/256 a position subtracted before the
    threshold.

    Cosine sees in what proportion two views overlap, not how much: two small hosts made
    of the same few pages score 1. Validation calls nothing with fewer than 5 matching
    pages a mirror (``detectors.mirror_validation``), so with fewer than
    ``min_shared_paths`` (5) shared relative paths (for ``content``: matched ones) the
    score is scaled by shared / 5.

idf is ln((N + 1) / df) over the N rows (hosts, or views for the aligned feature sets):
never zero, so two hosts alone still score. Pairs come from an inverted index: the rows of
each posting list are paired, all in numpy, and the products summed per pair. A posting
shared by more than ``max_df`` (100) rows is not enumerated: it costs df^2 / 2 pairs and,
at idf ln(N / 100) against ln N for a rare feature, says little (on 10,000 hosts, a
quarter of a rare feature's weight squared); it stays in the norms. The one exception:
pages with identical content under so common a relative path (a site copied to hundreds
of hosts) still pair up, all copies with each other when there are at most ``max_df``,
else every copy with the first, which keeps the cost linear and leaves transitive
inference (``detectors.mirror_validation``) to join the rest.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import tldextract

from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.runs import run_pairs, runs

__all__ = [
    "FEATURES",
    "STOP_TERMS",
    "HostProfile",
    "MirrorParams",
    "directory_prefixes",
    "hostname_terms",
    "ip_keys",
    "path_terms",
    "positional_bigrams",
]

#: Feature sets in the order they are reported.
FEATURES = ("hostname", "path_bigrams", "ip", "outlinks", "paths", "content")

#: Path and host terms that say nothing about a site (Bharat and Broder's list, plus
#: the other server-side extensions and default document names of the same kind).
STOP_TERMS = frozenset(
    "index html htm shtml xhtml home main default txt bin cgi php asp aspx jsp cfm pl www http https".split()
)

# The suffix list bundled with tldextract: no network access, ever.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
# Runs of letters: punctuation, digits and underscores all separate terms.
_TERM = re.compile(r"[^\W\d_]+")
# b-bit min-hash: the low byte of each signature value.
_BBITS = 8
# Emitted pairs per numpy pass: bounds the memory of candidate generation.
_PAIR_BUDGET = 1 << 22


@dataclass(frozen=True, eq=False)
class HostProfile:
    """What the crawl knows about one host (compared by identity: it holds arrays).

    ``name`` is the host key: the hostname, plus ":port" when not the default port.
    ``paths`` are the crawled paths (query included) of pages that exist (status 200).
    ``fingerprints`` maps a path to the 64-bit fingerprint of its canonical text
    (identical content); ``signatures`` to its min-hash signature (84 uint64 values,
    whose agreement estimates resemblance); ``token_counts`` to its length in canonical
    tokens. Each may cover only some paths.
    """

    name: str
    ip: str | None
    paths: tuple[str, ...]
    outlink_hosts: frozenset[str] = frozenset()
    fingerprints: Mapping[str, int] = field(default_factory=dict)
    signatures: Mapping[str, np.ndarray] = field(default_factory=dict)
    token_counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MirrorParams:
    """Candidate generation settings; the module docstring says why each default."""

    max_df: int = 100
    prefix_depth: int = 2
    min_prefix_pages: int = 5
    near_agreement: float = 0.8
    min_shared_paths: int = 5
    # Combination weights (see ``detectors.mirror_candidates``): content and paths
    # are nearly conclusive, the rest only suggest.
    content_weight: float = 0.30
    paths_weight: float = 0.25
    path_bigrams_weight: float = 0.15
    hostname_weight: float = 0.10
    outlinks_weight: float = 0.10
    ip_weight: float = 0.10

    def __post_init__(self) -> None:
        if self.max_df < 2:
            raise ValueError("max_df must be at least 2")
        if self.prefix_depth < 0:
            raise ValueError("prefix_depth must be >= 0")
        if self.min_prefix_pages < 1 or self.min_shared_paths < 1:
            raise ValueError("min_prefix_pages and min_shared_paths must be >= 1")
        if not 0.0 < self.near_agreement <= 1.0:
            raise ValueError("near_agreement must be in (0, 1]")
        weights = self.weights
        if any(w < 0 for w in weights.values()) or not sum(weights.values()) > 0:
            raise ValueError("weights must be non-negative and not all zero")

    @property
    def weights(self) -> dict[str, float]:
        return {name: getattr(self, f"{name}_weight") for name in FEATURES}


# --------------------------------------------------------------------------- terms


def hostname_terms(name: str) -> list[str]:
    """Word unigrams and bigrams of a host name, and its public suffix as one term."""
    host = strip_port(name).lower().rstrip(".")
    parts = _EXTRACT(host)
    words = _TERM.findall(f"{parts.subdomain}.{parts.domain}") if parts.suffix else _TERM.findall(host)
    terms = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
    if parts.suffix:
        terms.append("." + parts.suffix)
    return list(dict.fromkeys(terms))


def path_terms(path: str) -> list[str]:
    """Lowercased terms of a path: split at punctuation and digit runs, stop terms dropped."""
    return [t for t in _TERM.findall(path.lower()) if t not in STOP_TERMS]


def positional_bigrams(path: str) -> list[tuple[int, str]]:
    """(position, "t_i/t_i+1") for consecutive terms of a path."""
    return [(i, f"{a}/{b}") for i, a, b in _bigrams(path)]


def _bigrams(path: str) -> list[tuple[int, str, str]]:
    # positional_bigrams without the string formatting, for a million paths.
    terms = path_terms(path)
    return list(zip(itertools.count(), terms, terms[1:]))


def ip_keys(ip: str | None) -> tuple[str, str] | None:
    """(address, network): the 4-octet and 3-octet keys (IPv6: address and /64)."""
    if not ip:
        return None
    try:
        address = ipaddress.ip_address(ip.strip("[]"))
    except ValueError:
        return None
    bits = 24 if address.version == 4 else 64
    network = ipaddress.ip_network(f"{address}/{bits}", strict=False)
    return str(address), str(network)


def directory_prefixes(path: str, depth: int) -> list[str]:
    """The directories of the first ``depth`` levels above a path: /a/b/c.html -> /a/, /a/b/."""
    cut = path.find("?")
    directory = path if cut < 0 else path[:cut]
    prefixes = []
    start = 1
    for _ in range(depth):
        end = directory.find("/", start)
        if end < 0:
            break
        prefixes.append(path[: end + 1])
        start = end + 1
    return prefixes


# ------------------------------------------------------------------- sparse pairs


def _idf(df: np.ndarray, rows: int) -> np.ndarray:
    return np.log((rows + 1) / np.maximum(df, 1))


def _sum_by_key(keys: np.ndarray, *values: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, [np.bincount(inverse, weights=v, minlength=unique.size) for v in values]


def _merge(parts: list[tuple[np.ndarray, list[np.ndarray]]], count: int) -> tuple[np.ndarray, list[np.ndarray]]:
    if not parts:
        return np.zeros(0, np.int64), [np.zeros(0) for _ in range(count)]
    if len(parts) == 1:
        return parts[0]
    keys = np.concatenate([k for k, _ in parts])
    return _sum_by_key(keys, *(np.concatenate([v[i] for _, v in parts]) for i in range(count)))


@dataclass(slots=True)
class PairScores:
    """Host pairs (a < b, indices into the profiles) and their scores for one feature set."""

    a: np.ndarray
    b: np.ndarray
    score: np.ndarray


def _empty_pairs() -> PairScores:
    return PairScores(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


def _cosine(rows: np.ndarray, feats: np.ndarray, weights: np.ndarray, n_rows: int, max_df: int) -> PairScores:
    """Cosine of the rows' sparse vectors over every pair that shares an enumerable feature.

    Entries (row, feature, weight) must be unique per (row, feature).
    """
    if rows.size == 0:
        return _empty_pairs()
    norms = np.sqrt(np.bincount(rows, weights=weights * weights, minlength=n_rows))
    order = np.lexsort((rows, feats))
    rows, feats, weights = rows[order], feats[order], weights[order]
    starts, sizes = runs(feats)
    keep = (sizes >= 2) & (sizes <= max_df)
    parts = [
        _sum_by_key(rows[i] * np.int64(n_rows) + rows[j], weights[i] * weights[j])
        for i, j in run_pairs(starts[keep], sizes[keep], batch=_PAIR_BUDGET)
    ]
    keys, (dots,) = _merge(parts, 1)
    a, b = np.divmod(keys, n_rows)
    return PairScores(a, b, np.minimum(dots / (norms[a] * norms[b]), 1.0))


def _ids(values: Sequence[object]) -> tuple[np.ndarray, int]:
    """Dense ids for hashable values, numbered by first appearance, and how many there are.

    Python's 64-bit hash, then one sort: four times faster than a dict for millions of
    paths. Distinct strings collide with probability about n^2 / 2^65 (1e-7 for 3
    million); numbering by first appearance keeps results independent of the process's
    hash seed.
    """
    if not values:
        return np.zeros(0, np.int64), 0
    hashes = np.fromiter(map(hash, values), np.int64, len(values))
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)], order.size


# ------------------------------------------------------------- host-level features


def _binary_idf_cosine(sets: list[list[str]], max_df: int) -> PairScores:
    """Cosine of idf-weighted binary vectors, one per row (each list without repeats)."""
    rows = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    feats, n_feats = _ids([term for terms in sets for term in terms])
    idf = _idf(np.bincount(feats, minlength=n_feats), len(sets))
    return _cosine(rows, feats, idf[feats], len(sets), max_df)


def hostname_scores(profiles: Sequence[HostProfile], params: MirrorParams) -> PairScores:
    """``hostname``: idf-weighted cosine of host name terms."""
    return _binary_idf_cosine([hostname_terms(p.name) for p in profiles], params.max_df)


def outlink_scores(profiles: Sequence[HostProfile], params: MirrorParams) -> PairScores:
    """``outlinks``: idf-weighted cosine of the sets of hosts linked to, self included."""
    return _binary_idf_cosine([sorted(p.outlink_hosts | {p.name}) for p in profiles], params.max_df)


def path_bigram_scores(profiles: Sequence[HostProfile], params: MirrorParams) -> PairScores:
    """``path_bigrams``: tf-idf cosine of positional path bigrams."""
    cache: dict[str, list[tuple[int, str, str]]] = {}
    bigrams: list[tuple[int, str, str]] = []
    counts = []
    for profile in profiles:
        before = len(bigrams)
        for path in profile.paths:
            found = cache.get(path)
            if found is None:
                found = cache[path] = _bigrams(path)
            bigrams += found
        counts.append(len(bigrams) - before)
    feats, n_feats = _ids(bigrams)
    if not n_feats:
        return _empty_pairs()
    rows = np.repeat(np.arange(len(profiles), dtype=np.int64), counts)
    keys, tf = np.unique(rows * n_feats + feats, return_counts=True)
    host, feat = np.divmod(keys, n_feats)
    idf = _idf(np.bincount(feat, minlength=n_feats), len(profiles))
    return _cosine(host, feat, (1.0 + np.log(tf)) * idf[feat], len(profiles), params.max_df)


def ip_scores(profiles: Sequence[HostProfile], params: MirrorParams) -> PairScores:
    """``ip``: 1 / (n - 1) for an address n hosts share, 0.5 / (n - 1) for a network."""
    n = len(profiles)
    parts = []
    addresses = [ip_keys(p.ip) for p in profiles]
    for level, base in ((0, 1.0), (1, 0.5)):
        rows_a = np.array([row for row, keys in enumerate(addresses) if keys is not None], np.int64)
        feats_a, _ = _ids([keys[level] for keys in addresses if keys is not None])
        order = np.lexsort((rows_a, feats_a))
        rows_a, feats_a = rows_a[order], feats_a[order]
        starts, sizes = runs(feats_a)
        keep = (sizes >= 2) & (sizes <= params.max_df)
        group_score = base / (sizes - 1).clip(min=1)
        member_score = np.repeat(group_score, sizes)
        for i, j in run_pairs(starts[keep], sizes[keep], batch=_PAIR_BUDGET):
            parts.append((rows_a[i] * n + rows_a[j], member_score[i]))
    if not parts:
        return _empty_pairs()
    keys = np.concatenate([k for k, _ in parts])
    scores = np.concatenate([s for _, s in parts])
    # The better of the two levels: an address match implies the network match.
    order = np.lexsort((-scores, keys))
    keys, scores = keys[order], scores[order]
    first = np.r_[True, keys[1:] != keys[:-1]]
    a, b = np.divmod(keys[first], n)
    return PairScores(a, b, scores[first])


# ------------------------------------------------------------- aligned features


@dataclass(slots=True)
class AlignedScores:
    """Host pairs (a < b) with their best aligned views and the ``paths``/``content`` scores."""

    a: np.ndarray
    b: np.ndarray
    view_a: np.ndarray  # index into ``prefixes``
    view_b: np.ndarray
    prefixes: list[str]  # view -> prefix
    pages_a: np.ndarray  # pages under the prefixes
    pages_b: np.ndarray
    shared: np.ndarray
    matched: np.ndarray
    paths: np.ndarray
    content: np.ndarray


@dataclass(slots=True)
class _Views:
    """Each host's root and chosen prefixes, with their pages' relative paths and content."""

    host: np.ndarray  # view -> host index
    prefix: list[str]
    pages: np.ndarray  # view -> pages under the prefix
    entry_view: np.ndarray  # one entry per (view, page)
    entry_rel: np.ndarray  # relative path id
    entry_page: np.ndarray  # page index
    fingerprint: np.ndarray  # page -> uint64
    has_fingerprint: np.ndarray
    signature_row: np.ndarray  # page -> row of ``signature_bits``, or -1
    signature_bits: np.ndarray  # (pages with a signature, positions) uint8


def _views(profiles: Sequence[HostProfile], params: MirrorParams) -> _Views:
    view_host: list[int] = []
    view_prefix: list[str] = []
    view_sizes: list[int] = []
    relative: list[str] = []
    entry_page: list[np.ndarray] = []
    fingerprints: list[int] = []
    has_fingerprint: list[bool] = []
    signature_row: list[int] = []
    signatures: list[np.ndarray] = []
    first_page = 0
    for host, profile in enumerate(profiles):
        paths = list(dict.fromkeys(profile.paths))
        under: dict[str, list[int]] = {}
        for index, path in enumerate(paths):
            for prefix in directory_prefixes(path, params.prefix_depth):
                under.setdefault(prefix, []).append(index)
        chosen = sorted(p for p, members in under.items() if len(members) >= params.min_prefix_pages)
        view_host += [host] * (1 + len(chosen))
        view_prefix += ["/", *chosen]
        view_sizes.append(len(paths))
        relative += paths
        entry_page.append(np.arange(first_page, first_page + len(paths)))
        for prefix in chosen:
            members = under[prefix]
            cut = len(prefix) - 1
            view_sizes.append(len(members))
            relative += [paths[i][cut:] for i in members]
            entry_page.append(first_page + np.array(members, np.int64))
        first_page += len(paths)
        fps, sigs = profile.fingerprints, profile.signatures
        for path in paths:
            fp = fps.get(path)
            has_fingerprint.append(fp is not None)
            fingerprints.append(0 if fp is None else fp & 0xFFFFFFFFFFFFFFFF)
            sig = sigs.get(path)
            signature_row.append(-1 if sig is None else len(signatures))
            if sig is not None:
                signatures.append(sig)
    sizes = np.array(view_sizes, np.int64)
    return _Views(
        host=np.array(view_host, np.int64),
        prefix=view_prefix,
        pages=sizes,
        entry_view=np.repeat(np.arange(sizes.size), sizes),
        entry_rel=_ids(relative)[0],
        entry_page=np.concatenate([np.zeros(0, np.int64), *entry_page]),
        fingerprint=np.array(fingerprints, np.uint64),
        has_fingerprint=np.array(has_fingerprint, bool),
        signature_row=np.array(signature_row, np.int64),
        signature_bits=_low_bytes(signatures),
    )


def _low_bytes(signatures: list[np.ndarray]) -> np.ndarray:
    """The b-bit (b = 8) form of the signatures, stacked a chunk at a time."""
    if not signatures:
        return np.zeros((0, 0), np.uint8)
    width = len(signatures[0])
    out = np.empty((len(signatures), width), np.uint8)
    step = 1 << 14
    for start in range(0, len(signatures), step):
        try:
            chunk = np.asarray(signatures[start : start + step], dtype=np.uint64)
        except ValueError:
            raise ValueError("signatures of different lengths") from None
        if chunk.ndim != 2 or chunk.shape[1] != width:
            raise ValueError("signatures of different lengths")
        out[start : start + step] = (chunk & np.uint64(0xFF)).astype(np.uint8)
    return out


def _content_matches(views: _Views, page_a: np.ndarray, page_b: np.ndarray, near_agreement: float) -> np.ndarray:
    """Whether each page pair has identical or near-identical content (False when unknown)."""
    same = views.has_fingerprint[page_a] & views.has_fingerprint[page_b]
    same &= views.fingerprint[page_a] == views.fingerprint[page_b]
    row_a, row_b = views.signature_row[page_a], views.signature_row[page_b]
    unsure = np.flatnonzero(~same & (row_a >= 0) & (row_b >= 0))
    if unsure.size:
        width = views.signature_bits.shape[1]
        chance = 2.0**-_BBITS
        # Agreement a estimates r + (1 - r) / 256; r >= t  <=>  a >= t + (1 - t) / 256.
        needed = math.ceil(width * (near_agreement + (1 - near_agreement) * chance) - 1e-9)
        step = 1 << 16
        for start in range(0, unsure.size, step):
            chunk = unsure[start : start + step]
            agree = np.count_nonzero(views.signature_bits[row_a[chunk]] == views.signature_bits[row_b[chunk]], axis=1)
            same[chunk] = agree >= needed
    return same


def _view_pair_sums(
    views: _Views, i: np.ndarray, j: np.ndarray, weight2: np.ndarray, match: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per pair of views of different hosts: path and content dot products, shared and matched counts."""
    u, v = views.entry_view[i], views.entry_view[j]
    other = views.host[u] != views.host[v]
    u, v, i, match = u[other], v[other], i[other], match[other]
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    w = weight2[i]
    return _sum_by_key(lo * np.int64(views.host.size) + hi, w, w * match, np.ones(i.size), match.astype(np.float64))


def aligned_scores(profiles: Sequence[HostProfile], params: MirrorParams) -> AlignedScores:
    """``paths`` and ``content`` for every host pair sharing relative paths, best alignment each."""
    views = _views(profiles, params)
    n_views = views.host.size
    weight = _idf(np.bincount(views.entry_rel), n_views)[views.entry_rel]
    weight2 = weight * weight
    page = views.entry_page
    known = views.has_fingerprint[page] | (views.signature_row[page] >= 0)
    norm_paths = np.sqrt(np.bincount(views.entry_view, weights=weight2, minlength=n_views))
    norm_content = np.sqrt(np.bincount(views.entry_view, weights=weight2 * known, minlength=n_views))

    order = np.lexsort((views.entry_view, views.entry_rel))
    starts, sizes = runs(views.entry_rel[order])
    keep = (sizes >= 2) & (sizes <= params.max_df)
    parts = []
    for i, j in run_pairs(starts[keep], sizes[keep], batch=_PAIR_BUDGET):
        i, j = order[i], order[j]
        match = _content_matches(views, page[i], page[j], params.near_agreement)
        parts.append(_view_pair_sums(views, i, j, weight2, match))
    parts += _common_copies(views, order[np.repeat(sizes > params.max_df, sizes)], weight2, params.max_df)

    keys, (path_dot, content_dot, shared, matched) = _merge(parts, 4)
    u, v, best = _best_alignment(views, keys, shared, matched, len(profiles))
    shared, matched = shared[best], matched[best]
    content_norm = norm_content[u] * norm_content[v]
    paths = np.minimum(path_dot[best] / (norm_paths[u] * norm_paths[v]), 1.0)
    content = np.minimum(content_dot[best] / np.where(content_norm > 0, content_norm, 1.0), 1.0)
    # Too few shared pages can never validate: scale those overlaps down in proportion.
    paths *= np.minimum(shared / params.min_shared_paths, 1.0)
    content *= np.minimum(matched / params.min_shared_paths, 1.0)
    return AlignedScores(
        a=views.host[u],
        b=views.host[v],
        view_a=u,
        view_b=v,
        prefixes=views.prefix,
        pages_a=views.pages[u],
        pages_b=views.pages[v],
        shared=shared.astype(np.int64),
        matched=matched.astype(np.int64),
        paths=paths,
        content=content,
    )


def _common_copies(
    views: _Views, common: np.ndarray, weight2: np.ndarray, max_df: int
) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """View-pair sums of the identical pages under relative paths too common to
    enumerate (the entries ``common``): all copies paired when at most ``max_df``, else
    every copy with the first."""
    page = views.entry_page
    common = common[views.has_fingerprint[page[common]]]
    if not common.size:
        return []
    fingerprint = views.fingerprint[page[common]]
    common = common[np.lexsort((views.entry_view[common], fingerprint, views.entry_rel[common]))]
    rel, fingerprint = views.entry_rel[common], views.fingerprint[page[common]]
    boundary = np.r_[True, (rel[1:] != rel[:-1]) | (fingerprint[1:] != fingerprint[:-1])]
    copy_starts = np.flatnonzero(boundary)
    copy_sizes = np.diff(np.r_[copy_starts, common.size])
    parts = []
    for chosen in (copy_sizes <= max_df, copy_sizes > max_df):
        for i, j in run_pairs(copy_starts[chosen], copy_sizes[chosen], star_above=max_df, batch=_PAIR_BUDGET):
            i, j = common[i], common[j]
            parts.append(_view_pair_sums(views, i, j, weight2, np.ones(i.size, bool)))
    return parts


def _best_alignment(
    views: _Views, keys: np.ndarray, shared: np.ndarray, matched: np.ndarray, n_hosts: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The views (u, v) of each host pair's best alignment, host of u < host of v, and
    the index of their view pair in ``keys``."""
    u, v = np.divmod(keys, views.host.size)
    swap = views.host[u] > views.host[v]
    u, v = np.where(swap, v, u), np.where(swap, u, v)
    host_key = views.host[u] * np.int64(n_hosts) + views.host[v]
    prefix_length = np.array([len(p) for p in views.prefix], np.int64)
    # Per host pair: the most shared relative paths, content matches counted twice, then
    # the most matches, then the shortest prefixes.
    best = np.lexsort((u, v, prefix_length[u] + prefix_length[v], -matched, -(shared + matched), host_key))
    if best.size:
        best = best[np.r_[True, host_key[best][1:] != host_key[best][:-1]]]
    return u[best], v[best], best


def all_feature_scores(
    profiles: Sequence[HostProfile], params: MirrorParams
) -> tuple[dict[str, PairScores], AlignedScores]:
    """Every feature set's host-pair scores; ``paths`` and ``content`` with their alignment."""
    names = [p.name for p in profiles]
    if len(set(names)) != len(names):
        duplicates = sorted(n for n, c in Counter(names).items() if c > 1)
        raise ValueError(f"host names must be unique; repeated: {duplicates[:5]}")
    aligned = aligned_scores(profiles, params)
    scores = {
        "hostname": hostname_scores(profiles, params),
        "path_bigrams": path_bigram_scores(profiles, params),
        "ip": ip_scores(profiles, params),
        "outlinks": outlink_scores(profiles, params),
        "paths": PairScores(aligned.a, aligned.b, aligned.paths),
        "content": PairScores(aligned.a, aligned.b, aligned.content),
    }
    return scores, aligned
