"""Host spam verdicts judged again from the store (``mirror-report detect``)."""

from __future__ import annotations

from mirrorscope.jobs.spam import rejudge_spam
from mirrorscope.storage.store import Store
from tests.helpers import mirror_report, page


def stored_crawl(db_url: str) -> Store:
    """A spam host whose pages link to a victim, a good host, and the verdicts an older
    judgement left: the good host flagged, the spam host not, a calendar trap."""
    store = Store(db_url)
    run = store.start_run([], {})
    spam = [page(f"http://spam.test/{n}", links=("http://victim.test/buy", "http://spam.test/"), spam_score=0.9, word_count=900)
            for n in range(3)]
    good = [page(f"http://good.test/{n}", links=("http://spam.test/",), spam_score=0.05, word_count=300 + n, ip="127.0.1.2")
            for n in range(3)]
    store.write_pages([*spam, *good], run)
    store.replace_host_verdicts([
        {"host": "good.test", "kind": "spam", "flagged": True, "score": 0.8, "pages": 3, "reasons": ["an older rule"], "features": {}},
        {"host": "spam.test", "kind": "spam", "flagged": False, "score": 0.1, "pages": 1, "reasons": [], "features": {}},
        {"host": "cal.test", "kind": "trap", "flagged": True, "score": 1.0, "pages": 120, "reasons": ["calendar"], "features": {"calendar_urls": 99}},
    ])
    return store


def test_rejudging_replaces_stale_spam_verdicts_and_keeps_the_traps(db_url: str) -> None:
    store = stored_crawl(db_url)
    trap_before = store.host_verdicts("trap")
    summary = rejudge_spam(store)
    verdicts = {v["host"]: v for v in store.host_verdicts("spam")}
    assert store.host_verdicts("trap") == trap_before  # untouched, timestamp included
    assert set(verdicts) == {"spam.test", "good.test", "victim.test"}
    assert not verdicts["good.test"]["flagged"] and verdicts["good.test"]["reasons"] == []
    assert verdicts["spam.test"]["flagged"] and verdicts["spam.test"]["pages"] == 3
    assert any(reason.startswith("share of spam pages") for reason in verdicts["spam.test"]["reasons"])
    # Never fetched, judged on who links to it: the spam host, flagged in the same judgement
    # (one reason, not enough to flag it).
    victim = verdicts["victim.test"]
    assert victim["pages"] == 0 and victim["features"]["spam_links_in"] == 3 and not victim["flagged"]
    assert victim["reasons"] == ["share of linking hosts that are spam 1 >= 1"]
    assert summary == {"hosts": 3, "flagged": 1}
    store.close()


def test_detect_rejudges_spam_and_says_so(sqlite_url: str) -> None:
    stored_crawl(sqlite_url).close()
    result = mirror_report("detect", "--db", sqlite_url)
    assert result.returncode == 0, result.stderr
    store = Store(sqlite_url)
    flagged = {v["host"] for v in store.host_verdicts("spam", flagged_only=True)}
    store.close()
    assert flagged == {"spam.test"} and "spam: 1 of 3 hosts flagged" in result.stderr
