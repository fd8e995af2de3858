"""A batch with a page the database cannot take loses only that page, on SQLite and on
the real PostgreSQL: values are made storable first, and a batch still refused is
written page by page, the refused page stored as a ``store-error`` row."""

from __future__ import annotations

from mirrorscope.sandbox.torture import long_host
from mirrorscope.storage.models import Host, Page
from mirrorscope.storage.storable import CUT_MARK, is_cut, storable
from mirrorscope.storage.store import Store
from tests.helpers import page, refuse_pages


def test_hostile_values_are_stored_cleaned_with_the_rest_of_their_batch(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    far = f"http://{long_host()}/"
    batch = [
        page("http://a.test/"),
        page("http://a.test/nul", content_type="text/html\x00; charset=utf-8"),
        page("http://a.test/far", links=(far,)),
        page(far, outcome="dns-error", ip=None),
        page("http://a.test/decoded", title="half a pair \ud800 here"),
        page("http://a.test/anchor", links=("http://a.test/",)),
    ]
    batch[-1].links[0].anchor = "a\x00b"
    result = store.write_pages(batch, run)
    assert (result.stored, result.errors, result.lost) == (len(batch), [], [])
    pages = {p["url"]: p for p in store.pages()}
    assert set(pages) == {r.url for r in batch}
    assert pages["http://a.test/nul"]["content_type"] == "text/html\ufffd; charset=utf-8"
    assert pages["http://a.test/decoded"]["title"] == "half a pair \ufffd here"
    # The long host is one host row, cut to its column with a hash, and the link to it names that row.
    cut = pages[far]["host"]
    assert len(cut) == Host.__table__.c.name.type.length and is_cut(cut) and CUT_MARK in cut
    links = {(l["source_url"], l["target_url"]): l for l in store.links()}
    assert links[("http://a.test/far", far)]["target_host"] == cut
    assert links[("http://a.test/anchor", "http://a.test/")]["anchor"] == "a\ufffdb"
    store.close()


def test_a_refused_page_is_an_error_row_and_the_rest_of_its_batch_is_stored(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    refuse_pages(store.engine, "NEW.title = 'poison'")
    # The batch brings a new host: after the refused transaction its id is not cached,
    # so the pages written one by one (and the next batch) still find their host.
    batch = [
        page("http://new.test/", links=("http://new.test/a",)),
        page("http://new.test/poison", title="poison", links=("http://new.test/b",)),
        page("http://new.test/a", 1, links=("http://new.test/c",)),
    ]
    result = store.write_pages(batch, run)
    assert result.stored == 2 and result.lost == []
    assert [url for url, _ in result.errors] == ["http://new.test/poison"]
    assert "page refused by the test" in result.errors[0][1] and "\n" not in result.errors[0][1]
    pages = {p["url"]: p for p in store.pages()}
    assert {u: p["outcome"] for u, p in pages.items()} == {
        "http://new.test/": "ok", "http://new.test/poison": "store-error", "http://new.test/a": "ok",
    }
    assert pages["http://new.test/poison"]["error"] == result.errors[0][1]
    assert sorted((l["source_url"], l["target_url"]) for l in store.links()) == [
        ("http://new.test/", "http://new.test/a"), ("http://new.test/a", "http://new.test/c"),
    ]
    assert store.write_pages([page("http://new.test/c", 2)], run).stored == 1
    store.close()


def test_a_page_whose_error_row_is_refused_too_is_reported_lost(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    refuse_pages(store.engine, "NEW.url LIKE '%lost%'")
    result = store.write_pages([page("http://a.test/"), page("http://a.test/lost")], run)
    assert result.stored == 1 and result.errors == []
    assert [url for url, _ in result.lost] == ["http://a.test/lost"]
    assert [p["url"] for p in store.pages()] == ["http://a.test/"]
    store.close()


def test_a_cut_value_keeps_its_column_length_and_stays_distinct() -> None:
    length = Page.__table__.c.content_type.type.length
    a, b = (storable(page("http://a.test/", content_type="x" * 1000 + end)) for end in "ab")
    assert len(a.content_type or "") == len(b.content_type or "") == length
    assert a.content_type != b.content_type and is_cut(a.content_type or "")
    untouched = page("http://a.test/", content_type="text/html")
    assert storable(untouched) is untouched
