"""The real-pages world (`sandbox.real`): Debian's documentation served as sites, with planted cases.

Each world is built once per module: ``full`` for the ground truth of every
planted kind (``full_truth``), the small one (``world``) over real sockets. Needs
the documentation packages of `realpages.CORPUS` installed; when they are not,
the first test says which to install.
"""

from __future__ import annotations

import html
import http.client
import json
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import lxml.html
import pytest
from lxml import etree

from mirrorscope.sandbox import SandboxServer, World, build_real_world
from mirrorscope.sandbox import realnames as n
from mirrorscope.sandbox.real import FEATURES
from mirrorscope.sandbox.realpages import CORPUS, SITES, MissingPackages, iter_corpus_pages, missing_packages, site_files
from mirrorscope.sandbox.sites.realspam import CLOAKING_FOCUS, passages
from mirrorscope.sandbox.sites.spam import HIDDEN_TECHNIQUES, spam_word_share
from mirrorscope.sandbox.truth import BROWSER_USER_AGENT, USER_AGENT, decoded, visible_words
from mirrorscope.sandbox.vocab import SPAM_PHRASES
from tests.helpers import requires_real_pages

pytestmark = requires_real_pages

ROOT = Path(__file__).resolve().parent.parent
SPAM = {**{h: "link-farm" for h in n.FARM}, n.DOORWAY: "doorway", n.CLOAKING: "cloaking", n.HIDDEN_TEXT: "hidden-text"}
# host -> corpus sites it serves, in the full world
ORIGINALS = {
    n.DJANGO: ("django",), n.VIM: ("vim",), n.GNUPLOT: ("gnuplot",), n.MAXIMA: ("maxima",), n.POLICY: ("policy",),
    n.WERKZEUG: ("werkzeug",), n.JINJA: ("jinja2",), n.CLICK: ("click",),
    n.DEBREF: ("debian-reference-de", "debian-reference-es", "debian-reference-pt"), n.DEBREF_ZH: ("debian-reference-zh-tw",),
    n.DEVREF_FR: ("developers-reference-fr",), n.DEVREF_DE: ("developers-reference-de",), n.MAINT_FR: ("maint-guide-fr",),
    n.MAINT_ES: ("maint-guide-es",), n.FAQ_FR: ("debian-faq-fr",), n.FAQ_DE: ("debian-faq-de",), n.LOOKALIKE: ("debian-reference-it",),
}


@pytest.fixture(scope="module")
def full() -> World:
    """The full real world, not served: its ground truth has every planted kind."""
    return build_real_world(0)


@pytest.fixture(scope="module")
def full_truth(full: World) -> dict:
    return full.ground_truth(8080)


@pytest.fixture(scope="module")
def world() -> World:
    """The small real world, which conftest's ``server`` serves and ``truth`` describes."""
    return build_real_world(0, small=True)


def url(host: str, path: str = "/") -> str:
    return f"http://{host}:8080{path}"


def host_of(address: str) -> str:
    return urlsplit(address).hostname or ""


def fetch(server: SandboxServer, host: str, path: str, user_agent: str | None = None) -> tuple[int, str, bytes]:
    """(status, Content-Type, body) of one request over a real socket."""
    conn = http.client.HTTPConnection(server.ip_of(host), server.port, timeout=10)
    try:
        headers = {"Host": f"{host}:{server.port}"} | ({"User-Agent": user_agent} if user_agent else {})
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


# -- the corpus ---------------------------------------------------------------------------------


def test_corpus_is_installed_or_named() -> None:
    assert missing_packages() == []  # this module runs only then (tests.helpers.requires_real_pages)
    message = str(MissingPackages(["vim-doc", "gnuplot-doc"]))
    assert message == "real pages missing: apt-get install vim-doc gnuplot-doc"


def test_corpus_pages_cover_every_site() -> None:
    pages = Counter()
    generators, languages = set(), set()
    for key, generator, language, path, body in iter_corpus_pages():
        pages[key] += 1
        generators.add(generator)
        languages.add(language)
        assert path.endswith(".html") and body
    assert set(pages) == {s.key for s in CORPUS}
    assert pages["django"] == 692 and pages["gnuplot"] == 652 and pages["python3"] >= 500
    assert sum(pages.values()) >= 2600
    assert generators == {"sphinx", "latex2html", "texinfo", "docbook-xhtml", "vim2html"}
    assert languages == {"en", "de", "fr", "it", "es", "pt", "zh-tw"}
    zh = site_files("debian-reference-zh-tw")
    assert all(p.endswith(".zh-tw.html") for p in zh if p.endswith(".html")) and "debian-reference.css" in zh
    # Sphinx's _static symlinks into /usr/share/javascript are read through.
    assert site_files("werkzeug")["_static/jquery.js"].startswith(b"/*")


# -- the world ----------------------------------------------------------------------------------


def snapshot(world: World) -> list:
    """Everything a world serves, dynamic pages sampled."""
    out = []
    for h in world.hosts:
        samples = [h.resolve(p) for p in ("/p/7.html", "/calendar/2027/03/09/")] if h.dynamic else []
        browsed = [h.resolve(p, BROWSER_USER_AGENT) for p in sorted(h.resources)] if h.cloak else []
        out.append((h.name, h.ip, h.role, h.of, h.prefix, h.unbounded, sorted(h.resources.items()), samples, browsed))
    return out


def test_deterministic(full: World, world: World) -> None:
    assert snapshot(build_real_world(0, small=True)) == snapshot(world)
    assert snapshot(build_real_world(0)) == snapshot(full)
    assert snapshot(build_real_world(1, small=True)) != snapshot(world)  # the seed matters


def test_hosts_and_addresses(full: World, world: World) -> None:
    for each in (full, world):
        names = [h.name for h in each.hosts]
        assert len(names) == len(set(names)) and each.seed_paths == [(n.PORTAL, "/")]
        assert each.features == FEATURES
        for h in each.hosts:
            assert h.ip.startswith(("127.0.20.", "127.0.21.", "127.0.25.")), h.name
            assert h.resolve("/robots.txt").status == 200, h.name
            assert h.ip.startswith("127.0.25.") == (h.name in SPAM), h.name
    ips = {h.name: h.ip for h in full.hosts}
    assert ips[n.VIM] == ips[n.MAXIMA] and ips[n.MAINT_ES] == ips[n.MAINT_ES_ALIAS]
    assert sum(ip == ips[n.VIM] for ip in ips.values()) == 2
    for copy in (n.WERKZEUG_MIRROR, n.MAINT_FR_MIRROR, n.DEBREF_ZH_MIRROR, n.GNUPLOT_PARTIAL, n.VIM_ARCHIVE, n.FAQ_FR_RESERIALISED):
        assert ips[copy].startswith("127.0.21."), copy


def test_originals_serve_the_real_bytes(full: World, full_truth: dict) -> None:
    for name, keys in ORIGINALS.items():
        host = full.host(name)
        for key in keys:
            site = SITES[key]
            files = site_files(key)
            for path, body in files.items():
                served = host.resolve("/" + path)
                assert served.body == body, (name, path)
                if path.endswith(".html"):
                    assert served.content_type == site.html_type
                if path.endswith("/index.html"):
                    assert host.resolve("/" + path.removesuffix("index.html")) is served
            for path in sorted(p for p in files if p.endswith(".html"))[:: max(1, len(files) // 5)]:
                assert host.resolve("/" + path).body == (Path(site.directory) / path).read_bytes(), (name, path)
        start = SITES[keys[0]].start
        if start is not None:
            assert host.resolve("/").body == (Path(SITES[keys[0]].directory) / start).read_bytes(), name
    assert full.host(n.VIM).resolve("/index.html").content_type == "text/html"
    assert full.host(n.MAINT_FR).resolve("/index.fr.html").content_type == "application/xhtml+xml"
    assert full.host(n.DJANGO).resolve("/index.html").content_type == "text/html; charset=utf-8"
    # The policy host has no start page of its own: Apache-style indexes lead to everything.
    index = full.host(n.POLICY).resolve("/").body
    assert b"<title>Index of /</title>" in index and b'href="policy.html/"' in index and b'href="fhs/"' in index
    assert full_truth["outcomes"][url(n.POLICY, "/fhs/fhs-3.0.html")] == "ok"
    # robots.txt keeps crawlers out of Django's highlighted sources.
    assert b"Disallow: /_modules/" in full.host(n.DJANGO).resolve("/robots.txt").body
    assert full_truth["robots_disallowed"] and all(u.startswith(url(n.DJANGO, "/_modules/")) for u in full_truth["robots_disallowed"])


def test_originals_over_sockets(world: World, server: SandboxServer) -> None:
    for name, path, key, kind in (
        (n.MAINT_FR, "/start.fr.html", "maint-guide-fr", "application/xhtml+xml"),
        (n.DEBREF_ZH, "/ch01.zh-tw.html", "debian-reference-zh-tw", "text/html"),
        (n.WERKZEUG, "/_static/jquery.js", "werkzeug", "application/javascript"),
        (n.FAQ_DE, "/", "debian-faq-de", "text/html"),
    ):
        status, content_type, body = fetch(server, name, path)
        assert (status, content_type) == (200, kind)
        assert body == site_files(key)[SITES[key].start if path == "/" else path[1:]]


def test_latin1_and_xhtml_pages_are_read_right(full: World, full_truth: dict) -> None:
    digraph = full.host(n.VIM).resolve("/digraph.html")
    assert digraph.content_type == "text/html" and b"charset=ISO-8859-1" in digraph.body
    text = decoded(digraph.body, digraph.content_type)
    assert "\ufffd" not in text and "\u00e3" in text
    assert "\u00e3" in visible_words(digraph.body)
    assert full_truth["outcomes"][url(n.VIM, "/digraph.html")] == "ok"
    xhtml = full.host(n.MAINT_FR).resolve("/start.fr.html").body
    assert xhtml.startswith(b'<?xml version="1.0" encoding="UTF-8"')
    assert full_truth["outcomes"][url(n.MAINT_FR, "/start.fr.html")] == "ok"
    assert "d\u00e9veloppement" in visible_words(xhtml)
    # Served as application/xhtml+xml, a browser parses these pages as XML: the truth's
    # HTML parse must find the same links (DocBook writes <a id="x"/>, void in XML only).
    edges = {(s, t) for s, t in full_truth["edges"] if host_of(s) == n.MAINT_FR}
    for path in sorted(p for p in site_files("maint-guide-fr") if p.endswith(".html")):
        page = url(n.MAINT_FR, "/" + path)
        document = etree.fromstring(full.host(n.MAINT_FR).resolve("/" + path).body, etree.XMLParser(load_dtd=False, no_network=True))
        hrefs = [a.get("href") for a in document.iter("{http://www.w3.org/1999/xhtml}a") if a.get("href") is not None]
        targets = {urldefrag(urljoin(page, h.strip())).url for h in hrefs}
        assert {t for s, t in edges if s == page} == {t for t in targets if t.startswith(("http://", "https://"))}, path


# -- the planted mirrors ----------------------------------------------------------------------------


def test_every_mirror_kind_is_planted(full_truth: dict) -> None:
    mirrors = {(m["a"], m["b"]): m for m in full_truth["mirrors"]}
    expected = {
        (url(n.WERKZEUG), url(n.WERKZEUG_MIRROR)): ("exact", "full"),
        (url(n.MAINT_FR), url(n.MAINT_FR_MIRROR)): ("exact", "full"),
        (url(n.DEBREF_ZH), url(n.DEBREF_ZH_MIRROR)): ("exact", "full"),
        (url(n.JINJA), url(n.ARCHIVE, n.ARCHIVE_PREFIX)): ("prefix", "full"),
        (url(n.VIM), url(n.VIM_ARCHIVE, n.VIM_ARCHIVE_PREFIX)): ("prefix", "full"),
        (url(n.FAQ_DE), url(n.FAQ_DE_PARTIAL)): ("partial", "partial"),
        (url(n.GNUPLOT), url(n.GNUPLOT_PARTIAL)): ("partial", "partial"),
        (url(n.POLICY), url(n.POLICY_STALE)): ("stale", "partial"),
        (url(n.CLICK), url(n.CLICK_REPACKAGED)): ("repackaged", "full"),
        (url(n.FAQ_FR), url(n.FAQ_FR_RESERIALISED)): ("reserialised", "full"),
        (url(n.MAINT_ES), url(n.MAINT_ES_ALIAS)): ("alias", "full"),
        (url(n.DEBREF), url(n.DEBREF_RENAMED, n.DEBREF_RENAMED_PREFIX)): ("renamed", "full"),
    }
    assert {k: (m["kind"], m["level"]) for k, m in mirrors.items()} == expected
    for m in mirrors.values():
        assert m["shared"] >= 6 and m["text_kept"] <= m["shared"]
        if m["kind"] in ("exact", "prefix", "partial", "alias"):
            assert m["identical"] == m["text_kept"] == m["shared"]
        if m["kind"] in ("repackaged", "reserialised"):
            assert m["identical"] == 0 and m["text_kept"] == m["shared"] == m["a_pages"]
        if m["kind"] == "stale":
            assert m["b_pages"] < m["a_pages"] and m["identical"] == m["text_kept"] < m["shared"]
        if m["kind"] == "renamed":  # every page re-serialised at a new path; the entry page is the wiki's own
            assert m["identical"] == 0 and m["text_kept"] == m["shared"] - 1 == m["a_pages"] - 1
        if m["kind"] == "partial":
            assert 0.25 * m["a_pages"] <= m["b_pages"] <= 0.6 * m["a_pages"]
    assert mirrors[(url(n.MAINT_ES), url(n.MAINT_ES_ALIAS))]["same_ip"]
    assert not mirrors[(url(n.WERKZEUG), url(n.WERKZEUG_MIRROR))]["same_24"]


def links_into(truth: dict, host: str) -> set[str]:
    """Targets on `host` of links from other hosts' pages."""
    return {t for s, t in truth["edges"] if host_of(t) == host and host_of(s) != host}


def test_partial_mirror_root_is_the_originals_and_its_only_way_in(full: World, full_truth: dict) -> None:
    for original, partial in ((n.FAQ_DE, n.FAQ_DE_PARTIAL), (n.GNUPLOT, n.GNUPLOT_PARTIAL)):
        assert full.host(partial).resolve("/").body == full.host(original).resolve("/").body
        assert links_into(full_truth, partial) == {url(partial)}
        assert full_truth["outcomes"][url(partial)] == "ok"


def test_prefix_mirror_index_is_the_originals_home_linked_only_there(full: World, full_truth: dict) -> None:
    archive = full.host(n.ARCHIVE)
    assert archive.resolve(n.ARCHIVE_PREFIX).body == full.host(n.JINJA).resolve("/").body
    assert archive.resolve(n.ARCHIVE_PREFIX + "index.html").body == full.host(n.JINJA).resolve("/index.html").body
    copy = url(n.ARCHIVE, n.ARCHIVE_PREFIX)
    inbound = {t for s, t in full_truth["edges"] if t.startswith(copy) and not s.startswith(copy)}
    assert inbound == {copy}
    # The archive has pages of its own, outside the copy.
    assert sum(u.startswith(url(n.ARCHIVE)) and not u.startswith(copy) for u in full_truth["html_pages"]) >= 5


def test_copies_of_the_xhtml_and_the_chinese_sites(full: World, world: World, full_truth: dict) -> None:
    for each in (full, world):
        assert each.host(n.MAINT_FR_MIRROR).resources == each.host(n.MAINT_FR).resources
        assert each.host(n.DEBREF_ZH_MIRROR).resources == each.host(n.DEBREF_ZH).resources
    chinese = full.host(n.DEBREF_ZH_MIRROR).resolve("/ch01.zh-tw.html").body
    assert chinese.startswith(b"<?xml") and any(re.search(r"[\u4e00-\u9fff]", w) for w in visible_words(chinese))
    assert full_truth["outcomes"][url(n.MAINT_FR_MIRROR, "/index.fr.html")] == "ok"
    # The Chinese copy is the deep one: one link, from a page three below the portal.
    into = [(s, t) for s, t in full_truth["edges"] if host_of(t) == n.DEBREF_ZH_MIRROR and host_of(s) != n.DEBREF_ZH_MIRROR]
    assert into == [(url(n.ARCHIVE, "/mirrors/asia.html"), url(n.DEBREF_ZH_MIRROR))]
    assert full_truth["host_depth"][n.DEBREF_ZH_MIRROR] == 4 and full_truth["host_depth"][n.DEBREF_ZH] == 1


def test_stale_repackaged_and_reserialised_copies(full: World, full_truth: dict) -> None:
    policy, stale = full.host(n.POLICY), full.host(n.POLICY_STALE)
    werkzeug_text = {t for p in passages(site_files("werkzeug")) for t in p.paragraphs}
    edited = [p for p, r in stale.resources.items() if r.body != policy.resources[p].body]
    assert len(edited) >= 3
    for path in edited:
        before, after = (set(re.findall(rb"<p>[^<]*</p>", h.resolve(path).body)) for h in (policy, stale))
        (new,) = after - before
        assert html.unescape(new[3:-4].decode()) in werkzeug_text  # a real paragraph from elsewhere
    click, repackaged = full.host(n.CLICK), full.host(n.CLICK_REPACKAGED)
    page = lxml.html.document_fromstring(repackaged.resolve("/quickstart.html").body)
    assert page.findtext(".//title").endswith(" | DevSnippets Hub")
    assert len(page.xpath("//div[contains(@class, 'ds-ad')]")) == 3
    assert " ".join(visible_words(click.resolve("/quickstart.html").body)) in " ".join(visible_words(repackaged.resolve("/quickstart.html").body))
    faq, copy = full.host(n.FAQ_FR), full.host(n.FAQ_FR_RESERIALISED)
    for path in ("/index.fr.html", "/basic-defs.fr.html"):
        a, b = faq.resolve(path).body, copy.resolve(path).body
        assert a.startswith(b"<?xml") and b.startswith(b"<!doctype html>") and visible_words(a) == visible_words(b)


# -- decoys ------------------------------------------------------------------------------------------


def test_decoys(full: World, full_truth: dict) -> None:
    kinds = {(d["a"], d["b"]): d["kind"] for d in full_truth["decoy_kinds"]}
    assert [[a, b] for a, b in kinds] == full_truth["decoys"]
    assert set(kinds.values()) == {"translation", "same-generator", "shared-ip", "shared-common-pages", "lookalike-name", "reused-pages"}
    for pair, kind in {
        (n.DEVREF_FR, n.DEVREF_DE): "translation",
        (n.WERKZEUG, n.JINJA): "same-generator",
        (n.VIM, n.MAXIMA): "shared-ip",
        (n.BLOG, n.REUSE): "shared-common-pages",
        (n.DJANGO, n.LOOKALIKE): "lookalike-name",
        (n.DJANGO, n.REUSE): "reused-pages",
    }.items():
        assert kinds[pair] == kind, pair
    mirrored = {(host_of(m["a"]), host_of(m["b"])) for m in full_truth["mirrors"]}
    assert not mirrored & {(a, b) for a, b in kinds} and not mirrored & {(b, a) for a, b in kinds}


def test_translations_have_the_same_paths_and_other_words(full: World, full_truth: dict) -> None:
    paths = {h: {urlsplit(u).path for u in full_truth["html_pages"] if host_of(u) == h} for h in (n.DEVREF_FR, n.DEVREF_DE)}
    assert paths[n.DEVREF_FR] == paths[n.DEVREF_DE] and len(paths[n.DEVREF_FR]) >= 10
    fr, de = (set(visible_words(full.host(h).resolve("/index.html").body)) for h in (n.DEVREF_FR, n.DEVREF_DE))
    assert {"le", "les", "des"} <= fr and {"der", "die", "und"} <= de


def test_same_generator_sites_share_static_files_and_search_page(full: World) -> None:
    werkzeug, jinja = full.host(n.WERKZEUG), full.host(n.JINJA)
    shared = [p for p in werkzeug.resources if p.startswith("/_static/") and jinja.resolve(p) is not None and jinja.resolve(p).body == werkzeug.resolve(p).body]
    assert len(shared) >= 8
    a, b = (set(visible_words(h.resolve("/search.html").body)) for h in (werkzeug, jinja))
    assert len(a & b) >= 0.7 * len(a | b)
    blog, reuse = full.host(n.BLOG), full.host(n.REUSE)
    for path in ("/license.html", "/privacy.html", "/contact.html"):
        assert blog.resolve(path).body == reuse.resolve(path).body


def test_reposts_and_lookalike(full: World, full_truth: dict) -> None:
    reposts = [urlsplit(u).path for u in full_truth["html_pages"] if u.startswith(url(n.REUSE, "/reposts/")) and u.endswith(".html")]
    assert len(reposts) == 3
    django = full.host(n.DJANGO)
    for path in reposts:
        article = lxml.html.document_fromstring(full.host(n.REUSE).resolve(path).body).find(".//article")
        words = " ".join(visible_words(lxml.html.tostring(article)))
        sources = [p for p in django.resources if p.startswith("/topics/") and p.endswith("/" + path.rsplit("/", 1)[1])]
        assert any(words in " ".join(visible_words(django.resolve(p).body)) for p in sources), path
    assert n.LOOKALIKE.replace("-", ".", 1) == n.DJANGO
    assert full.host(n.LOOKALIKE).resolve("/").body == site_files("debian-reference-it")["index.it.html"]


# -- spam and the trap ---------------------------------------------------------------------------------


def test_spam_hosts_and_trap_in_the_truth(full_truth: dict, truth: dict, server: SandboxServer) -> None:
    for t in (full_truth, truth):
        assert t["spam"] == SPAM and set(t["spam_hosts"]) == set(SPAM)
        assert t["trap_hosts"] == {n.EVENTS: ["/calendar/"], **{h: ["/"] for h in n.FARM}}
        assert t["unbounded"][n.EVENTS]["kind"] == "trap" and t["unbounded"][n.EVENTS]["entries"]
        assert len(t["unbounded"][n.FARM[0]]["entries"]) == 1 and t["unbounded"][n.FARM[0]]["kind"] == "link-farm"
        assert n.WERKZEUG in t["good_hosts"] and n.EVENTS in t["good_hosts"] and not set(SPAM) & set(t["good_hosts"])
        assert t["features"] == list(FEATURES)
    for h in (n.DOORWAY, n.CLOAKING, n.HIDDEN_TEXT):
        assert sum(host_of(u) == h for u in truth["html_pages"]) >= 8, h
    status, _, body = fetch(server, n.FARM[3], "/p/123456789012.html")
    assert status == 200 and body.count(b"<a href=") >= 1000


def test_spam_text_is_real_paragraphs_stuffed_with_keywords(world: World) -> None:
    pool = {t for p in passages(site_files("policy")) for t in p.paragraphs}
    phrases = "|".join(sorted(map(re.escape, {*SPAM_PHRASES, *CLOAKING_FOCUS}), key=len, reverse=True))
    cloaking = world.host(n.CLOAKING)
    for path in ("/", "/about.html"):
        document = lxml.html.document_fromstring(cloaking.resolve(path, USER_AGENT).body)
        stuffed = [p.text_content() for p in document.iter("p") if not p.get("class")]
        assert len(stuffed) == 4
        for text in stuffed:
            assert " ".join(re.sub(rf"(?:^| )(?:{phrases})(?= |$)", " ", text).split()) in pool
            assert spam_word_share(text, CLOAKING_FOCUS) > 0.2
        browser = cloaking.resolve(path, BROWSER_USER_AGENT).body
        assert spam_word_share(" ".join(visible_words(browser))) < 0.05


def test_cloaking_answers_by_user_agent(world: World, truth: dict, server: SandboxServer) -> None:
    paths = sorted(urlsplit(u).path for u in truth["html_pages"] if host_of(u) == n.CLOAKING)
    assert len(paths) >= 8
    for path in paths:
        _, _, browser = fetch(server, n.CLOAKING, path, BROWSER_USER_AGENT)
        _, _, crawler = fetch(server, n.CLOAKING, path, "Mozilla/5.0 (compatible; mirrorscope-bot/0.1; +https://x.test)")
        # A crawler that does not say it is one is shown what people see.
        _, _, undeclared = fetch(server, n.CLOAKING, path, "mirrorscope/0.1 (+https://x.test)")
        assert browser != crawler and undeclared == browser
        assert browser == world.host(n.CLOAKING).resolve(path, BROWSER_USER_AGENT).at_port(server.port).body
    assert sorted(truth["cloaked"]) == sorted(server.url(n.CLOAKING, p) for p in paths)


def test_hidden_text_pages_are_real_pages_with_hidden_keywords(world: World) -> None:
    host = world.host(n.HIDDEN_TEXT)
    pages = sorted(p for p in host.resources if p.startswith("/node"))
    assert len(pages) == 10
    markers = {
        "display:none": 'style="display:none"', "visibility:hidden": 'style="visibility:hidden"', "font-size:0": "font-size:0px",
        "same-colour": 'style="color:#ffffff"', "off-screen": "left:-9999px", "css-class": ".seo-block{display:none}",
    }
    seen = set()
    for path in pages:
        body = host.resolve(path).body.decode()
        assert "Converted with LaTeX2HTML" in body
        seen |= {t for t, marker in markers.items() if marker in body}
        for href in lxml.html.document_fromstring(body).xpath("//a/@href"):
            target = urljoin(f"http://h{path}", href.split("#")[0])
            assert not target.startswith("http://h/") or host.resolve(urlsplit(target).path) is not None, (path, href)
    assert seen == set(HIDDEN_TECHNIQUES)


def test_camouflage_footer_links_one_good_host_many_times(full_truth: dict, full: World) -> None:
    """Spam pages copy Pallets' footer: >= 77 links to the Werkzeug host, one anchor text."""
    anchors = Counter()
    for address in full_truth["html_pages"]:
        if host_of(address) not in SPAM:
            continue
        page = full.host(host_of(address)).resolve(urlsplit(address).path, USER_AGENT).at_port(8080)
        for a in lxml.html.document_fromstring(page.body).iter("a"):
            if host_of(urljoin(address, a.get("href", ""))) == n.WERKZEUG:
                anchors[a.text_content()] += 1
    assert list(anchors) == ["Pallets"] and anchors["Pallets"] >= 77
    assert n.WERKZEUG in full_truth["good_hosts"]


# -- size, and the command line -------------------------------------------------------------------------


def test_the_world_fits_a_crawl_budget(full_truth: dict, truth: dict) -> None:
    assert 2500 <= full_truth["counts"]["pages"] <= 6000
    assert truth["counts"]["pages"] <= 600
    reached = {host_of(u) for u in full_truth["pages"]}
    assert reached == set(full_truth["hosts"]) - set(n.FARM[1:])  # farm hosts past the entry are never walked


def test_command_line_serves_the_small_real_world(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mirrorscope.sandbox", "--real", "--small", "--port", "0", "--out", str(tmp_path)]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            banner = process.stdout.readline()
            assert "23 hosts on port" in banner, process.stderr.read()
            truth = json.loads((tmp_path / "truth.json").read_text())
            assert truth["features"] == list(FEATURES) and n.CLOAKING in truth["spam_hosts"]
            assert len((tmp_path / "hosts").read_text().splitlines()) == 23
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
    bad = subprocess.run([sys.executable, "-m", "mirrorscope.sandbox", "--small", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
