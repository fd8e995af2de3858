"""The store on SQLite and on the real PostgreSQL: migrations, idempotent batched writes."""

from __future__ import annotations


import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, inspect, select

from mirrorscope.storage.db import StoreError, current_revision, downgrade, head_revision, make_engine, upgrade
from mirrorscope.storage.models import Base, Link, Page
from mirrorscope.storage.sql import from_signed64, to_signed64
from mirrorscope.storage.store import Store
from tests.helpers import page


def test_fresh_database_is_brought_to_head_and_matches_the_models(db_url: str) -> None:
    store = Store(db_url)
    assert current_revision(store.engine) == head_revision()
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    # Types SQLite reports differently are not drift; missing tables, columns or indexes are.
    structural = [d for d in diff if not (isinstance(d, list) and d and d[0][0] == "modify_type")]
    assert structural == []
    store.close()


def test_downgrade_and_upgrade_again(db_url: str) -> None:
    engine = make_engine(db_url)
    upgrade(engine)
    assert {"pages", "links", "hosts", "crawl_runs"} <= set(inspect(engine).get_table_names())
    downgrade(engine, "base")
    assert "pages" not in inspect(engine).get_table_names()
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    engine.dispose()


def test_writes_are_idempotent_and_links_are_replaced(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run(["http://a.test/"], {"x": 1})
    first = [page("http://a.test/", links=("http://a.test/1", "http://b.test/2")), page("http://a.test/1", 1)]
    store.write_pages(first, run)
    store.write_pages(first, run)
    assert store.summary()["pages"] == 2 and store.summary()["links"] == 2
    ids = {p["url"]: p["id"] for p in store.pages()}
    # A re-crawl that finds other links updates the row in place and replaces its links.
    store.write_pages([page("http://a.test/", links=("http://c.test/3",), title="new")], run)
    after = {p["url"]: p for p in store.pages()}
    assert {u: p["id"] for u, p in after.items()} == ids
    assert after["http://a.test/"]["title"] == "new"
    assert [l["target_url"] for l in store.links()] == ["http://c.test/3"]
    store.close()


def test_a_batch_may_name_a_url_twice(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    store.write_pages([page("http://a.test/", title="old"), page("http://a.test/", title="new")], run)
    rows = store.pages()
    assert len(rows) == 1 and rows[0]["title"] == "new"
    store.close()


def test_unfetched_targets_are_the_frontier(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    store.write_pages([page("http://a.test/", 0, ("http://a.test/1", "http://a.test/2")), page("http://a.test/1", 1, ("http://a.test/3", "http://a.test/2"))], run)
    assert store.unfetched_targets(run) == [("http://a.test/2", 1), ("http://a.test/3", 2)]
    assert store.fetched_urls(run) == {"http://a.test/", "http://a.test/1"}
    store.close()


def test_a_spam_page_adds_to_the_frontier_only_the_own_host_links_that_confirm_it(db_url: str) -> None:
    """As the live gate (``crawler.spam``): a page scored spam is followed only to its own
    host and only for its first few links there; a resumed crawl must not queue the
    hundred links of a farm page a killed crawl had stored."""
    store = Store(db_url)
    run = store.start_run([], {})
    farm = tuple(f"http://farm.test/{n}" for n in range(5)) + ("http://victim.test/",)
    store.write_pages([
        page("http://good.test/", 0, ("http://farm.test/", "http://good.test/a")),
        page("http://farm.test/", 1, farm, spam_score=0.9),
    ], run)
    targets = store.unfetched_targets(run, spam_below=0.5, spam_own_links=2)
    assert targets == [("http://good.test/a", 1), ("http://farm.test/0", 2), ("http://farm.test/1", 2)]
    assert [u for u, _ in store.unfetched_targets(run, spam_below=0.5)] == ["http://good.test/a"]
    assert len(store.unfetched_targets(run)) == 1 + len(farm)
    store.close()


def test_fingerprints_keep_all_64_bits(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    values = [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
    store.write_pages([page(f"http://a.test/{v}", fingerprint=v) for v in values], run)
    assert sorted(p["fingerprint"] for p in store.pages()) == sorted(values)
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Page)).scalar_one() == 5
        assert conn.execute(select(func.count()).select_from(Link)).scalar_one() == 0
    store.close()
    assert all(from_signed64(to_signed64(v)) == v for v in values)


def test_host_ip_is_kept_when_a_later_fetch_has_none(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    store.write_pages([page("http://a.test/")], run)
    Store(db_url).write_pages([page("http://a.test/x", ip=None)], run)
    assert [h["ip"] for h in store.hosts()] == ["127.0.1.1"]
    store.close()


@pytest.mark.parametrize(
    "url, message",
    [
        ("nope", "bad database URL"),
        ("mysql://x/y", "unsupported database"),
        ("sqlite:////no/such/dir/x.db", "does not exist"),
        ("postgresql+psycopg://127.0.0.1:1/x", "cannot open database"),
    ],
)
def test_bad_database_urls_give_one_line_errors(url: str, message: str) -> None:
    with pytest.raises(StoreError) as err:
        Store(url)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_duplicates_and_containments_resolve_to_earlier_pages(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    store.write_pages([page("http://a.test/orig", links=("http://a.test/x",))], run)
    copy = page("http://b.test/copy", links=("http://b.test/y",), duplicate_of="http://a.test/orig", duplicate_kind="identical", duplicate_score=1.0)
    part = page("http://b.test/part", contained_in=[("http://a.test/orig", 0.93), ("http://b.test/copy", 0.9)])
    store.write_pages([copy, part], run)
    rows = {p["url"]: p for p in store.pages()}
    assert rows["http://b.test/copy"]["duplicate_of_id"] == rows["http://a.test/orig"]["id"]
    assert rows["http://b.test/copy"]["duplicate_kind"] == "identical"
    assert [u for u, _ in store.unfetched_targets(run, from_duplicates=False)] == ["http://a.test/x"]
    assert [u for u, _ in store.unfetched_targets(run)] == ["http://a.test/x", "http://b.test/y"]
    with store.engine.connect() as conn:
        from mirrorscope.storage.models import Containment

        got = sorted((r.page_id, r.container_id, r.containment) for r in conn.execute(select(Containment)))
    assert got == sorted([(rows["http://b.test/part"]["id"], rows["http://a.test/orig"]["id"], 0.93), (rows["http://b.test/part"]["id"], rows["http://b.test/copy"]["id"], 0.9)])
    store.close()


def test_page_spam_evidence_gives_scores_word_counts_and_distinct_targets_in_fetch_order(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    targets = ("http://b.test/1", "http://b.test/1", "http://c.test/2", "http://a.test/3")
    store.write_pages([page("http://a.test/x", links=targets, spam_score=0.9, word_count=250)], run)
    store.write_pages([page("http://b.test/1", spam_score=0.1, word_count=0), page("http://b.test/bin", outcome="not-html")], run)
    got = list(store.page_spam_evidence())
    assert got == [("a.test", 0.9, 250, 3), ("b.test", 0.1, 0, 0), ("b.test", None, None, 0)]
    store.close()



def test_a_page_without_an_address_does_not_erase_its_hosts_address_in_one_batch(db_url: str) -> None:
    """A robots-refused page (no address) after a fetched one of its host, in one batch."""
    store = Store(db_url)
    try:
        run = store.start_run([], {})
        store.write_pages([page("http://a.test/", ip="127.0.1.7"), page("http://a.test/private.html", ip=None, outcome="robots")], run)
        assert [h["ip"] for h in store.hosts() if h["name"] == "a.test"] == ["127.0.1.7"]
    finally:
        store.close()
