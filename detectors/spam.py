"""Spam verdicts for pages and hosts: measured features, thresholds, reasons, a score.

Measurements live in ``detectors.spam_content`` (one page) and ``detectors.spam_links``
(the host graph); host-level counts are measured here. This module holds every threshold
and turns features into a :class:`Verdict`: a score in [0, 1] and the reasons that fired,
each with the measured value and its threshold ("top-5 term share 0.52 >= 0.3").

Combining evidence: each check that fires contributes its ``weight``, read as the
probability that this evidence alone means spam, and the score is their noisy-OR,
``1 − Π(1 − weight)``. Independent weak signals add up, a strong one decides, nothing
exceeds 1, and the reasons say exactly what moved the score. ``SPAM_SCORE`` (0.5) is the
verdict's line: one strong signal (hidden keyword text, a doorway, a link farm, cloaking)
crosses it alone; weak ones (long title, many links, long host name) cannot, alone or in
pairs, because legitimate pages have each of them — a documentation index is mostly
links, a shop lists "add to cart" fifty times. Weights are set from what the sources
report and from the crafted and sandbox pages in ``tests/test_spam_detectors.py``; they
are not fitted to a labelled corpus (Ntoulas et al. 2006 fit a decision tree on 17,168
judged pages: recall 0.862 at precision ≈ 0.91), and should be once the store has one.

Page checks (``PAGE_CHECKS``), on :class:`detectors.spam_content.PageFeatures`:

- low vocabulary: Guiraud's R <= 5 over >= 100 content words. Stuffed text recycles a
  few dozen words (R 1.5–3.4 on the sandbox's farm, doorway and cloaked pages, falling as
  they grow); prose and indexes stay at 7–17 (its documentation indexes, recipes, news,
  this project's README). Weight 0.4: the main stuffing signal.
- keyword stuffing: the top 5 terms are >= 30% of the content words. Ordinary prose of a
  few hundred words keeps its top 5 under ~15% (Zipf), stuffed text is mostly its focus
  phrases; but documentation indexes reach 39–49% on structural words ("module",
  "function"). Weight 0.15.
- compression ratio >= 4.0: Ntoulas et al. saw the share of spam climb steeply above a
  ratio of about 4 (recalled, unverified); prose compresses 2.2–3.4×, but a Sphinx-like
  index of 320 entries 7×. Weight 0.2: tables and indexes compress well too. The three
  together: 0.59; the two weak ones together, as on that index: 0.32.
- hidden keywords: >= 20 hidden words whose top 5 terms are >= 30% of them. Hidden
  prose (tabs, accordions) is not repetitive, hidden keyword lists are. Weight 0.6.
- hidden text: >= 100 hidden words at all. Weight 0.15: tabbed pages hide whole panes.
- doorway: an immediate redirect on a page of >= 50 words: content no visitor sees.
  Weight 0.6.
- stuffed title: one content word >= 3 times in the title. Weight 0.25.
- keyword-list title: >= 4 phrases between separators ("A | B | C | D"); "Page — Site"
  has 2, "Post | Category | Site" 3. Weight 0.2.
- long title: >= 15 words (Ntoulas et al.: spam probability grows with title length).
  Weight 0.15.
- repeated anchors: >= 80% of the multi-word link texts repeat another. Weight 0.2:
  farms label a thousand links with a few dozen phrases, but shops and blogs repeat
  "add to cart" and "read more".
- long meta keywords: >= 20 entries. Weight 0.15 (engines ignore the tag; CMSs fill it).
- repeated meta keywords: one word in >= 4 entries. Weight 0.2.
- long words: average >= 9 characters (Ntoulas et al.: glued keywords; English prose
  averages ~4.5–5, API indexes full of identifiers ~7.5). Weight 0.1.
- anchor text: >= 70% of the words are link text (Ntoulas et al.). Weight 0.1: indexes
  and link directories are exactly this.
- visible text: >= 80% of the HTML's characters are words (Ntoulas et al.: spam pages
  carry less markup). Weight 0.1.

Host checks (``HOST_CHECKS``), on :class:`HostFeatures` measured from
:class:`HostEvidence`:

- spam pages: >= 30% of >= 2 scored pages are spam. Weight 0.6. Two pages, not one: a
  single spam-looking page (a hacked page, a comment-spam thread) must not condemn a host
  alone, and the crawl fetches one more page of a host whose page scored as spam to
  confirm (``crawler.spam``); more would spend the budget the verdict is there to save.
  On the sandbox no page of a good host scores above 0.15, and every page of the
  content-spam hosts but a doorway's thin landing pages scores 0.6–0.93.
- link farm: a member of a :func:`detectors.spam_links.link_farms` group. Weight 0.7.
- cloaking: the crawler's and a browser's fetch of the same URL resemble each other
  <= 0.5 (Broder resemblance of their sketches). Pages change between fetches (ads,
  dates), so when a second crawler fetch is available and resembles the first less than
  0.9 the page changes by itself and the comparison is not used (Wu and Davison,
  "Cloaking and redirection: a preliminary study", AIRWeb 2005, fetch two copies from
  each side for this reason).
  Weight 0.7.
- same word count: >= 50% of >= 10 pages have exactly the same word count (Fetterly,
  Manasse and Najork, "Spam, damn spam, and statistics", WebDB 2004: template-generated
  spam; real sites' page lengths vary). Weight 0.3.
- near-duplicate pages: >= 50% of the host's pages are near-duplicates of its other
  pages (Fetterly 2004: unusually large clusters). Weight 0.25: print views and faceted
  listings do this on good sites too.
- out-degree: median distinct out-links per page >= 500 (Fetterly 2004: out-degree
  outliers; the CS276 worst case is 1,000 per page). Above the largest real index pages
  as a *median*: a documentation site has one 300-link index among pages of 20 links.
  Weight 0.2.
- spam in-links: every host seen linking to it is a spam host (>= 1 of them). Weight 0.4:
  spammers link to good sites too (camouflage), so this alone is not enough — but a link
  farm's members are known by their neighbours before any of their pages is fetched
  (BadRank and Anti-TrustRank propagate distrust along links in the same spirit:
  Krishnan and Raj, AIRWeb 2006).
- farm anchors: >= 20 links from spam pages point at it with at most one distinct anchor
  text per 10 links. Weight 0.3: farms label thousands of links with a few commercial
  phrases per target (the sandbox farm: 8–9 phrases over ~400 links, 0.02); a spam
  page's camouflage links to good sites are few and carry their names. With the check
  above: 0.58, the verdict on a farm member never fetched.
- commercial anchors: ``detectors.anchor_spam`` flags the links spam pages point at it
  with (farm anchors over many of its URLs, or commercial keywords repeated verbatim).
  Weight 0.2: it restates in words what the two checks above measure in structure.
- hosts on one IP: >= 100 (Fetterly 2004: IPs serving very many host names are outliers,
  mostly spam). Weight 0.1: shared hosting does the same for good sites.
- host name (Fetterly 2004: spam host names are long, with many dots, dashes, digits):
  length >= 40, dots >= 5, dashes >= 3, digits >= 4, weight 0.1 each except dashes
  0.15 (keyword-joined names: cheap-flights-best-price.example). Typical names
  (www.cs.northfield.edu: 21 characters, 3 dots) are far below.
"""

from __future__ import annotations

import ipaddress
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from detectors.spam_content import PageFeatures, page_features
from detectors.spam_links import FarmGroup, link_farms

__all__ = [
    "HOST_CHECKS",
    "PAGE_CHECKS",
    "SPAM_SCORE",
    "Check",
    "FarmGroup",
    "HostEvidence",
    "HostFeatures",
    "PageFeatures",
    "Reason",
    "Verdict",
    "evaluate",
    "host_features",
    "host_verdict",
    "hostname_features",
    "link_farms",
    "page_features",
    "page_verdict",
]

#: Score at and above which a page or host is spam.
SPAM_SCORE = 0.5
#: Scored pages a host needs before the share of spam pages among them counts.
MIN_SCORED_PAGES = 2
#: Pages a host needs before word-count and out-degree statistics count.
MIN_HOST_PAGES = 10
#: Links from spam pages a host needs before their anchors' repetition counts.
MIN_FARM_ANCHORS = 20
#: Second crawler fetch resemblance below which a page changes by itself.
STABLE_REFETCH = 0.9


@dataclass(frozen=True, slots=True)
class Reason:
    """A check that fired: what it measured, the value, the threshold, its weight."""

    code: str
    label: str
    value: float
    threshold: float
    above: bool
    weight: float

    def __str__(self) -> str:
        return f"{self.label} {_number(self.value)} {'>=' if self.above else '<='} {_number(self.threshold)}"


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


@dataclass(frozen=True, slots=True)
class Check:
    """Fires when ``feature`` is at or above (``above``) or at or below ``threshold``."""

    code: str
    feature: str
    label: str
    threshold: float
    weight: float
    above: bool = True

    def fire(self, features: Any) -> Reason | None:
        value = getattr(features, self.feature)
        if value is None or (value < self.threshold if self.above else value > self.threshold):
            return None
        return Reason(self.code, self.label, float(value), self.threshold, self.above, self.weight)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A score in [0, 1] and the reasons behind it, strongest first."""

    score: float
    reasons: tuple[Reason, ...]

    @property
    def is_spam(self) -> bool:
        return self.score >= SPAM_SCORE

    @property
    def messages(self) -> list[str]:
        return [str(r) for r in self.reasons]


def evaluate(features: Any, checks: Sequence[Check]) -> Verdict:
    """The noisy-OR of the weights of the ``checks`` that fire on ``features``."""
    reasons = sorted((r for c in checks if (r := c.fire(features)) is not None), key=lambda r: -r.weight)
    miss = 1.0
    for reason in reasons:
        miss *= 1.0 - reason.weight
    return Verdict(round(1.0 - miss, 6), tuple(reasons))


PAGE_CHECKS: tuple[Check, ...] = (
    Check("low-vocabulary", "vocabulary_richness", "vocabulary richness (Guiraud's R)", 5.0, 0.4, above=False),
    Check("keyword-stuffing", "top_term_share", "top-5 term share", 0.30, 0.15),
    Check("compressible", "compression_ratio", "compression ratio", 4.0, 0.2),
    Check("hidden-keywords", "hidden_top_share", "top-5 term share of hidden words", 0.30, 0.6),
    Check("hidden-text", "hidden_words", "hidden words", 100, 0.15),
    Check("doorway", "redirect_words", "words on a redirecting page", 50, 0.6),
    Check("stuffed-title", "title_max_repeat", "repetitions of a title word", 3, 0.25),
    Check("keyword-list-title", "title_segments", "phrases in the title", 4, 0.2),
    Check("long-title", "title_words", "title words", 15, 0.15),
    Check("repeated-anchors", "anchor_repetition", "repeated share of link texts", 0.8, 0.2),
    Check("long-meta-keywords", "meta_keywords", "meta keywords", 20, 0.15),
    Check("repeated-meta-keywords", "meta_keyword_max_repeat", "repetitions of a meta keyword word", 4, 0.2),
    Check("long-words", "avg_word_length", "average word length", 9.0, 0.1),
    Check("anchor-text", "anchor_fraction", "anchor-text fraction", 0.7, 0.1),
    Check("visible-text", "visible_fraction", "visible-text fraction", 0.8, 0.1),
)


def page_verdict(features: PageFeatures) -> Verdict:
    """The spam verdict of one page from its :func:`page_features`."""
    return evaluate(features, PAGE_CHECKS)


# -- hosts -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostEvidence:
    """What the crawl knows about one host; every field but ``host`` is optional.

    ``host`` is the host name (a ":port" suffix is ignored). ``page_scores`` are the
    :func:`page_verdict` scores of its pages; ``word_counts`` and ``out_degrees`` (distinct
    out-links) are per HTML page. ``hosts_on_ip``: host names served from its address,
    itself included. ``near_duplicate_fraction``: share of its pages that are
    near-duplicates of other pages of the same host (copies on other hosts are mirrors,
    judged by ``detectors.mirrors``). ``link_farm``: the :class:`FarmGroup` it belongs to.
    ``cloak_resemblance``: resemblance of the crawler's and a browser's fetch of its
    pages; ``refetch_resemblance``: of two crawler fetches of the same pages.
    ``inlink_hosts``: other hosts seen linking to it, ``spam_inlink_hosts`` of them spam;
    ``spam_inlink_anchors``: the anchor texts of the links spam pages point at it with;
    ``anchor_spam_score``: ``detectors.anchor_spam``'s score of those links when it flags them.
    """

    host: str
    page_scores: Sequence[float] = ()
    word_counts: Sequence[int] = ()
    out_degrees: Sequence[int] = ()
    hosts_on_ip: int = 1
    near_duplicate_fraction: float | None = None
    link_farm: FarmGroup | None = None
    cloak_resemblance: float | None = None
    refetch_resemblance: float | None = None
    inlink_hosts: int = 0
    spam_inlink_hosts: int = 0
    spam_inlink_anchors: Sequence[str] = ()
    anchor_spam_score: float | None = None


@dataclass(frozen=True, slots=True)
class HostFeatures:
    """Measurements of one host; ``None``: not measurable (too few pages, IP literal)."""

    name_length: int | None
    name_dots: int | None
    name_dashes: int | None
    name_digits: int | None
    spam_page_share: float | None
    same_word_count_share: float | None
    median_out_degree: float | None
    hosts_on_ip: int
    near_duplicate_fraction: float | None
    link_farm_size: int | None
    cloak_resemblance: float | None
    spam_inlink_share: float | None
    spam_anchor_variety: float | None
    anchor_spam_score: float | None


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def hostname_features(host: str) -> tuple[int, int, int, int] | None:
    """(length, dots, dashes, digits) of a host name (port ignored); None for an IP literal."""
    name = _hostname(host).lower().rstrip(".")
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return len(name), name.count("."), name.count("-"), sum(c.isdigit() for c in name)
    return None


def host_features(evidence: HostEvidence) -> HostFeatures:
    name = hostname_features(evidence.host)
    length, dots, dashes, digits = name if name is not None else (None, None, None, None)
    scores = np.asarray(evidence.page_scores, dtype=np.float64)
    counts = np.asarray(evidence.word_counts, dtype=np.int64)
    same = None
    if counts.size >= MIN_HOST_PAGES:
        same = float(np.unique(counts, return_counts=True)[1].max() / counts.size)
    degrees = evidence.out_degrees
    cloak = evidence.cloak_resemblance
    if evidence.refetch_resemblance is not None and evidence.refetch_resemblance < STABLE_REFETCH:
        cloak = None
    return HostFeatures(
        name_length=length,
        name_dots=dots,
        name_dashes=dashes,
        name_digits=digits,
        spam_page_share=float((scores >= SPAM_SCORE).mean()) if scores.size >= MIN_SCORED_PAGES else None,
        same_word_count_share=same,
        median_out_degree=float(statistics.median(degrees)) if len(degrees) >= MIN_HOST_PAGES else None,
        hosts_on_ip=evidence.hosts_on_ip,
        near_duplicate_fraction=evidence.near_duplicate_fraction,
        link_farm_size=len(evidence.link_farm.members) if evidence.link_farm is not None else None,
        cloak_resemblance=cloak,
        spam_inlink_share=evidence.spam_inlink_hosts / evidence.inlink_hosts if evidence.inlink_hosts else None,
        spam_anchor_variety=(
            len(set(evidence.spam_inlink_anchors)) / len(evidence.spam_inlink_anchors)
            if len(evidence.spam_inlink_anchors) >= MIN_FARM_ANCHORS else None
        ),
        anchor_spam_score=evidence.anchor_spam_score,
    )


HOST_CHECKS: tuple[Check, ...] = (
    Check("spam-pages", "spam_page_share", "share of spam pages", 0.3, 0.6),
    Check("link-farm", "link_farm_size", "hosts in its link farm", 1, 0.7),
    Check("cloaking", "cloak_resemblance", "crawler/browser resemblance", 0.5, 0.7, above=False),
    Check("same-word-count", "same_word_count_share", "share of pages with one word count", 0.5, 0.3),
    Check("near-duplicates", "near_duplicate_fraction", "near-duplicate share of pages", 0.5, 0.25),
    Check("out-degree", "median_out_degree", "median out-links per page", 500, 0.2),
    Check("spam-inlinks", "spam_inlink_share", "share of linking hosts that are spam", 1.0, 0.4),
    Check("farm-anchors", "spam_anchor_variety", "distinct anchors per link from spam pages", 0.1, 0.3, above=False),
    Check("commercial-anchors", "anchor_spam_score", "anchor spam score of links from spam pages", 0.3, 0.2),
    Check("shared-ip", "hosts_on_ip", "hosts on its IP", 100, 0.1),
    Check("long-hostname", "name_length", "host name length", 40, 0.1),
    Check("hostname-dots", "name_dots", "dots in host name", 5, 0.1),
    Check("hostname-dashes", "name_dashes", "dashes in host name", 3, 0.15),
    Check("hostname-digits", "name_digits", "digits in host name", 4, 0.1),
)


def host_verdict(evidence: HostEvidence) -> Verdict:
    """The spam verdict of one host (see the module docstring)."""
    return evaluate(host_features(evidence), HOST_CHECKS)
