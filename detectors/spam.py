"""Spam verdicts for pages and hosts: measured features, thresholds, reasons, a score.

Measurements live in ``detectors.spam_content`` (one page) and ``detectors.spam_links``
(the host graph); host-level counts are measured here. This module holds every threshold,
each stated once in ``PAGE_CHECKS`` or ``HOST_CHECKS`` beside its reason, and turns
features into a :class:`Verdict`: a score in [0, 1] and the reasons that fired, each with
the measured value and its threshold ("top-5 term share 0.52 >= 0.3").

Combining evidence. Each check that fires contributes its ``weight``, read as the
probability that this evidence alone means spam, and the score is their noisy-OR,
``1 − Π(1 − weight)``: independent signals add up, nothing exceeds 1, and the reasons say
exactly what moved the score. ``SPAM_SCORE`` is the verdict's line.

Strong and weak evidence. A *strong* check names a technique that ordinary pages do
not use: keywords hidden from the reader, a page that sends visitors away at once (a
doorway), stuffed meta keywords, a crawler shown another page than a browser (cloaking),
a dense group of hosts voting for each other (a link farm). One strong check crosses the
line alone. The *weak* checks are the content statistics of Ntoulas, Najork, Manasse and
Fetterly, "Detecting spam web pages through content analysis" (WWW 2006: word counts,
compressibility, anchor and visible text, popular terms) and the outlier statistics of
Fetterly, Manasse and Najork, "Spam, damn spam, and statistics" (WebDB 2004). Ordinary
documentation pages trip them (``docs/CALIBRATION.md``), so together they stay below
the line (``WEAK_CAP``), unless weak page checks of several families agree
(``AGREEING_FAMILIES``: correlated measures of one family count once), which is a strong
reason of its own (``agreeing-evidence``). A host is condemned by strong evidence only:
the weak evidence of its pages never adds up to a verdict, however many of them carry
some (a link directory or an API index is all link lists and repeated names, page after
page).

Weights are set from what the sources report, from the calibration above and from the
crafted pages in ``tests/test_spam_detectors.py``; they are not fitted to a labelled
corpus (Ntoulas et al. 2006 fit a decision tree on 17,168 judged pages: recall 0.862 at
precision ≈ 0.91), and should be once the store has one.
"""

from __future__ import annotations

import ipaddress
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.spam_content import PageFeatures, page_features
from mirrorscope.detectors.spam_links import FarmGroup, LinkEvidence, link_farms

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
#: Highest score weak evidence alone can give: below the line, whatever adds up. On real
#: documentation sites (Debian's documentation packages: Sphinx, DocBook, texinfo,
#: LaTeX2HTML, vim2html, in seven languages; ``docs/CALIBRATION.md``) the weak checks
#: fire on ordinary pages all the time: an index is mostly links and compresses 9×, a
#: source listing repeats its identifiers, a release-notes index repeats "release notes"
#: on every line...
WEAK_CAP = 0.45
#: ...unless weak page checks of this many families fire together: correlated checks (the
#: text statistics all measure repetition) count once, and on those documentation pages
#: no more than 2 families ever fired together; stuffed farm pages show 3 to 5.
AGREEING_FAMILIES = 3
#: The weight of that agreement: strong, it crosses the line alone.
AGREEMENT_WEIGHT = 0.5
#: Scored pages a host needs before the share of spam pages among them counts.
MIN_SCORED_PAGES = 2
#: Pages a host needs before word-count and out-degree statistics count.
MIN_HOST_PAGES = 10
#: Links from spam pages a host needs before their anchors' repetition counts...
MIN_FARM_ANCHORS = 20
#: ...distinct URLs of it they point at: a farm links to many pages of each member,
#: a copied footer ("Created using Sphinx") to one page, however often...
MIN_FARM_URLS = 10
#: ...and distinct anchors: a farm labels its links with several keyword phrases,
#: camouflage with the site's name.
MIN_FARM_PHRASES = 3
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
    strong: bool = False

    def __str__(self) -> str:
        return f"{self.label} {_number(self.value)} {'>=' if self.above else '<='} {_number(self.threshold)}"


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


@dataclass(frozen=True, slots=True)
class Check:
    """Fires when ``feature`` is at or above (``above``) or at or below ``threshold``.

    ``strong``: evidence that can condemn alone (module docstring); the others together
    never reach ``SPAM_SCORE``, unless they come from ``AGREEING_FAMILIES`` different
    ``family`` s (page checks only)."""

    code: str
    feature: str
    label: str
    threshold: float
    weight: float
    above: bool = True
    strong: bool = False
    family: str = ""

    def fire(self, features: Any) -> Reason | None:
        value = getattr(features, self.feature)
        if value is None or (value < self.threshold if self.above else value > self.threshold):
            return None
        return Reason(self.code, self.label, float(value), self.threshold, self.above, self.weight, self.strong)


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


def evaluate(features: Any, checks: Sequence[Check], agreeing: int | None = None) -> Verdict:
    """The noisy-OR of the weights of the ``checks`` that fire on ``features``, at most
    ``WEAK_CAP`` unless a strong check fired; with ``agreeing``, weak checks of that many
    families together are a strong reason of their own (module docstring)."""
    fired = [(c, r) for c in checks if (r := c.fire(features)) is not None]
    families = sorted({c.family for c, r in fired if not r.strong and c.family})
    reasons = [r for _, r in fired]
    if agreeing is not None and len(families) >= agreeing:
        label = f"kinds of weak evidence ({', '.join(families)})"
        reasons.append(Reason("agreeing-evidence", label, len(families), agreeing, True, AGREEMENT_WEIGHT, True))
    reasons.sort(key=lambda r: (-r.strong, -r.weight))
    miss = 1.0
    for reason in reasons:
        miss *= 1.0 - reason.weight
    score = 1.0 - miss
    if not any(r.strong for r in reasons):
        score = min(score, WEAK_CAP)
    return Verdict(round(score, 6), tuple(reasons))


PAGE_CHECKS: tuple[Check, ...] = (
    # Strong. Hidden text whose top 5 terms are 30% of it: tabs and accordions hide prose,
    # spam hides keyword lists (what counts as hidden: detectors.spam_content).
    Check("hidden-keywords", "hidden_top_share", "top-5 term share of hidden words", 0.30, 0.6, strong=True),
    # An immediate redirect on a page of 50 words or more: content no visitor sees (a
    # "this page has moved" stub has a handful of words).
    Check("doorway", "redirect_words", "words on a redirecting page", 50, 0.6, strong=True),
    # One word in 5 meta keyword entries ("cheap hotels paris, cheap hotels rome, ...");
    # real documentation repeats a word in 2 at most, a shop's "shoes, running shoes" 4.
    Check("stuffed-meta-keywords", "meta_keyword_max_repeat", "repetitions of a meta keyword word", 5, 0.5, strong=True),
    # Weak (capped at WEAK_CAP together). Guiraud's R <= 5 over >= 100 content words:
    # stuffed text recycles a few dozen words, but so do source listings and indexes
    # (real pages go down to 2.4).
    Check("low-vocabulary", "vocabulary_richness", "vocabulary richness (Guiraud's R)", 5.0, 0.4, above=False, family="text"),
    # The top 5 terms are 30% of the content words: ordinary prose keeps them under ~15%
    # (Zipf), stuffed text is mostly its focus phrases, indexes repeat structural words.
    Check("keyword-stuffing", "top_term_share", "top-5 term share", 0.30, 0.15, family="text"),
    # Compression ratio >= 4: Ntoulas et al. saw spam climb steeply above about 4
    # (recalled, unverified); prose compresses 2.2–3.4×, tables and indexes up to 9.6×.
    Check("compressible", "compression_ratio", "compression ratio", 4.0, 0.2, family="text"),
    # 100 hidden words at all: tabbed pages hide whole panes.
    Check("hidden-text", "hidden_words", "hidden words", 100, 0.15, family="hidden"),
    # One content word 3 times in the title.
    Check("stuffed-title", "title_max_repeat", "repetitions of a title word", 3, 0.25, family="title"),
    # 4 phrases between separators ("A | B | C | D"); "Page — Site" has 2.
    Check("keyword-list-title", "title_segments", "phrases in the title", 4, 0.2, family="title"),
    # 15 title words (Ntoulas et al.: spam probability grows with title length).
    Check("long-title", "title_words", "title words", 15, 0.15, family="title"),
    # 80% of the multi-word link texts repeat another: farms label a thousand links with a
    # few dozen phrases, shops and blogs repeat "add to cart" and "read more".
    Check("repeated-anchors", "anchor_repetition", "repeated share of link texts", 0.8, 0.2, family="links"),
    # 20 meta keyword entries: engines ignore the tag, content systems fill it.
    Check("long-meta-keywords", "meta_keywords", "meta keywords", 20, 0.15, family="meta"),
    # Average word length 9 (glued keywords); English prose ~4.5–5, API indexes ~7.5.
    Check("long-words", "avg_word_length", "average word length", 9.0, 0.1, family="text"),
    # 70% of the words are link text (Ntoulas et al.); indexes and directories are this.
    Check("anchor-text", "anchor_fraction", "anchor-text fraction", 0.7, 0.1, family="links"),
    # 80% of the HTML's characters are words (Ntoulas et al.: spam carries less markup).
    Check("visible-text", "visible_fraction", "visible-text fraction", 0.8, 0.1, family="text"),
)


def page_verdict(features: PageFeatures) -> Verdict:
    """The spam verdict of one page from its :func:`page_features`."""
    return evaluate(features, PAGE_CHECKS, agreeing=AGREEING_FAMILIES)


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
    ``links``: its trust, distrust and ranks in the host graph (``detectors.spam_links.
    link_evidence``), when the offline spam job computed them. ``rapid_change_share``: of
    its pages re-crawled with content, the share that changed completely between crawls
    (``detectors.page_change``), when re-crawls compared enough of them.
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
    spam_inlink_urls: int = 0
    anchor_spam_score: float | None = None
    links: LinkEvidence | None = None
    rapid_change_share: float | None = None


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
    untrusted_distrust: float | None
    rapid_change_share: float | None = None


def hostname_features(host: str) -> tuple[int, int, int, int] | None:
    """(length, dots, dashes, digits) of a host name (port ignored); None for an IP literal."""
    name = strip_port(host).lower().rstrip(".")
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return len(name), name.count("."), name.count("-"), sum(c.isdigit() for c in name)
    return None


def _farm_anchor_variety(evidence: HostEvidence) -> float | None:
    """Distinct anchors per link from spam pages, measured only for a host that nothing
    but spam links to, through enough links to enough of its URLs with a few phrases
    (``HOST_CHECKS``' farm-anchors)."""
    anchors = evidence.spam_inlink_anchors
    distinct = len(set(anchors))
    if (
        not evidence.inlink_hosts
        or evidence.spam_inlink_hosts < evidence.inlink_hosts
        or len(anchors) < MIN_FARM_ANCHORS
        or evidence.spam_inlink_urls < MIN_FARM_URLS
        or distinct < MIN_FARM_PHRASES
    ):
        return None
    return distinct / len(anchors)


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
    links = evidence.links
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
        spam_anchor_variety=_farm_anchor_variety(evidence),
        anchor_spam_score=evidence.anchor_spam_score,
        untrusted_distrust=links.distrust if links is not None and links.trust == 0.0 else None,
        rapid_change_share=evidence.rapid_change_share,
    )


HOST_CHECKS: tuple[Check, ...] = (
    # Strong. 30% of >= 2 scored pages are spam pages (which takes a strong page check):
    # two, not one, so a single hacked page or comment-spam thread does not condemn a
    # host; the crawl fetches one more page of a host whose page scored as spam to confirm.
    Check("spam-pages", "spam_page_share", "share of spam pages", 0.3, 0.6, strong=True),
    # A member of a detectors.spam_links.link_farms group.
    Check("link-farm", "link_farm_size", "hosts in its link farm", 1, 0.7, strong=True),
    # The crawler's and a browser's fetch of one URL resemble each other 0.5 or less, the
    # page being stable across two crawler fetches (Wu and Davison, "Cloaking and
    # redirection: a preliminary study", AIRWeb 2005, fetch two copies from each side).
    Check("cloaking", "cloak_resemblance", "crawler/browser resemblance", 0.5, 0.7, above=False, strong=True),
    # Only spam pages link to it, labelling many of its URLs with a few phrases: a farm
    # member known by the thousand links of a farm page before any of its pages is
    # fetched (measured only then: host_features). A copied footer points at one page,
    # camouflage links carry the site's name, a site good hosts link to is not judged so.
    Check("farm-anchors", "spam_anchor_variety", "distinct anchors per link from spam pages", 0.1, 0.5, above=False, strong=True),
    # No path from the crawl's seeds reaches it but through condemned hosts, and it links
    # (directly or in a few links) to condemned hosts with at least half the distrust a
    # condemned host starts with (Anti-TrustRank, detectors.spam_links.link_evidence;
    # linking to one condemned host that nothing else links to gives 0.85): a farm's
    # member the content checks missed. Good hosts that link to spam (comment
    # spam, a directory) carry as much distrust, but a trusted path reaches them; good
    # hosts only spam links to carry none (distrust flows to the hosts linking to spam).
    Check("untrusted-spam-linker", "untrusted_distrust", "distrust of a host no trusted path reaches", 0.5, 0.6, strong=True),
    # Weak. Every host seen linking to it is spam: spammers link to good sites too.
    Check("spam-inlinks", "spam_inlink_share", "share of linking hosts that are spam", 1.0, 0.4),
    # 50% of >= 10 pages have one word count (Fetterly 2004: template-generated spam).
    Check("same-word-count", "same_word_count_share", "share of pages with one word count", 0.5, 0.3),
    # 50% of its pages are near-duplicates of its other pages (Fetterly 2004: unusually
    # large clusters); print views and faceted listings do this on good sites too.
    Check("near-duplicates", "near_duplicate_fraction", "near-duplicate share of pages", 0.5, 0.25),
    # 80% of its re-crawled pages changed completely between crawls (Fetterly, Manasse and
    # Najork 2004: rapid complete change; detectors.page_change, measured on >= 5 pages).
    # Weak: a site that rebuilds every page (a new template with new text, a relaunch)
    # does it once; machine-generated spam does it at every crawl, which more re-crawls show.
    Check("rapid-change", "rapid_change_share", "share of pages changed completely between crawls", 0.8, 0.35),
    # Median distinct out-links per page 500 (Fetterly 2004: out-degree outliers; the
    # CS276 worst case is 1,000): above the largest real index pages as a median.
    Check("out-degree", "median_out_degree", "median out-links per page", 500, 0.2),
    # detectors.anchor_spam flags the anchors spam pages link to it with.
    Check("commercial-anchors", "anchor_spam_score", "anchor spam score of links from spam pages", 0.3, 0.2),
    # 100 host names on its IP (Fetterly 2004); shared hosting does the same.
    Check("shared-ip", "hosts_on_ip", "hosts on its IP", 100, 0.1),
    # Long host names with many dots, dashes and digits (Fetterly 2004); typical names
    # (www.cs.northfield.edu: 21 characters, 3 dots) are far below.
    Check("long-hostname", "name_length", "host name length", 40, 0.1),
    Check("hostname-dots", "name_dots", "dots in host name", 5, 0.1),
    Check("hostname-dashes", "name_dashes", "dashes in host name", 3, 0.15),
    Check("hostname-digits", "name_digits", "digits in host name", 4, 0.1),
)


def host_verdict(evidence: HostEvidence) -> Verdict:
    """The spam verdict of one host (see the module docstring)."""
    return evaluate(host_features(evidence), HOST_CHECKS)
