"""Mirror candidates: each feature set on crafted hosts, prefix alignment, the combined ranking."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors import mirror_features
from mirrorscope.detectors.mirrors import (
    FEATURES,
    HostProfile,
    MirrorParams,
    candidate_pairs,
    directory_prefixes,
    feature_rankings,
    hostname_terms,
    ip_keys,
    path_terms,
    positional_bigrams,
)
from tests.helpers import COMMON, pair_of, profile, score_of, site, text

# ------------------------------------------------------------------------ terms


def test_positional_path_bigrams() -> None:
    assert positional_bigrams("/docs/projabs/synsys/index.html") == [(0, "docs/projabs"), (1, "projabs/synsys")]
    # Lowercased; punctuation and digit runs split terms; stop terms dropped.
    assert positional_bigrams("/Docs/ProjAbs/synsys/synalysis.html") == [
        (0, "docs/projabs"),
        (1, "projabs/synsys"),
        (2, "synsys/synalysis"),
    ]
    assert path_terms("/Docs/myr5/cicee/bridge-gap.html") == ["docs", "myr", "cicee", "bridge", "gap"]
    assert path_terms("/cgi-bin/main.php?id=7&home=1") == ["id"]
    assert positional_bigrams("/about.html") == []


def test_hostname_terms() -> None:
    terms = hostname_terms("www.elsevier.com")
    assert {"www", "elsevier", "www elsevier", ".com"} == set(terms)
    # The port is not part of the name; multi-label public suffixes are one term.
    assert set(hostname_terms("scop.mrc-lmb.cam.ac.uk:8080")) == {
        "scop", "mrc", "lmb", "cam", "scop mrc", "mrc lmb", "lmb cam", ".ac.uk"
    }  # fmt: skip
    assert "www" in hostname_terms("www2.example.org")


def test_ip_keys_and_prefixes() -> None:
    assert ip_keys("192.0.2.10") == ("192.0.2.10", "192.0.2.0/24")
    assert ip_keys("2001:db8::1") == ("2001:db8::1", "2001:db8::/64")
    assert ip_keys("not an address") is None and ip_keys(None) is None
    assert directory_prefixes("/a/b/c.html", 2) == ["/a/", "/a/b/"]
    assert directory_prefixes("/a/b/c/d.html", 1) == ["/a/"]
    assert directory_prefixes("/recipes/?sort=quick", 2) == ["/recipes/"]
    assert directory_prefixes("/search?q=/x/y/", 2) == []


# --------------------------------------------------------------- feature sets


def test_ip_aliases_score_high_and_virtual_hosting_low() -> None:
    hosts = [HostProfile("alias-a.org", "192.0.2.10", ()), HostProfile("alias-b.net", "192.0.2.10", ())]
    hosts.append(HostProfile("neighbour.com", "192.0.2.99", ()))  # same /24 as the aliases
    hosts += [HostProfile(f"shared{i}.com", "198.51.100.7", ()) for i in range(10)]  # virtual hosting
    hosts += [HostProfile("replica-a.org", "203.0.113.5", ()), HostProfile("replica-b.org", "203.0.113.9", ())]
    ranking = feature_rankings(hosts, None)["ip"]
    assert score_of(ranking, "alias-a.org", "alias-b.net") == 1.0
    assert score_of(ranking, "shared0.com", "shared1.com") == pytest.approx(1 / 9)
    assert score_of(ranking, "replica-a.org", "replica-b.org") == 0.5
    # Three hosts in 192.0.2.0/24: half of 1 / 2.
    assert score_of(ranking, "alias-a.org", "neighbour.com") == 0.25
    assert ranking[0].features["ip"] == 1.0 and {ranking[0].a, ranking[0].b} == {"alias-a.org", "alias-b.net"}


def test_common_paths_count_little() -> None:
    rare = [f"/manual/{w}.html" for w in ("alpha", "beta", "gamma", "delta", "epsilon")]
    hosts = []
    for i in range(10):
        pages = {p: [] for p in (*COMMON, "/robots.txt")}
        pages.update({f"/site/page{i}-{j}.html": [] for j in range(20)})
        if i < 2:
            pages.update({p: [] for p in rare})
        hosts.append(profile(f"host{i}.example", pages, content=False))
    paths = feature_rankings(hosts, None)["paths"]
    sharing_rare = score_of(paths, "host0.example", "host1.example")
    others = itertools.combinations(range(2, 10), 2)
    common_only = max(score_of(paths, f"host{i}.example", f"host{j}.example") for i, j in others)
    assert sharing_rare > 0.1
    assert common_only < sharing_rare / 5


def test_outlinks_and_hostnames() -> None:
    hub = "www.portal.com"
    hosts = [
        HostProfile("www.elsevier.com", None, (), frozenset({hub, "journals.org", "authors.net", "press.info"})),
        HostProfile("www.elsevier.nl", None, (), frozenset({hub, "journals.org", "authors.net", "press.info"})),
        HostProfile("www.springer.com", None, (), frozenset({hub})),
        HostProfile("www.wiley.com", None, (), frozenset({hub, "other.org"})),
        HostProfile("www.taylor.com", None, (), frozenset({hub})),
    ]
    rankings = feature_rankings(hosts, None)
    outlinks, names = rankings["outlinks"], rankings["hostname"]
    assert {outlinks[0].a, outlinks[0].b} == {"www.elsevier.com", "www.elsevier.nl"}
    assert outlinks[0].score > 0.5
    assert score_of(outlinks, "www.springer.com", "www.wiley.com") < outlinks[0].score / 2
    assert {names[0].a, names[0].b} == {"www.elsevier.com", "www.elsevier.nl"}
    assert score_of(names, "www.springer.com", "www.wiley.com") < names[0].score / 2


def test_prefix_alignment() -> None:
    docs = site(1, {"lib": 20, "tutorial": 10})
    archive = site(2, {"collections": 8}) | {"/pub/python/" + p[1:]: t for p, t in docs.items()}
    hosts = [profile("docs.python.org", docs), profile("ftp.archive.org", archive)]
    hosts += [profile(f"other{i}.org", site(10 + i, {"news": 10})) for i in range(4)]
    pair = pair_of(candidate_pairs(hosts), "docs.python.org", "ftp.archive.org")
    assert (pair.a, pair.prefix_a, pair.b, pair.prefix_b) == ("docs.python.org", "/", "ftp.archive.org", "/pub/python/")
    assert pair.shared_paths == pair.matched_paths == len(docs)
    assert pair.pages_a == pair.pages_b == len(docs)
    assert pair.features["paths"] > 0.9 and pair.features["content"] > 0.9


def test_subtree_alignment_puts_the_root_side_first() -> None:
    big = site(3, {"docs": 25, "blog": 25})
    copy = {p[len("/docs") :]: t for p, t in big.items() if p.startswith("/docs/")}
    hosts = [profile("www.project.org", big), profile("manual.mirror.net", copy)]
    hosts += [profile(f"other{i}.org", site(20 + i, {"news": 10})) for i in range(4)]
    pair = pair_of(candidate_pairs(hosts), "www.project.org", "manual.mirror.net")
    assert (pair.a, pair.prefix_a, pair.b, pair.prefix_b) == ("manual.mirror.net", "/", "www.project.org", "/docs/")


def test_prefix_alignment_without_content() -> None:
    docs = site(4, {"lib": 20})
    archive = site(5, {"collections": 8}) | {"/mirror/docs/" + p[1:]: t for p, t in docs.items()}
    hosts = [profile("docs.python.org", docs, content=False), profile("ftp.archive.org", archive, content=False)]
    pair = pair_of(candidate_pairs(hosts), "docs.python.org", "ftp.archive.org")
    assert (pair.prefix_a, pair.prefix_b) == ("/", "/mirror/docs/")
    assert pair.features["content"] == 0.0 and pair.matched_paths == 0
    assert pair.score > 0.3  # content's weight left the denominator


# ------------------------------------------------------------------- ranking


def crafted_web() -> tuple[list[HostProfile], set[frozenset[str]], set[frozenset[str]]]:
    """An original, three copies of it, and decoys of every kind among unrelated sites."""
    docs = site(100, {"library": 20, "tutorial": 10, "reference": 6})
    banner = ["mirrored", "by", "the", "python", "mirror", "network", "updated", "daily"]
    near = {p: banner + t for p, t in docs.items()}
    archive = site(101, {"collections": 10}) | {"/pub/python/" + p[1:]: t for p, t in docs.items()}
    links = ("www.python.org", "pypi.org", "wiki.python.org")
    decoy_rng = random.Random(102)
    legal = ("/license.html", "/privacy.html", "/terms.html", "/contact.html")
    boilerplate = {p: text(random.Random(p)) for p in legal}
    hosts = [
        profile("docs.pyref.org", docs, "192.0.2.1", links),
        profile("pydocs.fastmirror.net", dict(docs), "198.51.100.20", links),
        profile("python.mirror-site.org", near, "192.0.2.77", links[:2]),
        profile("ftp.archive.org", archive, "203.0.113.4", (*links, "www.gnu.org")),
        # Decoys: the same paths with other text; a look-alike name; shared boilerplate only.
        profile("docs.rubicon-lang.org", {p: text(decoy_rng) for p in docs}, "192.0.2.2", ("www.rubicon-lang.org",)),
        profile("docs.pyref.net", site(103, {"shop": 30}), "192.0.2.3", ("www.python.org",)),
        profile("www.alpha-shop.com", site(104, {"products": 30}) | boilerplate, "198.51.100.9", ("pay.example",)),
        profile("www.beta-shop.com", site(105, {"catalogue": 30}) | boilerplate, "198.51.100.9", ("pay.example",)),
    ]
    for i in range(6):
        hosts.append(profile(f"www.site{i}.com", site(110 + i, {"news": 15, "blog": 10}), f"203.0.113.{50 + i}"))
    copies = ["docs.pyref.org", "pydocs.fastmirror.net", "python.mirror-site.org", "ftp.archive.org"]
    true = {frozenset(p) for p in itertools.combinations(copies, 2)}
    decoys = {frozenset(("docs.rubicon-lang.org", c)) for c in copies}
    decoys |= {frozenset(("docs.pyref.org", "docs.pyref.net")), frozenset(("www.alpha-shop.com", "www.beta-shop.com"))}
    return hosts, true, decoys


def test_true_mirrors_rank_above_every_decoy() -> None:
    hosts, true, decoys = crafted_web()
    pairs = candidate_pairs(hosts)
    found = {frozenset((p.a, p.b)): p for p in pairs}
    assert true <= found.keys()
    worst_true = min(found[t].score for t in true)
    best_decoy = max((found[d].score for d in decoys if d in found), default=0.0)
    assert worst_true > best_decoy
    ranked = [frozenset((p.a, p.b)) for p in pairs]
    assert set(ranked[: len(true)]) == true
    for key in true:
        pair = found[key]
        expected = "/pub/python/" if "ftp.archive.org" in key else "/"
        prefixes = {pair.a: pair.prefix_a, pair.b: pair.prefix_b}
        assert prefixes.get("ftp.archive.org", expected) == expected
        assert all(prefix == "/" for host, prefix in prefixes.items() if host != "ftp.archive.org")
    near = found[frozenset(("docs.pyref.org", "python.mirror-site.org"))]
    assert near.features["content"] > 0.9 and near.matched_paths == near.shared_paths


def test_rankings_are_sorted_and_complete() -> None:
    hosts, true, _ = crafted_web()
    rankings = feature_rankings(hosts)
    assert tuple(rankings) == FEATURES
    for name, ranking in rankings.items():
        scores = [p.score for p in ranking]
        assert scores == sorted(scores, reverse=True)
        assert all(0 < s <= 1 and p.features[name] == s for s, p in zip(scores, ranking))
    assert {frozenset((p.a, p.b)) for p in rankings["content"][: len(true)]} == true
    combined = candidate_pairs(hosts)
    assert all(0 <= p.score <= 1 and set(p.features) == {*FEATURES, "index"} for p in combined)


def test_order_of_profiles_does_not_matter() -> None:
    hosts, _, _ = crafted_web()
    shuffled = hosts[:]
    random.Random(7).shuffle(shuffled)
    first, second = candidate_pairs(hosts), candidate_pairs(shuffled)
    assert [(p.a, p.b, p.prefix_a, p.prefix_b) for p in first] == [(p.a, p.b, p.prefix_a, p.prefix_b) for p in second]
    assert np.allclose([p.score for p in first], [p.score for p in second], rtol=0, atol=1e-12)


def test_many_copies_of_one_site_still_pair_up() -> None:
    # Every relative path is on more hosts than max_df: only identical content pairs them.
    pages = site(200, {"api": 12}, common=False)
    hosts = [profile(f"copy{i}.mirrors.example", dict(pages), f"198.51.100.{i + 1}") for i in range(8)]
    hosts += [profile(f"own{i}.example", site(300 + i, {"api": 12}, common=False)) for i in range(3)]
    pairs = candidate_pairs(hosts, params=MirrorParams(max_df=3))
    parent = {h.name: h.name for h in hosts}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for p in pairs:
        if p.features["content"] > 0.5:
            parent[find(p.a)] = find(p.b)
    assert len({find(f"copy{i}.mirrors.example") for i in range(8)}) == 1
    assert all(find(f"own{i}.example") == f"own{i}.example" for i in range(3))


def test_degenerate_inputs() -> None:
    assert candidate_pairs([]) == []
    assert candidate_pairs([HostProfile("alone.org", None, ("/",))]) == []
    assert candidate_pairs([HostProfile("a.org", None, ()), HostProfile("b.org", None, ())]) == []
    with pytest.raises(ValueError, match="unique"):
        candidate_pairs([HostProfile("a.org", None, ()), HostProfile("a.org", None, ())])
    with pytest.raises(ValueError):
        candidate_pairs([], max_candidates_per_host=0)
    with pytest.raises(ValueError):
        MirrorParams(max_df=1)


def test_per_host_cut() -> None:
    # Ten identical copies: each host keeps its best pairs, all pairs score alike.
    pages = site(400, {"api": 10})
    hosts = [profile(f"copy{i}.example", dict(pages)) for i in range(10)]
    assert len(candidate_pairs(hosts, max_candidates_per_host=9)) == 45
    few = candidate_pairs(hosts, max_candidates_per_host=2)
    assert len(few) < 45
    assert all(sum(name in (p.a, p.b) for p in few) >= 2 for name in (h.name for h in hosts))


def test_a_true_copy_under_a_prefix_beats_same_named_paths_at_the_root() -> None:
    docs = site(500, {"lib": 20})
    lookalike = {p: text(random.Random(p + "other")) for p in docs}  # same names, other pages
    both = lookalike | {"/mirror/" + p[1:]: t for p, t in docs.items()}
    hosts = [profile("docs.python.org", docs), profile("www.both.org", both)]
    hosts += [profile(f"other{i}.org", site(510 + i, {"news": 10})) for i in range(4)]
    pair = pair_of(candidate_pairs(hosts), "docs.python.org", "www.both.org")
    assert (pair.prefix_a, pair.prefix_b) == ("/", "/mirror/")
    assert pair.matched_paths == len(docs)


def brute_force_cosines(sets: list[set[str]]) -> dict[frozenset[int], float]:
    """Cosine of idf-weighted binary vectors, idf = ln((N + 1) / df), pair by pair."""
    df = Counter(term for terms in sets for term in terms)
    idf = {term: math.log((len(sets) + 1) / count) for term, count in df.items()}
    norms = [math.sqrt(sum(idf[t] ** 2 for t in terms)) for terms in sets]
    return {
        frozenset((i, j)): sum(idf[t] ** 2 for t in sets[i] & sets[j]) / (norms[i] * norms[j])
        for i, j in itertools.combinations(range(len(sets)), 2)
        if sets[i] & sets[j]
    }


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.sampled_from([f"h{i}.org" for i in range(12)]), max_size=8), min_size=2, max_size=12))
def test_inverted_index_cosines_match_brute_force(outlinks: list[set[str]]) -> None:
    hosts = [HostProfile(f"host{i}.net", None, (), frozenset(links)) for i, links in enumerate(outlinks)]
    expected = brute_force_cosines([links | {h.name} for links, h in zip(outlinks, hosts)])
    got = {frozenset((int(p.a[4:-4]), int(p.b[4:-4]))): p.score for p in feature_rankings(hosts, None)["outlinks"]}
    assert got.keys() == expected.keys()
    assert all(got[k] == pytest.approx(v, abs=1e-9) for k, v in expected.items())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.sampled_from([f"/p{i}.html" for i in range(15)]), max_size=10), min_size=2, max_size=10))
def test_path_cosines_match_brute_force(path_sets: list[set[str]]) -> None:
    # Without prefixes every host has one view, its root: plain idf cosine, scaled below 5 shared paths.
    hosts = [HostProfile(f"host{i}.net", None, tuple(sorted(paths))) for i, paths in enumerate(path_sets)]
    params = MirrorParams(prefix_depth=0)
    expected = {
        key: cosine * min(1.0, len(path_sets[min(key)] & path_sets[max(key)]) / params.min_shared_paths)
        for key, cosine in brute_force_cosines(path_sets).items()
    }
    ranking = feature_rankings(hosts, None, params=params)["paths"]
    got = {frozenset((int(p.a[4:-4]), int(p.b[4:-4]))): p.score for p in ranking}
    assert got.keys() == expected.keys()
    assert all(got[k] == pytest.approx(v, abs=1e-9) for k, v in expected.items())


def test_chunked_pair_generation_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    hosts, _, _ = crafted_web()
    whole = candidate_pairs(hosts)
    monkeypatch.setattr(mirror_features, "_PAIR_BUDGET", 7)
    chunked = candidate_pairs(hosts)
    assert [(p.a, p.b, p.prefix_a, p.prefix_b) for p in whole] == [(p.a, p.b, p.prefix_a, p.prefix_b) for p in chunked]
    assert np.allclose([p.score for p in whole], [p.score for p in chunked], rtol=0, atol=1e-12)
