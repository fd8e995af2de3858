"""Mirrored hosts over what a crawl knows: the job around ``detectors.mirrors``, run by the
crawl's ``crawler.mirrors.MirrorMiddleware`` and offline by ``mirror-report detect``.

``HostView`` is what the crawl knows of each host (pages with their content
fingerprints and signatures, paths that failed, paths only seen in links, links between
hosts). ``MirrorRound`` ranks candidate pairs from it, validates them on up to
``MIRROR_SAMPLE_PATHS`` sampled paths per side — asking for a fetch only where no sketch
is stored — and keeps verdicts in a ``MirrorGraph`` so transitive inference saves
validations. ``MirrorMiddleware`` runs rounds every ``MIRROR_DETECTION_INTERVAL`` pages
and whenever the crawl goes idle, fetches the sampled counterparts through the crawl
(politeness kept), and, once a mirror is validated, refuses the mirror side's paths whose
counterpart on the canonical side is stored (outcome ``mirrored-not-fetched``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mirrorscope.detectors.mirrors import (
    CandidatePair,
    HostProfile,
    MirrorGraph,
    MirrorVerdict,
    Observation,
    candidate_pairs,
    choose_canonical,
    judge,
    location,
    sample_mapped_paths,
    sample_paths,
)
from mirrorscope.detectors.sketch import DocumentSketch, containment_mod_m
from mirrorscope.detectors.sketch_columns import decode_sketches, sketch_objects
from mirrorscope.storage.rows import MirrorPairRow
from mirrorscope.storage.store import Store

logger = logging.getLogger(__name__)

# Outcomes that say a path does not exist on a host (as opposed to: not fetched yet).
_ABSENT = {"http-404", "http-410", "redirect", "redirect-loop"}
#: Linked paths remembered per host. Path features need a host's shape, not all of it, and
#: a host emitting endless links (a farm, a calendar) must not grow the view without end.
MAX_KNOWN_PATHS = 10_000


def _root_parts(root: str) -> tuple[str, str]:
    """(host, prefix) of a stored URL root (``HostView.root``'s inverse)."""
    parts = urlsplit(root)
    return parts.netloc, parts.path or "/"


def url_path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _lies_in(loc: str, host: str, path: str) -> bool:
    """Whether host and path lie in a location (host and path prefix, ``host/prefix``)."""
    loc_host, _, rest = loc.partition("/")
    return loc_host == host and path.startswith("/" + rest)


def canonical_counterpart(mirrored: dict[str, str], url: str) -> tuple[str, str, str] | None:
    """(canonical location, its host, the counterpart's path) of ``url`` when it lies in
    one of the ``mirrored`` locations (location -> its cluster's canonical location, as
    ``MirrorRound.canonical_sides`` gives them); None elsewhere."""
    host, path = urlsplit(url).netloc, url_path(url)
    for loc, keep in mirrored.items():
        if _lies_in(loc, host, path):
            keep_host, _, keep_rest = keep.partition("/")
            return keep, keep_host, "/" + keep_rest + path[len("/" + loc.partition("/")[2]):]
    return None


def supersedes(mirrored: dict[str, str], page_url: str, original_url: str) -> bool:
    """Whether ``page_url``, recorded as a duplicate of ``original_url``, lies on the
    canonical location of the mirrored location ``original_url`` lies in. The crawl
    refuses the original's side then, so the page's own links are the ones to follow."""
    found = canonical_counterpart(mirrored, original_url)
    return found is not None and _lies_in(found[0], urlsplit(page_url).netloc, url_path(page_url))


def _batch_sketches(blobs: list[bytes | None]) -> tuple[list[DocumentSketch | None], int]:
    """The sketch of each stored blob (None for none), and how many were unreadable.

    Sketches of the default parameters are decoded together into views of shared
    arrays; others one by one, as made."""
    stored = [k for k, blob in enumerate(blobs) if blob]
    decoded = decode_sketches([blobs[k] for k in stored])
    together = iter(sketch_objects(decoded))
    sketches: list[DocumentSketch | None] = [None] * len(blobs)
    unreadable = 0
    for k, accepted in zip(stored, decoded.accepted.tolist()):
        if accepted:
            sketches[k] = next(together)
            continue
        try:
            sketches[k] = DocumentSketch.from_bytes(blobs[k])
        except ValueError:
            unreadable += 1
    return sketches, unreadable


@dataclass
class HostView:
    """What is known of each host, keyed by host name (the URL's netloc)."""

    ips: dict[str, str] = field(default_factory=dict)
    schemes: dict[str, str] = field(default_factory=dict)
    content: dict[str, dict[str, DocumentSketch]] = field(default_factory=lambda: defaultdict(dict))
    absent: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    known: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    outlinks: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    inlinks: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add_page(self, url: str, host: str, ip: str | None, outcome: str, sketch: DocumentSketch | None) -> None:
        path = url_path(url)
        self.schemes.setdefault(host, urlsplit(url).scheme)
        if ip:
            self.ips[host] = ip
        if outcome == "ok" and sketch is not None:
            self.content[host][path] = sketch
        elif outcome in _ABSENT or outcome.startswith("http-"):
            self.absent[host].add(path)

    def add_link(self, source_host: str, target_url: str, target_host: str | None) -> None:
        if not target_host:
            return
        known = self.known[target_host]
        if len(known) < MAX_KNOWN_PATHS:
            known.add(url_path(target_url))
        self.schemes.setdefault(target_host, urlsplit(target_url).scheme)
        if target_host != source_host:
            self.outlinks[source_host].add(target_host)
            self.inlinks[target_host].add(source_host)

    def profiles(self) -> list[HostProfile]:
        hosts = sorted(set(self.content) | set(self.known))
        return [
            HostProfile(
                name=host, ip=self.ips.get(host),
                paths=tuple(sorted(set(self.content.get(host, {})) | (self.known.get(host, set()) - self.absent.get(host, set())))),
                outlink_hosts=frozenset(self.outlinks.get(host, ())),
                fingerprints={p: k.fingerprint for p, k in self.content.get(host, {}).items()},
                signatures={p: k.signature for p, k in self.content.get(host, {}).items()},
                token_counts={p: k.token_count for p, k in self.content.get(host, {}).items()},
            )
            for host in hosts
        ]

    def exists(self, host: str, path: str) -> bool | None:
        if path in self.content.get(host, {}):
            return True
        if path in self.absent.get(host, set()):
            return False
        return None

    def observation(self, a: str, path_a: str, b: str, path_b: str) -> Observation:
        ka, kb = self.content.get(a, {}).get(path_a), self.content.get(b, {}).get(path_b)
        # A page wrapped in another site's header and footer resembles its original less
        # than it contains it: containment either way lets a repackaged copy match.
        inside = None
        if ka is not None and kb is not None and ka.mod_m.size and kb.mod_m.size:
            inside = max(containment_mod_m(ka, kb), containment_mod_m(kb, ka))
        return Observation(
            path_a, path_b, self.exists(a, path_a), self.exists(b, path_b),
            ka.fingerprint if ka else None, kb.fingerprint if kb else None,
            ka.signature if ka else None, kb.signature if kb else None, containment=inside,
        )

    def root(self, loc: str) -> str:
        host = loc.split("/", 1)[0]
        return f"{self.schemes.get(host, 'http')}://{loc}"

    @classmethod
    def from_store(cls, store: Store) -> "HostView":
        """Every stored page and link; the sketches decoded a batch at a time (an
        unreadable one counts as none, counted and logged once)."""
        view = cls()
        unreadable = 0
        for batch in store.page_fact_batches():
            sketches, missed = _batch_sketches([row["data"] for row in batch])
            unreadable += missed
            for row, sketch in zip(batch, sketches):
                view.add_page(row["url"], row["host"], row["ip"], row["outcome"], sketch)
        if unreadable:
            logger.warning("mirrors: %d stored sketches are unreadable and were taken as none", unreadable)
        for source, target_host, target_url in store.host_links():
            view.add_link(source, target_url, target_host)
        return view


@dataclass
class MirrorRound:
    """Candidate generation, validation and inference over a ``HostView``."""

    candidates_per_host: int = 10
    sample: int = 20
    seed: int = 0
    graph: MirrorGraph = field(default_factory=MirrorGraph)
    decided: dict[tuple[str, str], tuple[CandidatePair, MirrorVerdict]] = field(default_factory=dict)
    inferred: dict[tuple[str, str], tuple[CandidatePair, str]] = field(default_factory=dict)
    #: (host, host) per cross-host URL pair with matching anchor bags: an extra vote for
    #: candidate pairs (``detectors.mirror_candidates``); None: no such evidence.
    anchor_hosts: list[tuple[str, str]] | None = None

    def candidates(self, profiles: dict[str, HostProfile]) -> list[CandidatePair]:
        """Candidate pairs over ``profiles``, with the anchor-bag vote when there is one."""
        votes = None
        if self.anchor_hosts is not None:
            index = {name: i for i, name in enumerate(profiles)}
            known = [(index[a], index[b]) for a, b in self.anchor_hosts if a in index and b in index]
            votes = ([a for a, _ in known], [b for _, b in known])
        return candidate_pairs(list(profiles.values()), self.candidates_per_host, anchor_pairs=votes)

    def run(self, view: HostView) -> list[tuple[str, str]]:
        """Judge every candidate whose sampled paths are all known; return the (host,
        path) fetches the others still need."""
        profiles = {p.name: p for p in view.profiles()}
        wanted: list[tuple[str, str]] = []
        for pair in self.candidates(profiles):
            key = (location(pair.a, pair.prefix_a), location(pair.b, pair.prefix_b))
            if key in self.decided:
                continue
            implied = self.graph.infer(*key)
            if implied is not None:
                self.inferred[key] = (pair, self.graph.level(*key) or "none")
                continue
            samples = sample_paths(pair, profiles[pair.a], profiles[pair.b], k=self.sample, seed=self.seed)
            unknown = [(h, p) for pa, pb in samples for h, p in ((pair.a, pa), (pair.b, pb)) if view.exists(h, p) is None]
            if unknown:
                wanted.extend(unknown)
                continue
            verdict = judge(pair, [view.observation(pair.a, pa, pair.b, pb) for pa, pb in samples], k=self.sample, seed=self.seed)
            self.graph.add(verdict)
            self.decided[key] = (pair, verdict)
        return list(dict.fromkeys(wanted))

    def restore(self, rows: Iterable[MirrorPairRow]) -> None:
        """Take back the verdicts a store holds (``mirror_pairs``, level ``none`` included):
        a resumed crawl does not validate them again, and :meth:`rows` writes them as they
        were. Verdicts judged again later replace them."""
        for row in rows:
            (a, prefix_a), (b, prefix_b) = _root_parts(row["url_a"]), _root_parts(row["url_b"])
            key = (location(a, prefix_a), location(b, prefix_b))
            pair = CandidatePair(a, b, prefix_a, prefix_b, score=row["score"], features=dict(row["features"] or {}))
            if row["inferred"]:
                self.inferred[key] = (pair, row["level"])
                continue
            # The row keeps the two directions' sums: A's side carries them, B's is zero.
            verdict = MirrorVerdict(
                a, b, prefix_a, prefix_b, row["level"], True, row["fraction_ab"], row["fraction_ba"],
                row["paths_checked"], row["paths_matched"], 0, 0, 0, 0, tuple(row["reasons"] or ()),
            )
            self.graph.add(verdict)
            self.decided[key] = (pair, verdict)

    def judged(self) -> int:
        """Pairs with a verdict, validated or inferred."""
        return len(self.decided) + len(self.inferred)

    def finish(self, view: HostView) -> None:
        """Judge what is still pending with what is known (unknown paths stay unknown)."""
        profiles = {p.name: p for p in view.profiles()}
        for pair in self.candidates(profiles):
            key = (location(pair.a, pair.prefix_a), location(pair.b, pair.prefix_b))
            if key in self.decided or key in self.inferred:
                continue
            samples = sample_paths(pair, profiles[pair.a], profiles[pair.b], k=self.sample, seed=self.seed)
            verdict = judge(pair, [view.observation(pair.a, pa, pair.b, pb) for pa, pb in samples], k=self.sample, seed=self.seed)
            self.graph.add(verdict)
            self.decided[key] = (pair, verdict)

    def judge_collections(self, view: HostView, candidates: Sequence[tuple[str, str, str, str, dict[str, str]]]) -> int:
        """Validate the bottom-up candidates (``jobs.collections.collection_candidates``:
        host and prefix of two replicas, with their page correspondence), sampled paths
        paired through the correspondence. Hosts top-down found mirrored are not judged
        again; a pair it left undecided or judged no mirror takes the new verdict only
        when it is a mirror: the correspondence can find a renamed copy, not disprove a
        copy found by path. Returns the mirrors added."""
        profiles = {p.name: p for p in view.profiles()}
        # Hosts already found mirrored (under any prefixes) need no second pair of roots.
        mirrored = {frozenset((pair.a, pair.b)) for pair, verdict in self.decided.values() if verdict.is_mirror}
        mirrored |= {frozenset((pair.a, pair.b)) for pair, level in self.inferred.values() if level != "none"}
        added = 0
        for a, prefix_a, b, prefix_b, counterparts in candidates:
            if a not in profiles or b not in profiles or frozenset((a, b)) in mirrored:
                continue
            key, turned = (location(a, prefix_a), location(b, prefix_b)), (location(b, prefix_b), location(a, prefix_a))
            inside_a = sum(p.startswith(prefix_a) for p in profiles[a].paths)
            inside_b = sum(p.startswith(prefix_b) for p in profiles[b].paths)
            pair = CandidatePair(
                a, b, prefix_a, prefix_b, score=round(len(counterparts) / max(inside_a, inside_b, 1), 4),
                features={"collection_pages": float(len(counterparts))}, pages_a=inside_a, pages_b=inside_b,
            )
            samples = sample_mapped_paths(pair, profiles[a], profiles[b], counterparts, k=self.sample, seed=self.seed)
            verdict = judge(pair, [view.observation(a, pa, b, pb) for pa, pb in samples], k=self.sample, seed=self.seed)
            if not verdict.is_mirror:
                continue
            for stale in (key, turned):
                self.decided.pop(stale, None)
                self.inferred.pop(stale, None)
            self.graph.add(verdict)
            self.decided[key] = (pair, verdict)
            added += 1
        return added

    def canonical_sides(self, view: HostView) -> dict[str, str]:
        """For each mirrored location that is not its cluster's canonical one: the canonical."""
        inlinks = {h: len(v) for h, v in view.inlinks.items()}
        pages = {h: len(v) for h, v in view.content.items()}
        result = {}
        for cluster in self.graph.clusters():
            keep = choose_canonical(cluster, inlinks, pages)
            result.update({loc: keep for loc in cluster if loc != keep})
        return result

    def rows(self, view: HostView) -> tuple[list[dict[str, Any]], list[list[tuple[str, bool]]]]:
        """Store rows: every verdict (validated and inferred) and the clusters."""
        pairs = []
        for (a, b), (pair, verdict) in self.decided.items():
            pairs.append({
                "url_a": view.root(a), "url_b": view.root(b), "level": verdict.level, "score": round(pair.score, 4),
                "paths_checked": verdict.checked_ab + verdict.checked_ba, "paths_matched": verdict.matched_ab + verdict.matched_ba,
                "fraction_ab": verdict.fraction_ab, "fraction_ba": verdict.fraction_ba, "inferred": False,
                "features": {k: round(v, 4) for k, v in pair.features.items()}, "reasons": list(verdict.reasons),
            })
        for (a, b), (pair, level) in self.inferred.items():
            pairs.append({
                "url_a": view.root(a), "url_b": view.root(b), "level": level, "score": round(pair.score, 4),
                "paths_checked": 0, "paths_matched": 0, "fraction_ab": None, "fraction_ba": None, "inferred": True,
                "features": {k: round(v, 4) for k, v in pair.features.items()}, "reasons": ["transitive inference"],
            })
        canonical = self.canonical_sides(view)
        clusters = [
            [(view.root(loc), loc not in canonical) for loc in cluster]
            for cluster in self.graph.clusters()
        ]
        return pairs, clusters


#: Anchor-bag similarity at which two URLs on different hosts vote for their hosts.
ANCHOR_MATCH = 0.5


def anchor_host_pairs(store: Store, threshold: float = ANCHOR_MATCH) -> list[tuple[str, str]]:
    """(host, host) of every stored similar URL pair (``mirror-report detect``'s anchor
    bags) across two hosts with similarity at least ``threshold``."""
    pairs = []
    for row in store.anchor_pairs():
        if row["similarity"] < threshold:
            break  # most similar first
        a, b = urlsplit(row["url_a"]).netloc, urlsplit(row["url_b"]).netloc
        if a and b and a != b:
            pairs.append((a, b))
    return pairs


def detect_mirrors(
    store: Store, sample: int = 20, collections: Sequence[tuple[str, str, str, str, dict[str, str]]] = ()
) -> dict[str, Any]:
    """Offline: rank (with the stored anchor-bag pairs as an extra vote), validate on
    stored sketches only, then the bottom-up candidates of ``collections``
    (``jobs.collections.collection_candidates``), infer, and persist."""
    view = HostView.from_store(store)
    rounds = MirrorRound(sample=sample, anchor_hosts=anchor_host_pairs(store) or None)
    rounds.finish(view)
    added = rounds.judge_collections(view, collections)
    pairs, clusters = rounds.rows(view)
    store.replace_mirrors(pairs, clusters)
    return {
        "pairs_judged": len(pairs), "mirrors": sum(p["level"] != "none" for p in pairs), "clusters": len(clusters),
        "bottom_up_mirrors": added,
    }
