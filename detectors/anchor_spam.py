"""Anchor statistics of a host's in-links, for the spam detector: repeated commercial
anchors and link-farm anchors.

Haveliwala, Gionis and Indyk (WebDB 2000) describe a URL by the anchor text others link
to it with (``detectors.anchors``); the same text says something about spam. Natural
in-links to a host come from people naming what they link to, so across many in-links
and many target pages the anchors vary (page titles, names, "this article"). A link farm
(CS276's and IRLbot's highly branching spam; Gyöngyi and Garcia-Molina's "Web spam
taxonomy", AIRWeb 2005, name anchor-text spamming as a term-spamming technique; not in
../shared/REFERENCES.md) links its pages with the few keyword phrases they are meant to
rank for, again and again, and those phrases are commercial ("cheap flights", "casino
bonus"). Per target host, over in-links from *other* hosts only (a site's own navigation
repeats "home" on every page and says nothing) with a non-empty anchor:

* ``top_share``: the share of in-links whose anchor is one of the host's ``top_phrases``
  (10) most frequent anchor phrases;
* ``repetition``: 1 - distinct phrases / in-links (0 when every in-link says something
  else, near 1 when a few phrases are repeated);
* ``commercial_share``: the share of in-links whose anchor holds a ``COMMERCIAL_TERMS``
  word.

Two rules, each needing ``min_inlinks`` (20) such in-links so that a handful of links
decides nothing:

* **farm anchors**: ``top_share >= farm_share`` (0.8) over at least ``min_targets``
  (10) distinct target URLs, from at least ``min_sources`` (2) hosts. Many target pages
  all linked with the same few phrases: a blogroll naming one home page ("Bob's blog")
  has one target and does not count; a documentation site's pages, linked by their
  titles, have as many phrases as pages.
* **repeated commercial anchors**: ``commercial_share >= commercial_share`` (0.3) and
  ``repetition >= min_repetition`` (0.5): commercial words are common in honest shop
  links too, but not repeated verbatim by most in-links.

``score`` is the larger of ``top_share`` (when the farm rule's gates pass) and
``commercial_share`` (when the commercial rule's gates pass), else 0; ``flagged`` when
a rule fires, with one reason string per rule. Anchors are compared as canonical phrases
(lowercased, whitespace collapsed; the store keeps canonical words). Vectorised: hosts,
URLs and phrases are factorised once (one dict pass each) and every count is a
``bincount`` or a sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["COMMERCIAL_TERMS", "DEFAULT_ANCHOR_SPAM_PARAMS", "AnchorSpamParams", "AnchorSpamVerdict", "anchor_spam"]

#: Words of commercial keyword anchors: money, deals, pharmacy, gambling, loans, and the
#: calls to act that farms repeat.
COMMERCIAL_TERMS = frozenset(
    """cheap cheapest buy discount discounts deal deals sale price prices lowest best offer offers bonus
    casino casinos poker jackpot slots spins betting bet loan loans payday credit debt mortgage refinance
    insurance quotes rates pharmacy pills viagra cialis diet weight replica replicas watches designer
    forex bitcoin crypto profit investment earn money cash free shipping order click win winner guaranteed
    hotels hotel flights holidays rental""".split()
)


@dataclass(frozen=True)
class AnchorSpamParams:
    """Thresholds of the two rules (module docstring)."""

    min_inlinks: int = 20
    top_phrases: int = 10
    farm_share: float = 0.8
    min_targets: int = 10
    min_sources: int = 2
    commercial_share: float = 0.3
    min_repetition: float = 0.5


DEFAULT_ANCHOR_SPAM_PARAMS = AnchorSpamParams()


@dataclass(frozen=True)
class AnchorSpamVerdict:
    """A target host's in-link anchor statistics and what they say."""

    host: str
    inlinks: int  # from other hosts, with a non-empty anchor
    source_hosts: int
    target_urls: int
    phrases: int  # distinct anchor phrases
    top_phrase: str
    top_share: float
    repetition: float
    commercial_share: float
    score: float
    flagged: bool
    reasons: tuple[str, ...]


def _codes(values: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct values in order of first sight and each value's index among them (a dict
    pass: sorting strings, or numpy's fixed-width copies of long URLs, cost more)."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return list(index), codes


class _Counts(NamedTuple):
    """Per target host (an index into the hosts): in-links, distinct linking hosts,
    distinct URLs linked to, distinct phrases, in-links using one of its
    ``top_phrases`` commonest phrases, in-links holding a commercial word, and its
    commonest phrase."""

    inlinks: np.ndarray
    sources: np.ndarray
    targets: np.ndarray
    phrases: np.ndarray
    top: np.ndarray
    commercial: np.ndarray
    top_phrase: np.ndarray


def anchor_spam(
    target_hosts: Sequence[str],
    target_urls: Sequence[str],
    source_hosts: Sequence[str],
    anchors: Sequence[str],
    params: AnchorSpamParams = DEFAULT_ANCHOR_SPAM_PARAMS,
) -> dict[str, AnchorSpamVerdict]:
    """Per target host with at least one in-link from another host: its anchor
    statistics and verdict. One entry per link in the four sequences (a stored link's
    target host and URL, the linking page's host, the anchor text)."""
    n = len(anchors)
    if not len(target_hosts) == len(target_urls) == len(source_hosts) == n:
        raise ValueError("target_hosts, target_urls, source_hosts and anchors differ in length")
    phrases_of = [" ".join(a.lower().split()) for a in anchors]
    hosts, host_code = _codes(list(target_hosts) + list(source_hosts))
    target, source = host_code[:n], host_code[n:]
    keep = (target != source) & np.array([bool(p) for p in phrases_of], dtype=bool)
    if not keep.any():
        return {}
    phrase_names, phrase = _codes([p for p, k in zip(phrases_of, keep.tolist()) if k])
    _, url = _codes([u for u, k in zip(target_urls, keep.tolist()) if k])
    counts = _count(target[keep], source[keep], url, phrase, phrase_names, len(hosts), params.top_phrases)
    return {
        str(hosts[i]): _verdict(str(hosts[i]), counts, i, phrase_names, params)
        for i in np.flatnonzero(counts.inlinks).tolist()
    }


def _count(
    target: np.ndarray, source: np.ndarray, url: np.ndarray, phrase: np.ndarray, phrase_names: list[str], h: int, top_phrases: int
) -> _Counts:
    """The per-host counts of the links (target host, source host, URL, phrase codes)."""

    def distinct_per_host(other: np.ndarray) -> np.ndarray:
        pairs = np.unique(target * np.int64(max(other.max() + 1, 1)) + other) // max(other.max() + 1, 1)
        return np.bincount(pairs, minlength=h)

    # Counts per (host, phrase), sorted by host then descending count: rank within host.
    width = np.int64(len(phrase_names))
    keys, counts = np.unique(target * width + phrase, return_counts=True)
    pair_host, pair_phrase = keys // width, keys % width
    order = np.lexsort((pair_phrase, -counts, pair_host))
    pair_host, pair_phrase, counts = pair_host[order], pair_phrase[order], counts[order]
    first = np.flatnonzero(np.r_[True, pair_host[1:] != pair_host[:-1]])
    rank = np.arange(pair_host.size) - np.repeat(first, np.diff(np.r_[first, pair_host.size]))
    commercial_phrase = np.array([bool(COMMERCIAL_TERMS.intersection(p.split())) for p in phrase_names], dtype=bool)
    top_phrase = np.full(h, -1, np.int64)
    top_phrase[pair_host[first]] = pair_phrase[first]
    return _Counts(
        inlinks=np.bincount(target, minlength=h),
        sources=distinct_per_host(source),
        targets=distinct_per_host(url),
        phrases=np.bincount(pair_host, minlength=h),
        top=np.bincount(pair_host, weights=counts * (rank < top_phrases), minlength=h),
        commercial=np.bincount(target, weights=commercial_phrase[phrase], minlength=h),
        top_phrase=top_phrase,
    )


def _verdict(host: str, counts: _Counts, i: int, phrase_names: list[str], params: AnchorSpamParams) -> AnchorSpamVerdict:
    """Host ``i``'s verdict by the two rules (module docstring)."""
    total, sources, targets, phrases = int(counts.inlinks[i]), int(counts.sources[i]), int(counts.targets[i]), int(counts.phrases[i])
    top_share, commercial_share = float(counts.top[i]) / total, float(counts.commercial[i]) / total
    top_phrase = str(phrase_names[counts.top_phrase[i]])
    repetition = 1.0 - phrases / total
    enough = total >= params.min_inlinks
    farm_gate = enough and targets >= params.min_targets and sources >= params.min_sources
    commercial_gate = enough and repetition >= params.min_repetition
    reasons = []
    if farm_gate and top_share >= params.farm_share:
        shown = min(phrases, params.top_phrases)
        reasons.append(
            f"farm anchors: {top_share:.0%} of {total} in-links from {sources} hosts to "
            f"{targets} URLs use {shown} phrases (top: {top_phrase!r})"
        )
    if commercial_gate and commercial_share >= params.commercial_share:
        reasons.append(
            f"repeated commercial anchors: {commercial_share:.0%} of {total} in-links hold commercial words, "
            f"{phrases} distinct phrases (repetition {repetition:.2f})"
        )
    score = max(top_share if farm_gate else 0.0, commercial_share if commercial_gate else 0.0)
    return AnchorSpamVerdict(
        host=host, inlinks=total, source_hosts=sources, target_urls=targets,
        phrases=phrases, top_phrase=top_phrase, top_share=round(top_share, 4),
        repetition=round(repetition, 4), commercial_share=round(commercial_share, 4), score=round(score, 4),
        flagged=bool(reasons), reasons=tuple(reasons),
    )
