"""Link evidence in the host verdicts (jobs.spam.judge_on_links) on stored crawls: a
spam host the content checks miss is condemned by where it sits in the link graph, and
camouflage links from spam to good sites lower nothing."""

from __future__ import annotations

from typing import Any

from mirrorscope.jobs.spam import rejudge_spam
from mirrorscope.storage.store import Store
from tests.helpers import page


def stored_world(db_url: str, camouflage: bool) -> Store:
    """seed.test (the crawl's seed) links to good.test, docs.test and, in a comment,
    to spam.test, whose pages are spam; spam.test links to its accomplice ally.test,
    whose pages look clean and link back to it only. With ``camouflage`` spam.test also
    links to good.test, docs.test and wiki.test (which nothing else links to)."""
    store = Store(db_url)
    run = store.start_run(["http://seed.test/"], {})
    outside = ("http://good.test/1", "http://docs.test/1", "http://wiki.test/1") if camouflage else ()
    pages = [
        page("http://seed.test/", links=("http://good.test/0", "http://docs.test/0", "http://spam.test/0")),
        *(page(f"http://good.test/{n}", links=(f"http://docs.test/{n}",), spam_score=0.05, word_count=300 + n) for n in range(3)),
        *(page(f"http://docs.test/{n}", links=("http://good.test/0",), spam_score=0.05, word_count=400 + n) for n in range(3)),
        *(page(f"http://spam.test/{n}", links=(f"http://ally.test/{n}", *outside), spam_score=0.9, word_count=900)
          for n in range(3)),
        *(page(f"http://ally.test/{n}", links=(f"http://spam.test/{n}",), spam_score=0.05, word_count=500 + n) for n in range(3)),
    ]
    store.write_pages(pages, run)
    return store


def verdicts(db_url: str, camouflage: bool, link_features: bool) -> dict[str, dict[str, Any]]:
    store = stored_world(db_url, camouflage)
    try:
        rejudge_spam(store, link_features=link_features)
        return {v["host"]: v for v in store.host_verdicts("spam")}
    finally:
        store.close()


def test_content_alone_misses_the_accomplice(sqlite_url: str) -> None:
    content = verdicts(sqlite_url, camouflage=False, link_features=False)
    assert {h for h, v in content.items() if v["flagged"]} == {"spam.test"}


def test_links_condemn_the_accomplice(sqlite_url: str) -> None:
    found = verdicts(sqlite_url, camouflage=False, link_features=True)
    assert {h for h, v in found.items() if v["flagged"]} == {"spam.test", "ally.test"}
    ally = found["ally.test"]
    assert ally["reasons"][0] == f"distrust of a host no trusted path reaches {ally['features']['distrust']:.3g} >= 0.5"
    assert ally["features"]["trust"] == 0.0
    # Trust reaches the good hosts, and spam.test through the seed's comment link.
    assert all(found[h]["features"]["trust"] > 0 for h in ("seed.test", "good.test", "docs.test", "spam.test"))


def test_camouflage_links_lower_nothing(tmp_path) -> None:
    plain = verdicts(f"sqlite:///{tmp_path / 'plain.db'}", camouflage=False, link_features=True)
    camouflaged = verdicts(f"sqlite:///{tmp_path / 'camouflage.db'}", camouflage=True, link_features=True)
    assert {h for h, v in camouflaged.items() if v["flagged"]} == {"spam.test", "ally.test"}
    for host in ("seed.test", "good.test", "docs.test"):
        before, after = plain[host], camouflaged[host]
        assert (after["flagged"], after["score"]) == (before["flagged"], before["score"]) == (False, 0.0)
        assert after["features"]["trust"] == before["features"]["trust"]
        assert after["features"]["distrust"] <= before["features"]["distrust"]
    # Linked from spam alone, wiki.test has only the weak reason it had before links were weighed.
    assert not camouflaged["wiki.test"]["flagged"]
    assert camouflaged["wiki.test"]["reasons"] == ["share of linking hosts that are spam 1 >= 1"]
    assert camouflaged["wiki.test"]["features"]["distrust"] == 0.0
