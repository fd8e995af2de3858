"""Mirror validation: path sampling, verdicts, transitive inference, the canonical copy."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from mirrorscope.detectors.mirrors import (
    CandidatePair,
    HostProfile,
    MirrorGraph,
    MirrorVerdict,
    Observation,
    choose_canonical,
    judge,
    location,
    sample_paths,
)
from mirrorscope.detectors.sketch import sketch_many

Pages = dict[str, tuple[int, np.ndarray]]


def pages(seed: int, paths: list[str]) -> Pages:
    rng = random.Random(seed)
    docs = [[f"w{rng.randrange(3000)}" for _ in range(200)] for _ in paths]
    return {p: (s.fingerprint, s.signature) for p, s in zip(paths, sketch_many(docs))}


def host(name: str, content: Pages) -> HostProfile:
    return HostProfile(
        name, None, tuple(content), fingerprints={p: fp for p, (fp, _) in content.items()},
        signatures={p: sig for p, (_, sig) in content.items()},
    )  # fmt: skip


def observe(
    pair: CandidatePair, a: Pages, b: Pages, k: int = 20, unknown: Callable[[str], bool] = lambda p: False
) -> list[Observation]:
    """Fetch every sampled path on both sides from the hosts' true pages."""
    observations = []
    for path_a, path_b in sample_paths(pair, host(pair.a, a), host(pair.b, b), k=k):
        fp_a, sig_a = a.get(path_a, (None, None))
        fp_b, sig_b = b.get(path_b, (None, None))
        exists_b = None if unknown(path_b) else path_b in b
        observations.append(Observation(path_a, path_b, path_a in a, exists_b, fp_a, fp_b, sig_a, sig_b))
    return observations


def verdict(pair: CandidatePair, a: Pages, b: Pages, **kwargs: object) -> MirrorVerdict:
    return judge(pair, observe(pair, a, b), **kwargs)  # type: ignore[arg-type]


PATHS = [f"/doc/page{i}.html" for i in range(100)]
ORIGINAL = pages(1, PATHS)


def test_sample_paths_is_coordinated_and_deterministic() -> None:
    pair = CandidatePair("a.org", "b.org", "/", "/pub/a/")
    copy = {"/pub/a/" + p[1:]: v for p, v in ORIGINAL.items()}
    sample = sample_paths(pair, host("a.org", ORIGINAL), host("b.org", copy))
    assert len(sample) == 20  # both sides choose the same relative paths
    assert sample == sample_paths(pair, host("a.org", ORIGINAL), host("b.org", copy))
    assert all(b == "/pub/a/" + a[1:] and a in ORIGINAL for a, b in sample)
    other = sample_paths(pair, host("a.org", ORIGINAL), host("b.org", copy), seed=1)
    assert set(other) != set(sample)
    # Disjoint path sets: k from each side, each mapped to the other's prefix.
    unrelated = {"/pub/a/x/" + p[1:]: v for p, v in pages(2, PATHS).items()}
    both = sample_paths(pair, host("a.org", ORIGINAL), host("b.org", unrelated), k=10)
    assert len(both) == 20
    assert sum(a in ORIGINAL for a, _ in both) == 10 and sum(b in unrelated for _, b in both) == 10
    # Paths outside the prefix are never sampled.
    mixed = copy | pages(3, ["/own/x.html", "/own/y.html"])
    inside = sample_paths(pair, host("a.org", ORIGINAL), host("b.org", mixed), k=100)
    assert all(b.startswith("/pub/a/") for _, b in inside)
    with pytest.raises(ValueError, match="do not match"):
        sample_paths(pair, host("b.org", copy), host("a.org", ORIGINAL))


def test_full_mirror() -> None:
    pair = CandidatePair("a.org", "b.org", "/", "/pub/a/")
    copy = {"/pub/a/" + p[1:]: v for p, v in ORIGINAL.items()}
    v = verdict(pair, ORIGINAL, copy)
    assert (v.level, v.decided, v.fraction_ab, v.fraction_ba) == ("full", True, 1.0, 1.0)
    assert v.checked_ab == v.matched_ab == v.checked_ba == v.matched_ba == 20
    assert (v.identical, v.near_identical) == (20, 0)
    assert (v.a, v.b, v.prefix_a, v.prefix_b) == ("a.org", "b.org", "/", "/pub/a/") and v.is_mirror


def test_near_identical_mirror_by_signatures() -> None:
    pair = CandidatePair("a.org", "b.org")
    rng = np.random.default_rng(0)
    near = {}
    for path, (fp, sig) in ORIGINAL.items():
        changed = sig.copy()
        changed[rng.choice(sig.size, size=8, replace=False)] ^= np.uint64(1)  # about 90% agreement
        near[path] = (fp ^ 1, changed)
    v = verdict(pair, ORIGINAL, near)
    assert v.level == "full" and v.identical == 0 and v.near_identical == 20
    # The same pages with only 70% of positions agreeing are not near-identical.
    far = {}
    for path, (fp, sig) in ORIGINAL.items():
        changed = sig.copy()
        changed[rng.choice(sig.size, size=26, replace=False)] ^= np.uint64(1)
        far[path] = (fp ^ 1, changed)
    v = verdict(pair, ORIGINAL, far)
    assert v.level == "none" and v.matched_ab == 0 and v.checked_ab == 20


def test_subset_mirror_is_partial() -> None:
    pair = CandidatePair("a.org", "b.org")
    half = {p: v for p, v in ORIGINAL.items() if int(p[9:-5]) % 2 == 0}
    v = verdict(pair, ORIGINAL, half)
    assert v.level == "partial" and v.fraction_ba == 1.0
    assert 0.3 <= v.fraction_ab <= 0.7  # type: ignore[operator]
    assert any("subset mirror" in r for r in v.reasons)


def test_drifted_copies_are_partial() -> None:
    pair = CandidatePair("a.org", "b.org")
    other = pages(9, PATHS)
    # Each host has rewritten about a third of its pages since the copy was made.
    drifted = {p: (other[p] if int(p[9:-5]) % 3 == 0 else v) for p, v in ORIGINAL.items()}
    v = verdict(pair, ORIGINAL, drifted)
    assert v.level == "partial"
    assert 0.5 <= min(v.fraction_ab, v.fraction_ba) < 0.9  # type: ignore[type-var]


def test_same_paths_other_content_is_none() -> None:
    v = verdict(CandidatePair("a.org", "b.org"), ORIGINAL, pages(5, PATHS))
    assert (v.level, v.decided, v.matched_ab, v.matched_ba) == ("none", True, 0, 0)
    assert not v.is_mirror


def test_a_few_shared_pages_are_no_mirror() -> None:
    pair = CandidatePair("big.org", "tiny.org")
    boilerplate = {p: ORIGINAL[p] for p in PATHS[:4]}
    v = verdict(pair, ORIGINAL, boilerplate)
    assert v.level == "none" and v.fraction_ba == 1.0
    assert any("< 5" in r for r in v.reasons)
    # Eight pages copied from a site of 200: all match, but 4% of the big side is no mirror.
    big_paths = [f"/site/p{i}.html" for i in range(200)]
    big = pages(6, big_paths)
    small = {p: big[p] for p in big_paths[:8]}
    v = verdict(CandidatePair("big.org", "small.org"), big, small)
    assert v.level == "none" and v.fraction_ba == 1.0
    assert any("larger side" in r for r in v.reasons)


def test_unknown_observations() -> None:
    pair = CandidatePair("a.org", "b.org")
    copy = dict(ORIGINAL)
    everything = observe(pair, ORIGINAL, copy, unknown=lambda p: True)
    v = judge(pair, everything)
    assert not v.decided and v.level == "none" and v.checked_ab == 0
    # A few fetch failures leave fewer checked paths, not a different verdict.
    flaky = observe(pair, ORIGINAL, copy, unknown=lambda p: p.endswith(("1.html", "2.html")))
    v = judge(pair, flaky)
    assert v.decided and v.level == "full" and v.checked_ab < 20
    # Both pages exist but their content is unknown: not counted either way.
    blind = [Observation(o.path_a, o.path_b, True, True) for o in everything]
    assert not judge(pair, blind).decided
    assert not judge(pair, []).decided


def test_judge_uses_each_sides_own_sample() -> None:
    # B holds half of A. B's sample, all of it on A, must not inflate A's fraction.
    pair = CandidatePair("a.org", "b.org")
    half = {p: v for p, v in ORIGINAL.items() if int(p[9:-5]) < 50}
    observations = observe(pair, ORIGINAL, half)
    assert len(observations) > 20
    v = judge(pair, observations)
    assert v.checked_ab == 20 and v.checked_ba == 20
    own_sample = [a for a, _ in sample_paths(pair, host("a.org", ORIGINAL), host("b.org", {}))]
    assert v.fraction_ab == sum(p in half for p in own_sample) / 20
    everything_from_a = [o for o in observations if o.exists_a]
    assert v.fraction_ab < sum(bool(o.exists_b) for o in everything_from_a) / len(everything_from_a)


def validated(
    a: str, b: str, prefix_a: str = "/", prefix_b: str = "/", level: str = "full", decided: bool = True
) -> MirrorVerdict:
    return MirrorVerdict(a, b, prefix_a, prefix_b, level, decided, 1.0, 1.0, 20, 20, 20, 20, 20, 0, (), 50, 50)


def test_transitive_inference() -> None:
    graph = MirrorGraph([validated("a.org", "x.org"), validated("x.org", "b.org")])
    assert graph.infer("a.org", "b.org") is True and graph.level("a.org", "b.org") == "full"
    graph.add(validated("x.org", "n.org", level="none"))
    assert graph.infer("a.org", "n.org") is False and graph.infer("b.org", "n.org") is False
    assert graph.infer("a.org", "unknown.org") is None
    assert graph.infer("a.org/", "b.org/") is True  # bare names are host roots


def test_partial_mirrors_chain_once() -> None:
    graph = MirrorGraph([validated("a.org", "x.org"), validated("x.org", "p.org", level="partial")])
    assert graph.level("a.org", "p.org") == "partial" and graph.infer("a.org", "p.org") is True
    # Two subset mirrors of one site may share nothing.
    graph.add(validated("x.org", "q.org", level="partial"))
    assert graph.infer("p.org", "q.org") is None
    # a holds what x holds: whatever does not mirror a does not mirror x.
    graph.add(validated("a.org", "r.org", level="none"))
    assert graph.infer("x.org", "r.org") is False


def test_conflicts_and_replacements() -> None:
    graph = MirrorGraph([validated("a.org", "x.org"), validated("b.org", "y.org")])
    graph.add(validated("a.org", "b.org", level="partial"))
    graph.add(validated("x.org", "y.org", level="none"))
    assert graph.infer("a.org", "y.org") is None  # contradictory: validate directly
    assert graph.infer("a.org", "b.org") is True  # a direct verdict wins
    assert not graph.add(validated("a.org", "c.org", decided=False))
    assert graph.infer("a.org", "c.org") is None
    graph.add(validated("a.org", "x.org", level="none"))  # re-validated: no longer mirrors
    assert graph.infer("a.org", "x.org") is False
    assert graph.infer("x.org", "b.org") is False  # x does not mirror y, a full copy of b
    assert graph.infer("a.org", "y.org") is True  # no longer contradicted: a partial of b, b = y
    with pytest.raises(ValueError):
        graph.add(validated("a.org", "a.org"))


def test_clusters_keep_prefixes() -> None:
    graph = MirrorGraph(
        [
            validated("docs.org", "mirror.net"),
            validated("docs.org", "archive.org", prefix_b="/pub/docs/", level="partial"),
            validated("recipes.com", "archive.org", prefix_b="/pub/recipes/"),
            validated("docs.org", "decoy.org", level="none"),
        ]
    )
    assert graph.clusters() == [
        ["archive.org/pub/docs/", "docs.org/", "mirror.net/"],
        ["archive.org/pub/recipes/", "recipes.com/"],
    ]
    assert graph.infer(location("archive.org", "/pub/recipes/"), "recipes.com") is True
    assert graph.infer("archive.org", "recipes.com") is None  # the archive's root is no copy
    assert graph.pages["docs.org/"] == 50


def test_choose_canonical() -> None:
    cluster = ["mirror.net/", "docs.org/", "archive.org/pub/docs/"]
    assert choose_canonical(cluster, {"mirror.net": 3, "docs.org": 2}) == "mirror.net/"
    pages = {"docs.org": 90, "mirror.net/": 80}
    assert choose_canonical(cluster, {"docs.org/": 5, "mirror.net": 5}, pages) == "docs.org/"
    assert choose_canonical(cluster, {}, {}) == "docs.org/"  # shortest
    assert choose_canonical(["bb.org/", "aa.org/"], {}) == "aa.org/"  # then alphabetical
    with pytest.raises(ValueError):
        choose_canonical([], {})


def test_repackaged_pages_match_by_containment() -> None:
    # Every page wrapped in another site's chrome: resemblance well below 0.8, the
    # original's text all there.
    pair = CandidatePair("a.org", "b.org")
    chrome = [f"menu{i}" for i in range(80)]
    rng = random.Random(11)
    texts = {p: [f"w{rng.randrange(3000)}" for _ in range(200)] for p in PATHS[:30]}
    original = dict(zip(texts, sketch_many(list(texts.values()))))
    wrapped = dict(zip(texts, sketch_many([chrome + t + chrome for t in texts.values()])))

    def observations(containment: float | None) -> list[Observation]:
        a = {p: (s.fingerprint, s.signature) for p, s in original.items()}
        b = {p: (s.fingerprint, s.signature) for p, s in wrapped.items()}
        return [replace(o, containment=containment) for o in observe(pair, a, b)]

    assert judge(pair, observations(None)).level == "none"  # resemblance alone: different pages
    v = judge(pair, observations(0.97))
    assert v.level == "full" and v.contained == 20 and v.near_identical == v.identical == 0
    assert judge(pair, observations(0.8)).level == "none"
    # Content known only through containment still decides.
    unknown = {"fingerprint_a": None, "fingerprint_b": None, "signature_a": None, "signature_b": None}
    blind = [replace(o, **unknown) for o in observations(0.5)]
    assert judge(pair, blind).decided and judge(pair, blind).level == "none"
