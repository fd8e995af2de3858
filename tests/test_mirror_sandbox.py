"""Mirror detection on the sandbox worlds, checked against their ground truth.

Profiles are built the way the crawl would build them: every ``ok`` page of the truth
(status 200, HTML) with the sketch of its canonical text, the host's address, and the
hosts it links to. No server is needed: pages are resolved in memory. The standard world
(``build_world(0)``) has an exact, a prefix and a partial mirror and a same-paths decoy;
the harder one (``hard_mirrors=True``) adds repackaged, reserialised, stale, alias and
far-away mirrors and decoys of every kind (look-alike names, shared addresses, shared
templates, shared common pages, reposted articles).
"""

from __future__ import annotations

import math
from collections import defaultdict
from urllib.parse import urlsplit

import pytest

from mirrorscope.sandbox import build_world
from mirrorscope.sandbox import names as n
from mirrorscope.detectors.canonical import canonical_tokens
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
    sample_paths,
)
from mirrorscope.detectors.sketch import DocumentSketch, containment_mod_m, sketch_many, sketch_tokens

PORT = 8080


def split(url: str) -> tuple[str, str]:
    """(host key, path with query) of a URL, as the crawl files pages."""
    parts = urlsplit(url)
    return parts.netloc, parts.path + (f"?{parts.query}" if parts.query else "")


class Sandbox:
    def __init__(self, hard: bool) -> None:
        self.hard = hard
        self.world = build_world(0, hard_mirrors=hard)
        self.truth = self.world.ground_truth(PORT)
        pages: dict[str, list[str]] = defaultdict(list)
        for url in self.truth["html_pages"]:
            host, path = split(url)
            pages[host].append(path)
        outlinks: dict[str, set[str]] = defaultdict(set)
        self.inlinks: dict[str, set[str]] = defaultdict(set)  # URL -> hosts linking to it
        for source, target in self.truth["edges"]:
            (a, _), (b, _) = split(source), split(target)
            if a != b:
                outlinks[a].add(b)
                self.inlinks[target].add(a)
        self.profiles = []
        for host, paths in pages.items():
            sketches = sketch_many([canonical_tokens(self.body(host, p)) for p in paths])
            self.profiles.append(
                HostProfile(
                    name=host,
                    ip=self.world.host(host.split(":")[0]).ip,
                    paths=tuple(paths),
                    outlink_hosts=frozenset(outlinks[host]),
                    fingerprints={p: s.fingerprint for p, s in zip(paths, sketches)},
                    signatures={p: s.signature for p, s in zip(paths, sketches)},
                )
            )
        self.by_name = {p.name: p for p in self.profiles}
        self.key = {p.name.split(":")[0]: p.name for p in self.profiles}
        self.fetched: dict[tuple[str, str], DocumentSketch | None] = {}

    def body(self, host: str, path: str) -> bytes:
        resource = self.world.host(host.split(":")[0]).resolve(path)
        assert resource is not None
        return resource.at_port(PORT).body

    def fetch(self, host: str, path: str) -> DocumentSketch | None:
        """The sketch of the page at path, or None when it does not exist (not 200)."""
        if (host, path) not in self.fetched:
            resource = self.world.host(host.split(":")[0]).resolve(path)
            found = resource is not None and resource.status == 200
            self.fetched[host, path] = sketch_tokens(canonical_tokens(resource.at_port(PORT).body)) if found else None
        return self.fetched[host, path]

    def observe(self, pair: CandidatePair) -> list[Observation]:
        observations = []
        for path_a, path_b in sample_paths(pair, self.by_name[pair.a], self.by_name[pair.b]):
            a, b = self.fetch(pair.a, path_a), self.fetch(pair.b, path_b)
            observations.append(
                Observation(
                    path_a, path_b, a is not None, b is not None,
                    a.fingerprint if a else None, b.fingerprint if b else None,
                    a.signature if a else None, b.signature if b else None,
                    containment(a, b) if a and b else None,
                )  # fmt: skip
            )
        return observations

    def mirrors(self) -> list[tuple[tuple[str, str], tuple[str, str], str]]:
        """((host, prefix) of the original, (host, prefix) of the copy, level) per true mirror."""
        return [(split(m["a"]), split(m["b"]), m["level"]) for m in self.truth["mirrors"]]

    def decoys(self) -> list[frozenset[str]]:
        return [frozenset(self.key[name] for name in pair) for pair in self.truth["decoys"]]


def containment(a: DocumentSketch, b: DocumentSketch) -> float | None:
    """How much of one page the other holds, the larger direction (MOD_m estimates)."""
    both = [c for c in (containment_mod_m(a, b), containment_mod_m(b, a)) if not math.isnan(c)]
    return max(both, default=None)


@pytest.fixture(scope="module", params=["standard", "hard"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return Sandbox(hard=request.param == "hard")


def located(pair: CandidatePair) -> frozenset[tuple[str, str]]:
    return frozenset({(pair.a, pair.prefix_a), (pair.b, pair.prefix_b)})


def test_true_mirrors_rank_above_every_decoy(sandbox: Sandbox) -> None:
    pairs = candidate_pairs(sandbox.profiles)
    ranks = {frozenset((p.a, p.b)): i for i, p in enumerate(pairs)}
    mirrors = sandbox.mirrors()
    assert len(mirrors) >= 3 and sandbox.decoys()
    decoy_ranks = [ranks.get(d, len(pairs)) for d in sandbox.decoys()]
    for original, copy, _ in mirrors:
        rank = ranks[frozenset((original[0], copy[0]))]
        assert located(pairs[rank]) == {original, copy}  # hosts and prefixes
        assert rank < min(decoy_ranks)


def test_validation_levels_match_the_truth(sandbox: Sandbox) -> None:
    pairs = {frozenset((p.a, p.b)): p for p in candidate_pairs(sandbox.profiles)}
    graph = MirrorGraph()
    for original, copy, level in sandbox.mirrors():
        pair = pairs[frozenset((original[0], copy[0]))]
        verdict = judge(pair, sandbox.observe(pair))
        assert verdict.decided and verdict.level == level, verdict.reasons
        graph.add(verdict)
    for decoy in sandbox.decoys():
        a, b = sorted(decoy)
        pair = pairs.get(decoy, CandidatePair(a, b))
        verdict = judge(pair, sandbox.observe(pair))
        assert verdict.decided and verdict.level == "none", verdict.reasons
    expected = sorted(sorted(location(*side) for side in (original, copy)) for original, copy, _ in sandbox.mirrors())
    assert sorted(graph.clusters()) == expected


def test_inference_spares_validations(sandbox: Sandbox) -> None:
    # Validate the docs and their copy, and the docs and the decoy: the decoy against
    # the copy then needs no fetch.
    (docs, copy, _), decoy = sandbox.mirrors()[0], sandbox.decoys()[0]
    decoy_host = next(iter(decoy - {docs[0]}))
    graph = MirrorGraph()
    pairs = {frozenset((p.a, p.b)): p for p in candidate_pairs(sandbox.profiles)}
    for key in (frozenset((docs[0], copy[0])), frozenset((docs[0], decoy_host))):
        graph.add(judge(pairs[key], sandbox.observe(pairs[key])))
    assert graph.infer(location(*copy), decoy_host) is False
    assert graph.infer(location(*docs), location(*copy)) is True


def test_canonical_copy_is_the_original(sandbox: Sandbox) -> None:
    graph = MirrorGraph()
    pairs = {frozenset((p.a, p.b)): p for p in candidate_pairs(sandbox.profiles)}
    for original, copy, _ in sandbox.mirrors():
        pair = pairs[frozenset((original[0], copy[0]))]
        verdict: MirrorVerdict = judge(pair, sandbox.observe(pair))
        graph.add(verdict)
    inlinks: dict[str, int] = {}
    for cluster in graph.clusters():
        for member in cluster:
            host = member.split("/", 1)[0]
            linking = {h for url, hosts in sandbox.inlinks.items() if url.startswith(f"http://{member}") for h in hosts}
            inlinks[member] = len(linking - {host})
    originals = {location(*original) for original, _, _ in sandbox.mirrors()}
    by_links, tied = set(), set()  # the originals' host names, by how their cluster is decided
    for cluster in graph.clusters():
        (original,) = originals.intersection(cluster)
        most, runner_up = sorted((inlinks[m] for m in cluster), reverse=True)[:2]
        if most > runner_up:
            by_links.add(original.split(":")[0])
            assert choose_canonical(cluster, inlinks, graph.pages) == original
        else:  # pages, then the shorter name decide
            tied.add(original.split(":")[0])
    # Other hosts link to the standard world's originals (the portal, friends), to copies
    # hardly at all, and to the repackaged news' original; the hard world's other mirrors
    # (reserialised, stale, alias, far away) are linked to once, as their originals are.
    assert by_links == {n.DOCS, n.RECIPES, n.UNIVERSITY} | ({n.NEWS} if sandbox.hard else set())
    assert tied == ({n.WIKI, n.KAYAK, n.LIBRARY, n.OBSERVATORY} if sandbox.hard else set())
