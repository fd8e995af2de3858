"""One URL form for a link and for the page it leads to: the link target the spider
stores (``normalize_url``) is the URL the page is stored under once Scrapy has fetched
it (Scrapy makes a request's URL with w3lib's ``safe_url_string``; the spider stores
``normalize_url("", response.url)``), so the resume query (``unfetched_targets``: links
whose target has no page) never returns a fetched URL. Checked on generated hrefs with
square brackets, spaces, quotes, unicode, percent-escapes and query strings, and on the
store on both backends."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy import Request

from mirrorscope.crawler.hosts import normalize_url
from mirrorscope.storage.storable import is_cut
from mirrorscope.storage.store import Store
from tests.helpers import page

BASE = "http://a.test/dir/page.html"
_PIECES = st.sampled_from([
    "[", "]", "[]", " ", "'", '"', "%", "%5B", "%5d", "%41", "%zz", "%%", "?", "&", "=", "/", "./", "../", ";",
    "#", "é", "中文", "\u00a0", "|", "^", "`", "{", "}", "<", ">", "\\", "~", "+", ":", "@", "!", "$", "*", "(", ")",
    "a", "b", "0", "list", ".html", "http://b.test/", "//c.test", "HTTP://D.Test:80/",
])
HREFS = st.lists(st.one_of(_PIECES, st.text(max_size=3)), min_size=1, max_size=10).map("".join)


def link_target(href: str) -> str | None:
    """What the spider stores as the target of ``<a href=href>`` on ``BASE`` (None: no link)."""
    target = normalize_url(BASE, href)
    return None if target is None or is_cut(target) else target


def page_url(target: str) -> str | None:
    """The URL the spider stores the page under after Scrapy fetched ``target``."""
    return normalize_url("", Request(target).url)


@settings(max_examples=500, deadline=None)
@given(href=HREFS)
def test_a_link_and_the_page_it_leads_to_have_one_url(href: str) -> None:
    target = link_target(href)
    if target is not None:
        assert page_url(target) == target


def test_the_resume_query_returns_no_fetched_url(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    sources = itertools.count()

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(hrefs=st.lists(HREFS, min_size=1, max_size=6))
    def check(hrefs: list[str]) -> None:
        targets = tuple(dict.fromkeys(filter(None, map(link_target, hrefs))))
        store.write_pages([page(f"http://a.test/source-{next(sources)}", links=targets)], run)
        fetched = {url for url in map(page_url, targets) if url is not None}
        store.write_pages([page(url, 1) for url in fetched], run)
        assert not {url for url, _ in store.unfetched_targets(run)} & (fetched | set(targets))

    check()
    store.close()
