"""Spam and traps in the sandbox (`build_world(..., spam=True)`, `build_full_world`).

Link farm, doorway, cloaking (checked over real sockets with browser and
crawler User-Agents), hidden text, an infinite calendar, good link-rich
hosts, and the ground truth's bounded walk of the unbounded spaces.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
import pytest

from mirrorscope.sandbox import SandboxServer, World, build_full_world, build_world, is_browser
from mirrorscope.sandbox import names as n
from mirrorscope.sandbox.model import Host
from mirrorscope.sandbox.sites.events import CALENDAR
from mirrorscope.sandbox.sites.spam import DOORWAY_OFFER, FARM_LINKS_PER_PAGE, HIDDEN_TECHNIQUES, HiddenTextWriter, spam_word_share
from mirrorscope.sandbox.truth import BROWSER_USER_AGENT, visible_words

ROOT = Path(__file__).resolve().parent.parent
SPAM_HOSTS = {*n.FARM, n.DOORWAY, n.CLOAKING, n.HIDDEN_TEXT}
BROWSERS = (
    BROWSER_USER_AGENT,
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
)
CRAWLERS = (
    None,
    "mirrorscope/0.1 (+https://github.com/mirrorscope/mirrorscope)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0) Chrome/116.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36 MirrorScope-crawler",
    "Scrapy/2.13 (+https://scrapy.org)",
    "curl/8.5.0",
    "python-requests/2.32",
    "Mozilla/5.0",
)


@pytest.fixture(scope="module")
def world() -> World:
    """The full world, which conftest's ``server`` serves and ``truth`` describes."""
    return build_full_world(0)


def fetch(server: SandboxServer, host: str, path: str, user_agent: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(server.ip_of(host), server.port, timeout=10)
    try:
        headers = {"Host": f"{host}:{server.port}"}
        if user_agent is not None:
            headers["User-Agent"] = user_agent
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def hrefs(body: bytes, base: str) -> list[str]:
    document = lxml.html.document_fromstring(body)
    return [urljoin(base, a.get("href")).split("#")[0] for a in document.iter("a") if a.get("href")]


def host_of(url: str) -> str:
    return urlsplit(url).hostname or ""


# -- ground truth ----------------------------------------------------------------------------


def test_ground_truth_spam_keys(world: World, truth: dict) -> None:
    json.dumps(truth)
    assert truth["features"] == ["hard-mirrors", "spam"]
    assert set(truth["spam_hosts"]) == SPAM_HOSTS
    assert truth["spam"] == {**{h: "link-farm" for h in n.FARM}, n.DOORWAY: "doorway", n.CLOAKING: "cloaking", n.HIDDEN_TEXT: "hidden-text"}
    assert truth["trap_hosts"] == {**{h: ["/"] for h in n.FARM}, n.EVENTS: [CALENDAR]}
    good = set(truth["good_hosts"])
    assert not good & SPAM_HOSTS
    assert good | SPAM_HOSTS | {n.HOSTILE} == {h.name for h in world.hosts}
    assert {n.EVENTS, n.BLOG, n.APIREF, n.DOCS, n.PORTAL, n.REPACKAGED} <= good
    assert 900 <= truth["counts"]["pages"] <= 1500


def test_spam_hosts_are_linked_from_normal_pages_at_depth_one_or_two(truth: dict) -> None:
    good = set(truth["good_hosts"])
    # A spam host first reached at depth 2 or 3 was linked from a good page at depth 1 or 2.
    for spam in SPAM_HOSTS - set(n.FARM[1:]):
        sources = {s for s, t in truth["edges"] if host_of(t) == spam and host_of(s) in good}
        assert sources, spam
        assert all(host_of(s) in (n.BLOG, n.EVENTS) for s in sources), (spam, sources)
        assert truth["host_depth"][spam] in (2, 3), spam
    assert truth["host_depth"][n.BLOG] == 1 and truth["host_depth"][n.EVENTS] == 1


def test_link_farm_has_one_way_in_and_is_walked_only_at_its_entry(truth: dict, server: SandboxServer) -> None:
    farm = set(n.FARM)
    into = [(s, t) for s, t in truth["edges"] if host_of(t) in farm and host_of(s) not in farm]
    assert len(into) == 1
    source, entry = into[0]
    assert host_of(source) == n.BLOG and "/posts/" in source
    farm_pages = [u for u in truth["pages"] if host_of(u) in farm]
    assert farm_pages == [entry] and truth["outcomes"][entry] == "ok"
    assert truth["unbounded"][n.FARM[0]]["entries"] == [entry]
    assert sum(truth["unbounded"][h]["frontier"] for h in n.FARM) >= 0.9 * FARM_LINKS_PER_PAGE
    # The entry links to every farm host, none of which is otherwise walked.
    linked_hosts = {host_of(t) for s, t in truth["edges"] if s == entry}
    assert linked_hosts == farm
    for host in n.FARM[1:]:
        assert truth["unbounded"][host]["entries"] == [] and host not in truth["host_depth"]


def test_calendar_trap_is_entered_not_enumerated(world: World, truth: dict, server: SandboxServer) -> None:
    root = server.url(n.EVENTS, CALENDAR)
    in_pages = [u for u in truth["pages"] if u.startswith(root)]
    assert in_pages == truth["unbounded"][n.EVENTS]["entries"]
    assert root in in_pages and 2 <= len(in_pages) <= 30
    # Every entry is linked from a page outside the calendar.
    for url in in_pages:
        assert any(t == url and not s.startswith(root) for s, t in truth["edges"]), url
    assert truth["unbounded"][n.EVENTS]["frontier"] > 0
    # The rest of the events site is ordinary and fully walked.
    normal = [u for u in truth["html_pages"] if host_of(u) == n.EVENTS and not u.startswith(root)]
    assert len(normal) >= 20


# -- link farm ---------------------------------------------------------------------------------


def test_farm_pages_are_generated_deterministically_and_bounded(world: World) -> None:
    again = build_world(0, spam=True)
    other_seed = build_world(1, spam=True)
    for host in n.FARM:
        farm = world.host(host)
        assert farm.dynamic is not None and farm.unbounded == ("/",) and set(farm.resources) == {"/robots.txt"}
        for path in ("/", "/p/0.html", "/p/42.html", "/p/999999999999999999.html"):
            started = time.perf_counter()
            page = farm.resolve(path)
            assert time.perf_counter() - started < 0.25
            assert page is not None and page.status == 200
            assert page.body == farm.resolve(path).body == again.host(host).resolve(path).body
            assert page.body != other_seed.host(host).resolve(path).body
            assert len(page.body) < 200 * 1024
        assert farm.resolve("/p/1.html").body != farm.resolve("/p/2.html").body
        for bad in ("/p/01.html", "/p/1234567890123456789.html", "/p/x.html", "/p/1", "/index.html", "/p/1.html?x=1"):
            assert farm.resolve(bad) is None, bad


def test_farm_pages_are_stuffed_and_densely_interlinked(world: World) -> None:
    page = world.host(n.FARM[2]).resolve("/p/123.html").at_port(8080)
    base = f"http://{n.FARM[2]}:8080/p/123.html"
    links = hrefs(page.body, base)
    assert 0.95 * FARM_LINKS_PER_PAGE <= len(links) <= 1.05 * FARM_LINKS_PER_PAGE
    assert {host_of(u) for u in links} == set(n.FARM)
    assert all(re.fullmatch(r"/p/\d+\.html", urlsplit(u).path) for u in links)
    assert len(set(links)) > 0.95 * len(links)
    document = lxml.html.document_fromstring(page.body)
    assert len(document.findtext(".//title").split(" | ")) >= 4
    assert document.xpath("//head/meta[@name='keywords']")
    text = " ".join(p.text_content() for p in document.iter("p") if not p.get("class"))
    assert spam_word_share(text) > 0.6


# -- doorway -------------------------------------------------------------------------------------


def test_doorway_pages_redirect_to_a_thin_target(world: World, truth: dict, server: SandboxServer) -> None:
    doorway = world.host(n.DOORWAY)
    pages = sorted(p for p in doorway.resources if p.startswith("/hotels/"))
    assert len(pages) >= 6
    kinds = set()
    for path in pages:
        document = lxml.html.document_fromstring(doorway.resolve(path).body)
        refresh = document.xpath("//head/meta[@http-equiv='refresh']/@content")
        script = [s.text for s in document.iter("script") if s.text and "location" in s.text]
        if refresh:
            kinds.add("meta")
            assert refresh[0].endswith(f"url={DOORWAY_OFFER}")
        if script:
            kinds.add("script")
            assert DOORWAY_OFFER in script[0]
        title = document.findtext(".//title")
        assert len(title.split(" | ")) >= 4 and spam_word_share(title) > 0.5
        assert DOORWAY_OFFER in [a.get("href") for a in document.iter("a")]
        assert server.url(n.DOORWAY, path) in truth["pages"]
    assert kinds == {"meta", "script"}
    offer = doorway.resolve(DOORWAY_OFFER)
    assert len(offer.body) < 1024 and len(visible_words(offer.body)) < 15
    assert truth["outcomes"][server.url(n.DOORWAY, DOORWAY_OFFER)] == "ok"


# -- cloaking ----------------------------------------------------------------------------------------


def test_is_browser() -> None:
    assert all(is_browser(ua) for ua in BROWSERS)
    assert not any(is_browser(ua) for ua in CRAWLERS)


def test_cloaking_over_real_sockets(world: World, truth: dict, server: SandboxServer) -> None:
    host = world.host(n.CLOAKING)
    paths = sorted(urlsplit(u).path for u in truth["html_pages"] if host_of(u) == n.CLOAKING)
    assert len(paths) >= 8
    for path in paths:
        browsed = {fetch(server, n.CLOAKING, path, ua) for ua in BROWSERS}
        crawled = {fetch(server, n.CLOAKING, path, ua) for ua in CRAWLERS}
        assert len(browsed) == len(crawled) == 1
        (status_b, browser), (status_c, crawler) = browsed.pop(), crawled.pop()
        assert status_b == status_c == 200 and browser != crawler
        assert browser == host.resolve(path, BROWSER_USER_AGENT).at_port(server.port).body
        assert crawler == host.resolve(path).at_port(server.port).body == host.resources[path].at_port(server.port).body
        assert spam_word_share(" ".join(visible_words(crawler))) > 0.5
        assert spam_word_share(" ".join(visible_words(browser))) < 0.1
        base = server.url(n.CLOAKING, path)
        assert set(hrefs(browser, base)) == set(hrefs(crawler, base))  # both views reach the same URLs
    assert sorted(truth["cloaked"]) == sorted(server.url(n.CLOAKING, p) for p in paths)
    # robots.txt is the same for everyone; other hosts ignore the User-Agent.
    assert fetch(server, n.CLOAKING, "/robots.txt", BROWSERS[0]) == fetch(server, n.CLOAKING, "/robots.txt")
    assert fetch(server, n.DOCS, "/", BROWSERS[0]) == fetch(server, n.DOCS, "/", CRAWLERS[1])


def test_resolve_without_user_agent_still_works() -> None:
    host = Host(name="h.example", ip="127.0.1.99", role="other", resources={})
    assert host.resolve("/") is None and host.resolve("/", "curl/8") is None


# -- hidden text ------------------------------------------------------------------------------------


def test_hidden_text_pages(world: World, truth: dict) -> None:
    host = world.host(n.HIDDEN_TEXT)
    paths = [urlsplit(u).path for u in truth["html_pages"] if host_of(u) == n.HIDDEN_TEXT]
    assert len(paths) >= 8
    markers = {
        "display:none": 'style="display:none"',
        "visibility:hidden": 'style="visibility:hidden"',
        "font-size:0": 'style="font-size:0px"',
        "same-colour": '<div style="background-color:#ffffff"><p style="color:#ffffff">',
        "off-screen": "left:-9999px",
        "css-class": ".seo-block{display:none}",
    }
    assert set(markers) == set(HIDDEN_TECHNIQUES)
    seen = set()
    for path in paths:
        body = host.resolve(path).body.decode()
        found = {t for t, marker in markers.items() if marker in body}
        assert "display:none" in found, path
        seen |= found
        document = lxml.html.document_fromstring(body)
        hidden = document.xpath("//*[contains(@style,'display:none') or contains(@style,'visibility:hidden') "
                                "or contains(@style,'font-size:0') or contains(@style,'-9999px') or @class='seo-block']")
        assert hidden and all(spam_word_share(e.text_content(), HiddenTextWriter.focus) > 0.6 for e in hidden)
        for element in hidden:
            element.drop_tree()
        assert spam_word_share(document.find("body").text_content()) < 0.1
    assert seen == set(HIDDEN_TECHNIQUES)


# -- calendar trap --------------------------------------------------------------------------------------


def test_calendar_is_unbounded_and_deterministic(world: World, server: SandboxServer) -> None:
    events = world.host(n.EVENTS)
    assert events.unbounded == (CALENDAR,) and events.in_unbounded("/calendar/2030/01/") and not events.in_unbounded("/")
    again = build_world(0, spam=True).host(n.EVENTS)
    for path in ("/calendar/", "/calendar/2026/12/", "/calendar/2026/12/05/", "/calendar/1/01/01/", "/calendar/99999999999/06/"):
        page = events.resolve(path)
        assert page is not None and page.status == 200, path
        assert page.body == events.resolve(path).body == again.resolve(path).body
    assert events.resolve("/calendar/") == events.resolve("/calendar/2026/12/")
    for bad in ("/calendar/0/01/", "/calendar/2026/13/", "/calendar/2026/02/29/", "/calendar/2026/1/", "/calendar/02026/01/", "/calendar/x/"):
        assert events.resolve(bad) is None, bad
    assert events.resolve("/calendar/2028/02/29/") is not None  # a leap day
    # Following "next month" never ends; "previous" ends at year 1.
    path = "/calendar/2026/12/"
    for _ in range(300):
        document = lxml.html.document_fromstring(events.resolve(path).body)
        (path,) = [a.get("href") for a in document.iter("a") if (a.text or "").endswith("\u2192")]
    assert path == "/calendar/2051/12/"
    assert b"Previous day" not in events.resolve("/calendar/1/01/01/").body
    assert "\u2190".encode() not in events.resolve("/calendar/1/01/").body.split(b"<table")[0]
    # A breadth-first walk from the entry keeps finding new calendar pages.
    seen, queue = set(), deque([server.url(n.EVENTS, "/calendar/")])
    while queue and len(seen) < 400:
        current = queue.popleft()
        if current in seen:
            continue
        seen.add(current)
        body = events.resolve(urlsplit(current).path).at_port(server.port).body
        queue.extend(u for u in hrefs(body, current) if u.startswith(server.url(n.EVENTS, CALENDAR)) and u not in seen)
    assert len(seen) == 400 and queue
    status, body = fetch(server, n.EVENTS, "/calendar/2999/07/14/")
    assert status == 200 and b"<h1>Sunday 14 July 2999</h1>" in body
    # Beyond datetime's years, weekdays follow the 400-year Gregorian cycle: 12026 is 2026 plus 25 cycles.
    assert b"<h1>Saturday 5 December 12026</h1>" in events.resolve("/calendar/12026/12/05/").body


# -- good, link-rich hosts --------------------------------------------------------------------------------


def test_good_hosts_with_many_links(world: World, truth: dict, server: SandboxServer) -> None:
    index = server.url(n.APIREF, "/genindex.html")
    assert truth["outcomes"][index] == "ok"
    body = world.host(n.APIREF).resolve("/genindex.html").body
    links = hrefs(body, index)
    assert len(links) >= 300 and all(host_of(u) == n.APIREF for u in links)
    assert spam_word_share(" ".join(visible_words(body))) < 0.05
    assert n.APIREF in truth["good_hosts"] and n.PORTAL in truth["good_hosts"]
    assert truth["host_depth"][n.APIREF] == 1


# -- command line ----------------------------------------------------------------------------------------------


def test_command_line_serves_the_full_world(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mirrorscope.sandbox", "--port", "0", "--out", str(tmp_path), "--full"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            banner = process.stdout.readline()
            assert "41 hosts on port" in banner, process.stderr.read()
            truth = json.loads((tmp_path / "truth.json").read_text())
            assert set(truth["spam_hosts"]) == SPAM_HOSTS and truth["features"] == ["hard-mirrors", "spam"]
            assert len((tmp_path / "hosts").read_text().splitlines()) == 41
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
