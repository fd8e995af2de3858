"""Candidate mirror pairs: the feature sets' scores combined into one ranking.

Bharat, Broder, Dean and Henzinger, "A comparison of techniques to find mirrored hosts on
the WWW" (2000) rank host pairs by each family of features and find the best results by
combining them (five feature sets together: precision 0.57 at recall 0.86 over the top
100,000 pairs of 230,000 hosts). Here every pair that any feature set scores
(``detectors.mirror_features``) gets all six scores, and the combined score is their
weighted mean,

    score = sum_f w_f s_f / sum_f w_f,

with ``MirrorParams`` weights content 0.30, paths 0.25, path_bigrams 0.15, hostname 0.10,
outlinks 0.10, ip 0.10. A weighted mean of scores that are all cosines (or, for ip, a
share of an address) in [0, 1] stays in [0, 1] and keeps each feature's evidence
readable; rank fusion would throw away how far apart two pairs are. Content and path
overlap under aligned prefixes are what the definition of a mirror asks for, so they
weigh most; the others only point at pairs worth checking and share the rest. When one of
the two hosts has no page of known content (no fingerprint, no signature), ``content``
says nothing and its weight leaves the denominator, so pairs crawled without content are
not pushed down by a missing measurement.

``candidate_pairs`` keeps pairs scoring at least ``min_score`` (0.15: hostname, ip or
outlinks alone, however alike, reach at most 0.10 / 0.70 = 0.14 even without content; on
the benchmark's synthetic web every planted mirror scores above 0.25) and, for each
host, its ``max_candidates_per_host`` (10) best pairs; a pair stays when it is among the
best of either host, so a site with many mirrors keeps them all as long as each mirror
ranks it high. Since the combined score never exceeds a pair's best feature score, pairs
with no feature score reaching ``min_score`` are dropped before they are combined, which
keeps the union small. ``feature_rankings`` ranks by each feature set alone, for
per-feature precision and recall at rank k.

**Anchor bags as an extra vote.** Haveliwala, Gionis and Indyk (WebDB 2000) find
replicated URLs by how others link to them (``detectors.anchors``), before and without
fetching them. ``candidate_pairs`` optionally takes such evidence: one (host a, host b)
row per cross-host URL pair whose anchor bags match. A host pair's ``anchors`` score is
its matching URL pairs over the smaller host's path count, at most 1, and it votes
without ever lowering a pair:

    score' = score + anchor_vote * anchors * (1 - score),   anchor_vote = 0.3,

so a pair that only anchors point at becomes a candidate once ``anchor_vote * anchors``
reaches ``min_score`` (half of the smaller host's paths matched), and a pair already
ranked moves up. Without the evidence (``anchor_pairs=None``) nothing changes, and
``features`` gains an ``anchors`` entry only when it is given.

**Matching index pages.** A crawl does not follow the links of a page that duplicates
one it has (``EXPAND_DUPLICATES``), so a copy reached at its root, or at the directory
where it sits (/pub/python/), is one stored page and nothing else: no path or content
feature can see it. Yet a host's root or a directory index identical, or nearly so,
to one on another host says where a copy sits: directory a/ of one host holds what
directory b/ of the other holds. ``index_matches`` finds such pages (the root, paths
ending in "/", and ``index.*`` files; identical fingerprints, or signatures agreeing on
at least ``near_agreement`` of their positions: LSH banding, then the exact agreement),
and each host pair with one gets a vote like the anchors',

    score' = score + index_vote * index * (1 - score),   index_vote = 0.5,

``index`` being the best such pair's agreement, with that pair's directories as the
prefixes when the path alignment matched no page there. One identical root alone makes a
candidate (score 0.5); validation then fetches the sampled counterpart paths on the
side that was never expanded, so a copy costs its validation sample, not a crawl.
Pages shorter than ``MIN_INDEX_TOKENS`` (a redirect stub, an "It works!" page, an empty
listing) say nothing of what a directory holds and are left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.lsh import candidate_pairs as lsh_pairs
from mirrorscope.detectors.mirror_features import FEATURES, AlignedScores, HostProfile, MirrorParams, all_feature_scores

__all__ = [
    "ANCHOR_VOTE", "DEFAULT_MIRROR_PARAMS", "INDEX_VOTE", "CandidatePair", "IndexMatches", "candidate_pairs",
    "feature_rankings", "index_matches",
]

DEFAULT_MIRROR_PARAMS = MirrorParams()
#: Weight of the anchor-bag vote (module docstring).
ANCHOR_VOTE = 0.3
#: Weight of the matching-index-page vote (module docstring).
INDEX_VOTE = 0.5
#: Words an index page needs before its match says anything about its directory.
MIN_INDEX_TOKENS = 50
_INDEX_NAME = re.compile(r"(?:^|/)(?:index|default)\.[^/]*$", re.IGNORECASE)


@dataclass(frozen=True)
class CandidatePair:
    """Host a under ``prefix_a`` may mirror host b under ``prefix_b``.

    ``a`` is the side with the shorter prefix, then with more pages under it (more
    likely the original), then with the smaller name. ``score`` is the combined score
    (in ``feature_rankings``: the ranking feature's) and ``features`` every feature
    set's score, the evidence. ``pages_a`` and ``pages_b`` count crawled pages under the
    prefixes, ``shared_paths`` the relative paths both hold and ``matched_paths`` those
    with matching content (both over paths rare enough to enumerate, see
    ``MirrorParams.max_df``).
    """

    a: str
    b: str
    prefix_a: str = "/"
    prefix_b: str = "/"
    score: float = 0.0
    features: dict[str, float] = field(default_factory=dict, hash=False)
    pages_a: int = 0
    pages_b: int = 0
    shared_paths: int = 0
    matched_paths: int = 0


@dataclass(slots=True)
class _Evidence:
    """Every feature set's score for each pair in the union of the pairs worth keeping."""

    a: np.ndarray
    b: np.ndarray
    name_rank: np.ndarray  # host -> rank of its name, to break ties by name
    scores: dict[str, np.ndarray]
    combined: np.ndarray
    prefix_a: list[str]
    prefix_b: list[str]
    pages_a: np.ndarray
    pages_b: np.ndarray
    shared: np.ndarray
    matched: np.ndarray


def _lookup(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of each wanted key in ``keys`` (sorted), or -1."""
    if not keys.size:
        return np.full(wanted.size, -1, np.int64)
    at = np.searchsorted(keys, wanted).clip(max=keys.size - 1)
    return np.where(keys[at] == wanted, at, -1)


def _anchor_scores(profiles: Sequence[HostProfile], anchor_pairs: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted host-pair keys ``a * n + b`` (a < b) and their anchor scores: matching URL
    pairs over the smaller host's path count, at most 1."""
    n = np.int64(len(profiles))
    first = np.asarray(anchor_pairs[0], dtype=np.int64).ravel()
    second = np.asarray(anchor_pairs[1], dtype=np.int64).ravel()
    if first.shape != second.shape:
        raise ValueError("anchor_pairs' two arrays differ in length")
    if first.size and (min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >= n):
        raise ValueError(f"anchor_pairs hold host indexes outside [0, {n})")
    cross = first != second
    low, high = np.minimum(first, second)[cross], np.maximum(first, second)[cross]
    keys, counts = np.unique(low * n + high, return_counts=True)
    paths = np.array([len(set(p.paths)) for p in profiles], np.int64)
    smaller = np.minimum(paths[keys // n], paths[keys % n]) if n else np.zeros(0, np.int64)
    return keys, np.minimum(counts / np.maximum(smaller, 1), 1.0)


def _directory(path: str) -> str | None:
    """The directory an index page stands for ("/pub/x/" for /pub/x/ or /pub/x/index.html),
    or None for any other page."""
    path = path.split("?", 1)[0]
    if path.endswith("/"):
        return path
    if _INDEX_NAME.search(path):
        return path[: path.rfind("/") + 1]
    return None


@dataclass(frozen=True, slots=True)
class IndexMatches:
    """Host pairs a < b (indexes into the profiles) with matching index pages: the best
    match's agreement and the directories it aligns."""

    a: np.ndarray
    b: np.ndarray
    agreement: np.ndarray
    prefix_a: list[str]
    prefix_b: list[str]


def index_matches(profiles: Sequence[HostProfile], near_agreement: float = 0.8) -> IndexMatches:
    """Index pages of different hosts with identical or near-identical content (module
    docstring), best per host pair: highest agreement, then the shortest prefixes."""
    pages = [
        (host, directory, profile.signatures[path])
        for host, profile in enumerate(profiles)
        for path in profile.paths
        if (directory := _directory(path)) is not None
        and path in profile.signatures
        and profile.token_counts.get(path, MIN_INDEX_TOKENS) >= MIN_INDEX_TOKENS
    ]
    empty = IndexMatches(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), [], [])
    if len(pages) < 2:
        return empty
    signatures = np.stack([signature for _, _, signature in pages]).astype(np.uint64)
    pairs = lsh_pairs(signatures, threshold=near_agreement)
    host = np.array([h for h, _, _ in pages], np.int64)
    pairs = pairs[host[pairs[:, 0]] != host[pairs[:, 1]]]
    agreement = (signatures[pairs[:, 0]] == signatures[pairs[:, 1]]).mean(axis=1)
    keep = agreement >= near_agreement
    rows = []
    for (i, j), agree in zip(pairs[keep].tolist(), agreement[keep].tolist()):
        if host[i] > host[j]:
            i, j = j, i
        rows.append((int(host[i]), int(host[j]), -agree, len(pages[i][1]) + len(pages[j][1]), pages[i][1], pages[j][1]))
    best: dict[tuple[int, int], tuple] = {}
    for row in sorted(rows):
        best.setdefault(row[:2], row)
    chosen = list(best.values())
    if not chosen:
        return empty
    return IndexMatches(
        np.array([r[0] for r in chosen], np.int64), np.array([r[1] for r in chosen], np.int64),
        np.array([-r[2] for r in chosen]), [r[4] for r in chosen], [r[5] for r in chosen],
    )


def _evidence(
    profiles: Sequence[HostProfile],
    params: MirrorParams,
    min_score: float,
    anchor_pairs: tuple[ArrayLike, ArrayLike] | None = None,
    anchor_vote: float = ANCHOR_VOTE,
) -> _Evidence:
    n = np.int64(len(profiles))
    scores, aligned = all_feature_scores(profiles, params)
    sorted_keys, sorted_scores = {}, {}
    for name, pairs in scores.items():
        keys = pairs.a * n + pairs.b
        order = np.argsort(keys, kind="stable")
        sorted_keys[name], sorted_scores[name] = keys[order], pairs.score[order]
    votes = [("index", INDEX_VOTE)]
    if anchor_pairs is not None:
        sorted_keys["anchors"], sorted_scores["anchors"] = _anchor_scores(profiles, anchor_pairs)
        votes.insert(0, ("anchors", anchor_vote))
    indexes = index_matches(profiles, params.near_agreement)
    sorted_keys["index"], sorted_scores["index"] = indexes.a * n + indexes.b, indexes.agreement
    # The combined score is a weighted mean of a pair's scores, never above the largest:
    # a pair none of whose scores reaches min_score cannot reach it either. The anchor
    # vote can lift such a pair, so every pair with anchor evidence joins the union.
    union = np.unique(
        np.concatenate([sorted_keys[name] for name, _ in votes] + [sorted_keys[f][sorted_scores[f] >= min_score] for f in FEATURES])
    )
    names = list(FEATURES) + [name for name, _ in votes]
    dense = {name: _dense(sorted_keys[name], sorted_scores[name], union) for name in names}
    a, b = np.divmod(union, n) if n else (union, union)
    combined = _combined(profiles, params.weights, dense, a, b, votes)
    # Sums run in an order that follows the input's; rounding keeps ties tied.
    combined = np.round(np.clip(combined, 0.0, 1.0), 12)
    dense = {name: np.round(column, 12) for name, column in dense.items()}
    where_index = _lookup(sorted_keys["index"], union)
    return _aligned_evidence(profiles, aligned, indexes, where_index, union, a, b, dense, combined)


def _dense(sorted_keys: np.ndarray, sorted_scores: np.ndarray, union: np.ndarray) -> np.ndarray:
    """The scores of the pairs ``union`` (0 where a pair has none)."""
    at = _lookup(sorted_keys, union)
    column = np.zeros(union.size)
    column[at >= 0] = sorted_scores[at[at >= 0]]
    return column


def _combined(
    profiles: Sequence[HostProfile], weights: dict[str, float], dense: dict[str, np.ndarray], a: np.ndarray, b: np.ndarray,
    votes: list[tuple[str, float]],
) -> np.ndarray:
    """The weighted mean of the feature scores (content left out where a host has no
    content known), each vote then lifting it by its share of what is left below 1."""
    has_content = np.array([bool(p.fingerprints) or bool(p.signatures) for p in profiles], bool)
    content_counts = has_content[a] & has_content[b]
    total = sum(weights.values()) - weights["content"] * ~content_counts
    combined = sum(weights[name] * dense[name] for name in FEATURES) / np.where(total > 0, total, 1.0)
    for name, vote in votes:
        combined = combined + vote * dense[name] * (1.0 - np.clip(combined, 0.0, 1.0))
    return combined


def _aligned_evidence(
    profiles: Sequence[HostProfile], aligned: AlignedScores, indexes: IndexMatches, where_index: np.ndarray,
    union: np.ndarray, a: np.ndarray, b: np.ndarray, dense: dict[str, np.ndarray], combined: np.ndarray,
) -> _Evidence:
    """The evidence of the pairs ``union``, with where each copy sits: the aligned
    prefixes and their page counts, or matching index pages."""
    n = np.int64(len(profiles))
    pages = np.array([len(set(p.paths)) for p in profiles], np.int64)
    pages_a, pages_b = pages[a], pages[b]
    shared, matched = np.zeros(union.size, np.int64), np.zeros(union.size, np.int64)
    prefix_a, prefix_b = ["/"] * union.size, ["/"] * union.size
    where = _lookup(aligned.a * n + aligned.b, union)  # aligned pairs come sorted by host pair
    found = np.flatnonzero(where >= 0)
    at = where[found]
    pages_a[found], pages_b[found] = aligned.pages_a[at], aligned.pages_b[at]
    shared[found], matched[found] = aligned.shared[at], aligned.matched[at]
    for index, view_a, view_b in zip(found.tolist(), aligned.view_a[at].tolist(), aligned.view_b[at].tolist()):
        prefix_a[index], prefix_b[index] = aligned.prefixes[view_a], aligned.prefixes[view_b]
    # Where no page matched under the aligned prefixes, matching index pages say where
    # the copy sits (module docstring).
    unplaced = (where_index >= 0) & (matched == 0)
    for index, at_index in zip(np.flatnonzero(unplaced).tolist(), where_index[unplaced].tolist()):
        prefix_a[index], prefix_b[index] = indexes.prefix_a[at_index], indexes.prefix_b[at_index]
    name_rank = np.argsort(np.argsort([p.name for p in profiles], kind="stable"))
    return _Evidence(a, b, name_rank, dense, combined, prefix_a, prefix_b, pages_a, pages_b, shared, matched)


def _best_per_host(evidence: _Evidence, chosen: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """The chosen pairs among the ``k`` best of either of their hosts (ties: by name)."""
    a, b, s = evidence.a[chosen], evidence.b[chosen], score[chosen]
    ends, others = np.concatenate((a, b)), np.concatenate((b, a))
    both = np.tile(np.arange(chosen.size), 2)
    order = np.lexsort((evidence.name_rank[others], -np.concatenate((s, s)), ends))
    ends_sorted = ends[order]
    starts = np.flatnonzero(np.r_[True, ends_sorted[1:] != ends_sorted[:-1]]) if ends.size else ends
    rank = np.arange(ends.size) - np.repeat(starts, np.diff(np.r_[starts, ends.size]))
    keep = np.zeros(chosen.size, bool)
    keep[both[order][rank < k]] = True
    return chosen[keep]


def _pairs(
    profiles: Sequence[HostProfile], evidence: _Evidence, chosen: np.ndarray, score: np.ndarray
) -> list[CandidatePair]:
    result = []
    for i in chosen.tolist():
        a, b = profiles[evidence.a[i]].name, profiles[evidence.b[i]].name
        prefix_a, prefix_b = evidence.prefix_a[i], evidence.prefix_b[i]
        pages_a, pages_b = int(evidence.pages_a[i]), int(evidence.pages_b[i])
        if (len(prefix_b), -pages_b, b) < (len(prefix_a), -pages_a, a):
            a, b, prefix_a, prefix_b, pages_a, pages_b = b, a, prefix_b, prefix_a, pages_b, pages_a
        result.append(
            CandidatePair(
                a=a,
                b=b,
                prefix_a=prefix_a,
                prefix_b=prefix_b,
                score=float(score[i]),
                features={name: float(column[i]) for name, column in evidence.scores.items()},
                pages_a=pages_a,
                pages_b=pages_b,
                shared_paths=int(evidence.shared[i]),
                matched_paths=int(evidence.matched[i]),
            )
        )
    result.sort(key=lambda p: (-p.score, p.a, p.b))
    return result


def candidate_pairs(
    profiles: Sequence[HostProfile],
    max_candidates_per_host: int = 10,
    *,
    min_score: float = 0.15,
    params: MirrorParams = DEFAULT_MIRROR_PARAMS,
    anchor_pairs: tuple[ArrayLike, ArrayLike] | None = None,
    anchor_vote: float = ANCHOR_VOTE,
) -> list[CandidatePair]:
    """Host pairs worth validating, best first, with their aligned prefixes and evidence.

    ``anchor_pairs``: optional (first, second) arrays of indexes into ``profiles``, one
    row per cross-host URL pair with matching anchor bags (the extra vote of the module
    docstring, weighted ``anchor_vote`` in [0, 1])."""
    if max_candidates_per_host < 1:
        raise ValueError("max_candidates_per_host must be at least 1")
    if not 0.0 <= min_score <= 1.0:
        raise ValueError("min_score must be in [0, 1]")
    if not 0.0 <= anchor_vote <= 1.0:
        raise ValueError("anchor_vote must be in [0, 1]")
    evidence = _evidence(profiles, params, min_score, anchor_pairs, anchor_vote)
    strong = np.flatnonzero(evidence.combined >= min_score)
    chosen = _best_per_host(evidence, strong, evidence.combined, max_candidates_per_host)
    return _pairs(profiles, evidence, chosen, evidence.combined)


def feature_rankings(
    profiles: Sequence[HostProfile],
    max_candidates_per_host: int | None = 10,
    *,
    min_score: float = 0.0,
    params: MirrorParams = DEFAULT_MIRROR_PARAMS,
) -> dict[str, list[CandidatePair]]:
    """For each feature set alone: the pairs it scores above 0 (and >= ``min_score``), best first.

    Each pair's ``score`` is that feature's score; ``features`` still holds all six, and
    prefixes come from the path alignment whatever the feature. With
    ``max_candidates_per_host`` (None: no cut) each ranking keeps the pairs among the
    best of either host, as ``candidate_pairs`` does.
    """
    evidence = _evidence(profiles, params, min_score)
    rankings = {}
    for name in FEATURES:
        score = evidence.scores[name]
        chosen = np.flatnonzero((score > 0) & (score >= min_score))
        if max_candidates_per_host is not None:
            chosen = _best_per_host(evidence, chosen, score, max_candidates_per_host)
        rankings[name] = _pairs(profiles, evidence, chosen, score)
    return rankings
