"""Validating candidate mirror pairs, and what validated pairs imply about the others.

Host1/a and Host2/b are mirrors when, for most paths p, Host1/a/p exists iff Host2/b/p
exists, with identical or near-identical content (Bharat and Broder, "Mirror, mirror on
the Web", WWW8 1999). Bharat, Broder, Dean and Henzinger, "A comparison of techniques to
find mirrored hosts on the WWW" (2000) validate a candidate pair by fetching about 20
sampled paths from each host on the other, and use transitive inference to spare
validations. The caller fetches; this module decides what to fetch and what it means.

``sample_paths`` (k = 20 per side, seed 0)
    Coordinated bottom-k sampling: every relative path under the aligned prefix gets a
    rank, a keyed 64-bit BLAKE2b hash of the path and the seed, and each side offers its k
    lowest-ranked paths, mapped to the other side's prefix. Both sides pick the same
    relative paths where they hold them, so a pair of full mirrors costs k comparisons,
    not 2k, and the choice is deterministic and stable as the crawl grows.
``judge``
    Takes, for each direction, the k lowest-ranked observations whose source page exists:
    a uniform sample of that side whatever the other side added (Cohen and Kaplan's
    bottom-k sketches), so use the ``k`` and ``seed`` given to ``sample_paths``. A sampled
    page matches when its counterpart exists with an identical fingerprint, or with
    signatures agreeing on at least ``near_agreement`` (0.8, the usual near-duplicate
    resemblance; the estimate's standard error at 84 positions is about 0.04) of
    positions, or, when the caller supplies it, with a containment of at least
    ``min_containment`` (0.9). Containment (Broder et al. 1997: |S(A) & S(B)| / |S(A)|,
    the larger of the two directions) stays near 1 for a page re-wrapped in another
    site's header, menu and footer, whose resemblance drops to 0.7-0.9 (a repackaged
    mirror); 0.9 leaves room for the noise of a MOD_m estimate on a page of a few hundred
    words, and most pages with a paragraph rewritten stay below it. An observation whose
    counterpart's existence or content is unknown is left out of that direction's count.
    Levels, from the matched fractions f (A's pages found on B) and g (B's found on A):

    * ``full`` when f >= 0.9 and g >= 0.9: mirrors both ways; 0.9 rather than 1 forgives
      a copy crawled incompletely or a few pages changed since, and 20 samples estimate a
      fraction of 0.9 to about +-0.07;
    * ``partial`` when one of them is >= 0.9 (a subset mirror: B holds part of A, all of
      it matching) or both are >= 0.5 (two copies that have each drifted), provided
      min(f, g) >= ``min_coverage`` (0.3);
    * ``none`` otherwise.

    Shared boilerplate is not a mirror. A pair needs ``min_matched`` (5) matched sampled
    paths in all, so hosts of a handful of pages (a licence and a contact page in common)
    are never mirrors. And the mirrored part must be at least ``min_coverage`` of the
    larger side too, that is of both sides. Measured against the smaller side only, such
    a floor would never bite (the thresholds above already ask for 0.5 or 0.9 of one
    side); it is against the larger side that a small host holding a few common pages of
    a big one fails (f = 8/1000, g = 1). A subset mirror of one part of a big site is
    still found: candidate generation aligns it with that part's prefix, against which
    it is large.
    A verdict is ``decided`` only when each direction has at least one checked path and
    no more than half of its sample unknown; ``MirrorGraph`` ignores the rest.
``MirrorGraph``
    Keeps decided verdicts between locations (host + prefix) and infers others, as
    Bharat et al. do: Mirror(A, x) and Mirror(x, B) imply Mirror(A, B); Mirror(A, x) and
    not Mirror(x, B) imply not Mirror(A, B). Both rules hold when Mirror(A, x) is full
    (A and x hold the same pages), so chains run through full verdicts, with at most one
    partial verdict in a chain (two subset mirrors of one site may share nothing), and
    a negative verdict carries over to full mirrors only.
    Conflicting evidence between two groups answers None: validate directly. A direct
    verdict always wins. ``clusters`` are the connected components of full and partial
    verdicts.
``choose_canonical``
    The location other hosts link to most (what users and search engines already treat
    as the site), then the one with most pages (the most complete copy), then the
    shortest (originals tend to sit at a host's root under the shorter name), then the
    alphabetically first, so the choice is total and stable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mirrorscope.detectors.mirror_candidates import CandidatePair
from mirrorscope.detectors.mirror_features import HostProfile

__all__ = [
    "MirrorGraph",
    "MirrorVerdict",
    "Observation",
    "choose_canonical",
    "judge",
    "location",
    "sample_mapped_paths",
    "sample_paths",
]

_MATCHES = ("identical", "near", "contained")


def location(host: str, prefix: str = "/") -> str:
    """The name of a host's subtree: host + prefix, e.g. "archive.org/pub/python/"."""
    return host + prefix


def _as_location(name: str) -> str:
    # Host keys never hold "/": a bare host name means its root.
    return name if "/" in name else name + "/"


def _rank(relative: str, seed: int) -> int:
    digest = hashlib.blake2b(relative.encode("utf-8", "surrogatepass"), digest_size=8, key=seed.to_bytes(8, "little"))
    return int.from_bytes(digest.digest(), "little")


def _relative(path: str, prefix: str) -> str:
    return path[len(prefix) - 1 :] if path.startswith(prefix) else path


def _check_seed(seed: int) -> None:
    if not 0 <= seed < 2**64:
        raise ValueError("seed must fit in 64 unsigned bits")


def sample_paths(
    pair: CandidatePair, profile_a: HostProfile, profile_b: HostProfile, k: int = 20, seed: int = 0
) -> list[tuple[str, str]]:
    """Up to k paths from each side under the aligned prefixes, as (path on A, path on B).

    Deterministic; paths both sides offer appear once, so the list holds up to 2k pairs.
    """
    if (profile_a.name, profile_b.name) != (pair.a, pair.b):
        raise ValueError(f"profiles {profile_a.name}, {profile_b.name} do not match the pair {pair.a}, {pair.b}")
    if k < 1:
        raise ValueError("k must be at least 1")
    _check_seed(seed)
    chosen: dict[str, int] = {}
    for profile, prefix in ((profile_a, pair.prefix_a), (profile_b, pair.prefix_b)):
        relative = {_relative(p, prefix) for p in profile.paths if p.startswith(prefix)}
        ranked = sorted((_rank(r, seed), r) for r in relative)
        chosen.update((r, rank) for rank, r in ranked[:k])
    return [(pair.prefix_a + r[1:], pair.prefix_b + r[1:]) for r, _ in sorted(chosen.items(), key=lambda item: item[1])]


def sample_mapped_paths(
    pair: CandidatePair, profile_a: HostProfile, profile_b: HostProfile, counterparts: Mapping[str, str], k: int = 20, seed: int = 0
) -> list[tuple[str, str]]:
    """``sample_paths`` for a pair whose pages correspond by ``counterparts`` (path on A ->
    path on B, e.g. the pages of two replicas of a collection) rather than by path alone.

    Each side's k lowest-ranked paths under its prefix (ranked by their relative path, as
    ``sample_paths`` ranks them) are paired with their counterpart where they have one
    and with the same relative path on the other side otherwise; a renamed copy is then
    compared page with page, and its pages outside the correspondence still count.
    """
    if (profile_a.name, profile_b.name) != (pair.a, pair.b):
        raise ValueError(f"profiles {profile_a.name}, {profile_b.name} do not match the pair {pair.a}, {pair.b}")
    if k < 1:
        raise ValueError("k must be at least 1")
    _check_seed(seed)
    back = {b: a for a, b in counterparts.items()}
    chosen: dict[tuple[str, str], int] = {}
    sides = ((profile_a, pair.prefix_a, pair.prefix_b, counterparts, False), (profile_b, pair.prefix_b, pair.prefix_a, back, True))
    for profile, prefix, other_prefix, mapping, flip in sides:
        ranked = sorted((_rank(_relative(p, prefix), seed), p) for p in profile.paths if p.startswith(prefix))
        for rank, path in ranked[:k]:
            other = mapping.get(path, other_prefix + _relative(path, prefix)[1:])
            chosen.setdefault((other, path) if flip else (path, other), rank)
    return [paths for paths, _ in sorted(chosen.items(), key=lambda item: item[1])]


@dataclass(frozen=True, eq=False)
class Observation:
    """What fetching one sampled (path on A, path on B) found; None where unknown."""

    path_a: str
    path_b: str
    exists_a: bool | None
    exists_b: bool | None
    fingerprint_a: int | None = None
    fingerprint_b: int | None = None
    signature_a: np.ndarray | None = None
    signature_b: np.ndarray | None = None
    #: How much of one page's text the other holds, the larger of the two directions
    #: (e.g. ``detectors.sketch.containment_mod_m`` both ways), when the caller has it.
    containment: float | None = None


@dataclass(frozen=True)
class MirrorVerdict:
    """The validation of one pair: ``level`` "full", "partial" or "none", and why.

    ``fraction_ab`` is the share of A's sampled paths found on B with matching content
    (``matched_ab`` of ``checked_ab``), ``fraction_ba`` the converse; None when nothing
    was checked. ``identical``, ``near_identical`` and ``contained`` count the matched
    observations by kind. ``decided`` is False when the observations could not settle
    the question.
    """

    a: str
    b: str
    prefix_a: str
    prefix_b: str
    level: str
    decided: bool
    fraction_ab: float | None
    fraction_ba: float | None
    checked_ab: int
    matched_ab: int
    checked_ba: int
    matched_ba: int
    identical: int
    near_identical: int
    reasons: tuple[str, ...]
    pages_a: int = 0
    pages_b: int = 0
    contained: int = 0

    @property
    def is_mirror(self) -> bool:
        return self.level != "none"


def _content_match(observation: Observation, near_agreement: float, min_containment: float) -> str | None:
    """How the two pages compare: identical, near, contained, different, or None when unknown."""
    fp_a, fp_b = observation.fingerprint_a, observation.fingerprint_b
    if fp_a is not None and fp_b is not None and fp_a == fp_b:
        return "identical"
    sig_a, sig_b = observation.signature_a, observation.signature_b
    known = fp_a is not None and fp_b is not None
    if sig_a is not None and sig_b is not None:
        sig_a, sig_b = np.asarray(sig_a), np.asarray(sig_b)
        if sig_a.shape != sig_b.shape or sig_a.size == 0:
            raise ValueError("signatures of different or empty shapes")
        if np.count_nonzero(sig_a == sig_b) >= near_agreement * sig_a.size - 1e-9:
            return "near"
        known = True
    if observation.containment is not None:
        if observation.containment >= min_containment:
            return "contained"
        known = True
    return "different" if known else None


def judge(
    pair: CandidatePair,
    observations: Iterable[Observation],
    *,
    k: int = 20,
    seed: int = 0,
    near_agreement: float = 0.8,
    min_containment: float = 0.9,
    full: float = 0.9,
    partial: float = 0.5,
    min_matched: int = 5,
    min_coverage: float = 0.3,
) -> MirrorVerdict:
    """The level of mirroring the observations of ``sample_paths``'s paths show."""
    _check_seed(seed)
    if k < 1 or min_matched < 1:
        raise ValueError("k and min_matched must be at least 1")
    unique = list({(o.path_a, o.path_b): o for o in observations}.values())
    ranked = sorted(unique, key=lambda o: _rank(_relative(o.path_a, pair.prefix_a), seed))
    outcome = {id(o): _outcome(o, near_agreement, min_containment) for o in ranked}
    from_a = [o for o in ranked if o.exists_a is True][:k]
    from_b = [o for o in ranked if o.exists_b is True][:k]

    checked_ab, matched_ab, unknown_ab = _tally(from_a, "exists_b", outcome)
    checked_ba, matched_ba, unknown_ba = _tally(from_b, "exists_a", outcome)
    seen = {id(o): o for o in from_a + from_b}
    kinds = [outcome[i] for i, o in seen.items() if o.exists_a and o.exists_b]
    identical, near, contained = kinds.count("identical"), kinds.count("near"), kinds.count("contained")
    f = matched_ab / checked_ab if checked_ab else None
    g = matched_ba / checked_ba if checked_ba else None

    reasons: list[str] = []
    sides = (("A", from_a, checked_ab, unknown_ab), ("B", from_b, checked_ba, unknown_ba))
    for side, sample, checked, unknown in sides:
        if not checked or unknown > len(sample) / 2:
            reasons.append(f"{side}: {checked} sampled paths checked, {unknown} unknown: not enough to decide")
    decided = not reasons
    level = "none"
    if decided:
        assert f is not None and g is not None
        reasons.append(f"{matched_ab}/{checked_ab} of A's sampled paths match on B")
        reasons.append(f"{matched_ba}/{checked_ba} of B's sampled paths match on A")
        reasons.append(
            f"{identical} identical, {near} near-identical (signature agreement >= {near_agreement}), "
            f"{contained} contained (containment >= {min_containment}) pages"
        )
        level, reason = _level(f, g, identical + near + contained, full, partial, min_matched, min_coverage)
        reasons.append(reason)
    return MirrorVerdict(
        a=pair.a, b=pair.b, prefix_a=pair.prefix_a, prefix_b=pair.prefix_b, level=level, decided=decided,
        fraction_ab=f, fraction_ba=g, checked_ab=checked_ab, matched_ab=matched_ab, checked_ba=checked_ba,
        matched_ba=matched_ba, identical=identical, near_identical=near, reasons=tuple(reasons),
        pages_a=pair.pages_a, pages_b=pair.pages_b, contained=contained,
    )


def _tally(sample: list[Observation], other_exists: str, outcome: dict[int, str | None]) -> tuple[int, int, int]:
    """(checked, matched, unknown) of a side's sampled paths on the other side."""
    checked = matched = unknown = 0
    for o in sample:
        exists, kind = getattr(o, other_exists), outcome[id(o)]
        if exists is None or (exists and kind is None):
            unknown += 1
            continue
        checked += 1
        matched += bool(exists) and kind in _MATCHES
    return checked, matched, unknown


def _level(
    f: float, g: float, matched: int, full: float, partial: float, min_matched: int, min_coverage: float
) -> tuple[str, str]:
    """The level of a decided pair from the fractions of each side found on the other
    (f: A's on B, g: B's on A) and its matched pages, and why."""
    if matched < min_matched:
        return "none", f"only {matched} matched sampled paths (< {min_matched}): no mirror"
    if f >= full and g >= full:
        return "full", f"both directions >= {full}"
    if (max(f, g) >= full or min(f, g) >= partial) and min(f, g) >= min_coverage:
        if max(f, g) >= full:
            small, big = ("B", "A") if f < g else ("A", "B")
            return "partial", f"subset mirror: {small} holds about {min(f, g):.0%} of {big}'s pages, all matching"
        return "partial", f"both directions >= {partial}: overlapping copies"
    if max(f, g) >= full:
        return "none", f"only {min(f, g):.0%} of the larger side is mirrored (< {min_coverage:.0%})"
    return "none", f"neither direction reaches {full} and not both reach {partial}"


def _outcome(observation: Observation, near_agreement: float, min_containment: float) -> str | None:
    if observation.exists_a and observation.exists_b:
        return _content_match(observation, near_agreement, min_containment)
    return None


class MirrorGraph:
    """Decided verdicts between locations, and the verdicts they imply."""

    def __init__(self, verdicts: Iterable[MirrorVerdict] = ()) -> None:
        self._verdicts: dict[frozenset[str], MirrorVerdict] = {}
        self._pages: dict[str, int] = {}
        self._stale = True
        self._parent: dict[str, str] = {}
        self._members: dict[str, list[str]] = {}
        self._edges: dict[str, list[tuple[str, str]]] = {}  # location -> (other, level) of partial/none
        for verdict in verdicts:
            self.add(verdict)

    def add(self, verdict: MirrorVerdict) -> bool:
        """Record a verdict (replacing an earlier one for the same pair); False if undecided."""
        if not verdict.decided:
            return False
        a, b = location(verdict.a, verdict.prefix_a), location(verdict.b, verdict.prefix_b)
        if a == b:
            raise ValueError("a location cannot mirror itself")
        key = frozenset((a, b))
        previous = self._verdicts.get(key)
        self._verdicts[key] = verdict
        self._pages[a] = max(self._pages.get(a, 0), verdict.pages_a)
        self._pages[b] = max(self._pages.get(b, 0), verdict.pages_b)
        if previous is not None and previous.level != verdict.level:
            self._stale = True  # an edge changed: rebuild on the next question
        elif previous is None and not self._stale:
            self._record(a, b, verdict.level)
        return True

    @property
    def verdicts(self) -> list[MirrorVerdict]:
        return list(self._verdicts.values())

    @property
    def pages(self) -> dict[str, int]:
        """Pages under each location, as the verdicts' pairs counted them."""
        return dict(self._pages)

    def _rebuild(self) -> None:
        self._parent, self._members, self._edges = {}, {}, {}
        for key, verdict in self._verdicts.items():
            a, b = sorted(key)
            self._record(a, b, verdict.level)
        self._stale = False

    def _find(self, node: str) -> str:
        parent = self._parent.setdefault(node, node)
        if parent == node:
            self._members.setdefault(node, [node])
            return node
        root = self._find(parent)
        self._parent[node] = root
        return root

    def _record(self, a: str, b: str, level: str) -> None:
        root_a, root_b = self._find(a), self._find(b)
        if level == "full":
            if root_a != root_b:
                if len(self._members[root_a]) < len(self._members[root_b]):
                    root_a, root_b = root_b, root_a
                self._parent[root_b] = root_a
                self._members[root_a] += self._members.pop(root_b)
        else:
            self._edges.setdefault(a, []).append((b, level))
            self._edges.setdefault(b, []).append((a, level))

    def level(self, a: str, b: str) -> str | None:
        """The level between two locations (or host roots), validated or implied; None when unknown."""
        a, b = _as_location(a), _as_location(b)
        direct = self._verdicts.get(frozenset((a, b)))
        if direct is not None:
            return direct.level
        if self._stale:
            self._rebuild()
        if a not in self._parent or b not in self._parent:
            return None
        root_a, root_b = self._find(a), self._find(b)
        if root_a == root_b:
            return "full"
        if len(self._members[root_a]) > len(self._members[root_b]):
            root_a, root_b = root_b, root_a
        found = {
            level
            for member in self._members[root_a]
            for other, level in self._edges.get(member, ())
            if self._find(other) == root_b
        }
        return found.pop() if len(found) == 1 else None

    def infer(self, a: str, b: str) -> bool | None:
        """Whether location (or host root) a mirrors b: True, False, or None when unknown."""
        found = self.level(a, b)
        return None if found is None else found != "none"

    def clusters(self) -> list[list[str]]:
        """Connected components of full and partial mirrors, as sorted locations."""
        parent: dict[str, str] = {}

        def find(node: str) -> str:
            while parent.setdefault(node, node) != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for key, verdict in self._verdicts.items():
            if verdict.level != "none":
                a, b = sorted(key)
                parent[find(a)] = find(b)
        groups: dict[str, list[str]] = {}
        for node in parent:
            groups.setdefault(find(node), []).append(node)
        return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def choose_canonical(
    cluster: Sequence[str], inlinks_from_other_hosts: Mapping[str, int], pages: Mapping[str, int] | None = None
) -> str:
    """The location to keep for a cluster of mirrors.

    Most in-links from other hosts, then most pages, then the shortest location, then
    the alphabetically first. Both mappings may be keyed by location or by host name.
    """
    if not cluster:
        raise ValueError("empty cluster")
    pages = pages or {}

    def lookup(mapping: Mapping[str, int], loc: str) -> int:
        return mapping.get(loc, mapping.get(loc.split("/", 1)[0], 0))

    return min(
        (_as_location(c) for c in cluster),
        key=lambda loc: (-lookup(inlinks_from_other_hosts, loc), -lookup(pages, loc), len(loc), loc),
    )
