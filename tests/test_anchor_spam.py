"""Anchor statistics for the spam detector (``detectors.anchor_spam``) on crafted link sets."""

from __future__ import annotations

import random

import pytest

from mirrorscope.detectors.anchor_spam import AnchorSpamParams, anchor_spam

FOCUS = {
    "farm0.test": ["cheap flights", "casino bonus", "payday loans", "Cheap  Pharmacy"],
    "farm1.test": ["free spins", "replica watches", "buy now", "lowest price"],
    "farm2.test": ["diet pills", "forex trading", "cheap hotels", "insurance quotes"],
}


def links(rows: list[tuple[str, str, str, str]]) -> tuple[list[str], list[str], list[str], list[str]]:
    hosts, urls, sources, anchors = zip(*rows) if rows else ((), (), (), ())
    return list(hosts), list(urls), list(sources), list(anchors)


def farm(rng: random.Random, per_host: int = 60) -> list[tuple[str, str, str, str]]:
    """Every farm host links the others' generated pages with the target's own phrases."""
    rows = []
    for source in FOCUS:
        for _ in range(per_host):
            target = rng.choice([h for h in FOCUS if h != source])
            rows.append((target, f"http://{target}/p/{rng.randrange(10**6)}.html", source, rng.choice(FOCUS[target])))
    return rows


def docs(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """Five hosts link fifty documentation pages by their titles, and many pages of
    docs.test link each other with "home" (its own navigation)."""
    rows = []
    for page in range(50):
        for source in rng.sample(["a.test", "b.test", "c.test", "d.test", "e.test"], 2):
            rows.append(("docs.test", f"http://docs.test/lib/{page}.html", source, f"module {page} reference"))
        rows.append(("docs.test", "http://docs.test/", "docs.test", "cheap deals home"))
    return rows


def test_link_farm_hosts_are_flagged_for_farm_and_commercial_anchors() -> None:
    rng = random.Random(1)
    verdicts = anchor_spam(*links(farm(rng) + docs(rng)))
    for host, phrases in FOCUS.items():
        verdict = verdicts[host]
        assert verdict.flagged and verdict.inlinks == sum(1 for r in farm(random.Random(1)) if r[0] == host)
        assert verdict.source_hosts == 2 and verdict.target_urls > 10 and verdict.phrases == len(phrases)
        assert verdict.top_share == 1.0 and verdict.repetition > 0.9 and verdict.score == 1.0
        # Case and spacing do not make another phrase.
        assert verdict.top_phrase in {" ".join(p.lower().split()) for p in phrases}
        assert [r.split(":")[0] for r in verdict.reasons] == ["farm anchors", "repeated commercial anchors"]
        assert f"of {verdict.inlinks} in-links from 2 hosts" in verdict.reasons[0]
        assert verdict.reasons[0].endswith(f"phrases (top: '{verdict.top_phrase}')")
    # Documentation pages linked by their titles: varied anchors, nothing flagged; its
    # own navigation links ("cheap deals home" on every page) are not in-links.
    doc = verdicts["docs.test"]
    assert not doc.flagged and doc.reasons == ()
    assert doc.inlinks == 100 and doc.phrases == 50 and doc.commercial_share == 0.0
    assert doc.top_share == pytest.approx(20 / 100) and doc.score == doc.top_share
    assert set(verdicts) == set(FOCUS) | {"docs.test"}


def test_blogroll_honest_shop_and_few_links_are_not_flagged() -> None:
    rows = [("bob.test", "http://bob.test/", f"friend{i}.test", "Bob's blog") for i in range(30)]
    # A shop linked by what each link sells: commercial words, but each phrase once.
    rows += [("shop.test", f"http://shop.test/item/{i}", f"blog{i % 7}.test", f"buy the kettle model {i}") for i in range(40)]
    # Farm-like anchors, but only 12 of them: too few to decide.
    rows += [("small.test", f"http://small.test/p/{i}", f"s{i % 3}.test", "casino bonus") for i in range(12)]
    verdicts = anchor_spam(*links(rows))
    bob, shop, small = verdicts["bob.test"], verdicts["shop.test"], verdicts["small.test"]
    assert bob.top_share == 1.0 and bob.target_urls == 1 and not bob.flagged and bob.score == 0.0
    assert shop.commercial_share == 1.0 and shop.repetition == 0.0 and not shop.flagged
    assert shop.score == shop.top_share == 10 / 40  # the farm rule's gates pass, its share stays low
    assert small.top_share == 1.0 and small.commercial_share == 1.0 and not small.flagged
    # The same twelve pass with a lower minimum.
    lenient = anchor_spam(*links(rows), params=AnchorSpamParams(min_inlinks=10))["small.test"]
    assert lenient.flagged and len(lenient.reasons) == 2


def test_repeated_commercial_anchors_without_a_farm() -> None:
    # One page of a host linked 40 times from many hosts with two commercial phrases:
    # nine target URLs in all (too few for a farm), but repeated commercial anchors.
    rows = [("pills.test", "http://pills.test/", f"h{i}.test", ["cheap pharmacy", "diet pills"][i % 2]) for i in range(42)]
    rows += [("pills.test", f"http://pills.test/about{i}", f"h{i}.test", f"about page {i}") for i in range(8)]
    verdict = anchor_spam(*links(rows))["pills.test"]
    assert verdict.flagged and verdict.reasons == (verdict.reasons[0],)
    assert verdict.reasons[0].startswith("repeated commercial anchors: 84% of 50 in-links")
    assert verdict.target_urls == 9 and verdict.top_share == 1.0  # ten phrases in all, but too few targets
    assert verdict.score == verdict.commercial_share == 0.84 and verdict.repetition == pytest.approx(1 - 10 / 50)


def test_empty_and_malformed_inputs() -> None:
    assert anchor_spam([], [], [], []) == {}
    # Only same-host links and empty anchors: no in-links to judge.
    assert anchor_spam(["a.test", "b.test"], ["http://a.test/", "http://b.test/"], ["a.test", "c.test"], ["home", "  "]) == {}
    with pytest.raises(ValueError):
        anchor_spam(["a.test"], [], ["b.test"], ["x"])
