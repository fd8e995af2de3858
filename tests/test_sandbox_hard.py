"""The harder mirror sandbox (`build_world(..., hard_mirrors=True)`): hosts, copies, decoys, ground truth.

Also pins the standard world: `build_world(0)` must keep exactly the ground
truth it had before the optional parts were added (digests below, taken from
the code before that change). If the standard world is ever changed on
purpose, update the digests and re-run tests/test_crawl.py.
"""

from __future__ import annotations

import hashlib
import http.client
import itertools
import json
import re
from urllib.parse import urlsplit

import lxml.html
import pytest

from mirrorscope.sandbox import SandboxServer, World, build_full_world, build_world
from mirrorscope.sandbox import names as n
from mirrorscope.sandbox.truth import visible_words
from tests.helpers import html_paths

# sha256 of json.dumps(ground_truth(8080), sort_keys=True), before the harder worlds existed.
STANDARD_TRUTH_DIGESTS = {
    "hostile": "4ee022ba4786d85d9540791c285ef4e89d04503e9cf47b8975a786d95e6f4ad4",
    "no-hostile": "2ee38c1fd901307855b388c1254d109994aef9fbb7db115a777329ee9963cbd3",
}
# sha256 over every host's name, address, role and every resource's bytes, `build_world(0, hostile=False)`.
STANDARD_RESOURCES_DIGEST = "0a1b1b0f91869ce0190252005cc6ef4ffb94189633c605c21ce8e5383a00cd8a"
STANDARD_COUNTS = {"hosts": 12, "pages": 395, "html_pages": 365, "links": 6104, "edges": 4484}

NEW_HOSTS = {
    n.REPACKAGED: ("repackaged-mirror", n.NEWS),
    n.WIKI: ("original", None),
    n.WIKI_COPY: ("reserialised-mirror", n.WIKI),
    n.KAYAK: ("original", None),
    n.KAYAK_STALE: ("stale-mirror", n.KAYAK),
    n.LIBRARY: ("original", None),
    n.LIBRARY_ALIAS: ("alias", n.LIBRARY),
    n.OBSERVATORY: ("original", None),
    n.OBSERVATORY_MIRROR: ("mirror", n.OBSERVATORY),
    n.LOOKALIKE: ("decoy", n.DOCS),
    **{h: ("other", None) for h in n.VHOSTS},
    n.TEMPLATE_A: ("other", None),
    n.TEMPLATE_B: ("decoy", n.TEMPLATE_A),
    n.COMMON_A: ("other", None),
    n.COMMON_B: ("decoy", n.COMMON_A),
    n.REUSE: ("decoy", n.RECIPES),
}


@pytest.fixture(scope="module")
def world() -> World:
    """The harder world, which conftest's ``server`` serves and ``truth`` describes."""
    return build_world(0, hard_mirrors=True)


def shingles(body: bytes, k: int = 8) -> set[tuple[str, ...]]:
    words = visible_words(body)
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def main_shingles(body: bytes, k: int = 8) -> set[tuple[str, ...]]:
    """Shingles of the page's <main> (or whole body when it has none)."""
    document = lxml.html.document_fromstring(body)
    main = document.find(".//main")
    words = re.findall(r"\w+", (main if main is not None else document).text_content().lower())
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def host_shingles(world: World, truth: dict, host: str, paths: list[str] | None = None) -> set[tuple[str, ...]]:
    site = world.host(host)
    out: set[tuple[str, ...]] = set()
    for path in paths if paths is not None else html_paths(truth, host):
        out |= shingles(site.resolve(path).body)
    return out


# -- the standard world is untouched -----------------------------------------------------


def _resources_digest(world: World) -> str:
    digest = hashlib.sha256()
    for host in world.hosts:
        digest.update(f"{host.name}|{host.ip}|{host.role}|{host.of}|{host.prefix}\n".encode())
        for path in sorted(host.resources):
            r = host.resources[path]
            digest.update(path.encode())
            digest.update(repr((r.status, r.content_type, r.headers, r.delay, r.reset)).encode())
            digest.update(hashlib.sha256(r.body).digest())
    return digest.hexdigest()


def test_standard_world_ground_truth_is_unchanged() -> None:
    for label, world in (
        ("hostile", build_world(0)),
        ("hostile", build_world(0, hostile=True, hard_mirrors=False, spam=False)),
        ("no-hostile", build_world(0, hostile=False)),
    ):
        assert world.features == () and world.decoy_pairs == []
        truth = world.ground_truth(8080)
        if label == "hostile":
            assert truth["counts"] == STANDARD_COUNTS
        text = json.dumps(truth, sort_keys=True)
        assert hashlib.sha256(text.encode()).hexdigest() == STANDARD_TRUTH_DIGESTS[label], label
    assert _resources_digest(build_world(0, hostile=False)) == STANDARD_RESOURCES_DIGEST


def test_standard_hosts_keep_their_bytes_in_the_larger_worlds(world: World) -> None:
    standard = build_world(0)
    full = build_full_world(0)
    for bigger in (world, full):
        assert [h.name for h in bigger.hosts[: len(standard.hosts)]] == [h.name for h in standard.hosts]
        for old, new in zip(standard.hosts, bigger.hosts, strict=False):
            assert (new.ip, new.role, new.of, new.prefix) == (old.ip, old.role, old.of, old.prefix)
            if old.name != n.PORTAL:
                assert new.resources == old.resources, old.name
        # The portal only gains listings: every link it had, it still has.
        old_portal, new_portal = standard.host(n.PORTAL), bigger.host(n.PORTAL)
        for path, resource in old_portal.resources.items():
            old_links = set(re.findall(rb'href="([^"]*)"', resource.body))
            assert old_links <= set(re.findall(rb'href="([^"]*)"', new_portal.resolve(path).body)), path


# -- hosts and addresses ----------------------------------------------------------------------


def test_every_new_host_is_reachable_with_its_role(world: World, truth: dict) -> None:
    reached = {urlsplit(u).hostname for u in truth["html_pages"]}
    assert reached == {h.name for h in world.hosts}
    for name, (role, of) in NEW_HOSTS.items():
        info = truth["hosts"][name]
        assert (info["role"], info["of"], info["prefix"]) == (role, of, "/"), name
        assert len(html_paths(truth, name)) >= 8, name
    assert truth["features"] == ["hard-mirrors"]
    assert 800 <= truth["counts"]["pages"] <= 1000


def test_addresses(world: World) -> None:
    ips = {h.name: h.ip for h in world.hosts}
    for ip in ips.values():
        assert ip.startswith("127.") and not ip.startswith("127.0.0.")
    same24 = lambda a, b: ips[a].rsplit(".", 1)[0] == ips[b].rsplit(".", 1)[0]  # noqa: E731
    assert same24(n.KAYAK, n.KAYAK_STALE) and ips[n.KAYAK] != ips[n.KAYAK_STALE]
    assert same24(n.NEWS, n.REPACKAGED)
    assert not same24(n.WIKI, n.WIKI_COPY) and ips[n.WIKI_COPY].startswith("127.0.9.")
    assert not same24(n.OBSERVATORY, n.OBSERVATORY_MIRROR)
    assert ips[n.LIBRARY] == ips[n.LIBRARY_ALIAS]
    assert len({ips[h] for h in n.VHOSTS}) == 1
    assert len({ips[h] for h in n.VHOSTS} | {ips[n.LIBRARY]}) == 2  # the vhost address is theirs alone


def test_new_hosts_are_served_over_sockets(world: World, server: SandboxServer, truth: dict) -> None:
    for name in (n.REPACKAGED, n.WIKI_COPY, n.KAYAK_STALE, n.LIBRARY_ALIAS, n.OBSERVATORY_MIRROR, n.VHOSTS[2], n.REUSE):
        conn = http.client.HTTPConnection(server.ip_of(name), server.port, timeout=10)
        try:
            for path in html_paths(truth, name)[:5]:
                conn.request("GET", path, headers={"Host": f"{name}:{server.port}"})
                response = conn.getresponse()
                assert response.status == 200
                assert response.read() == world.host(name).resolve(path).at_port(server.port).body
        finally:
            conn.close()


# -- the mirror pairs ---------------------------------------------------------------------------


def test_ground_truth_mirror_pairs(truth: dict, server: SandboxServer) -> None:
    url = server.url
    mirrors = {(m["a"], m["b"]): m for m in truth["mirrors"]}
    expected = {
        (url(n.DOCS), url(n.DOCS_MIRROR)): ("exact", "full"),
        (url(n.RECIPES), url(n.ARCHIVE, n.ARCHIVE_PREFIX)): ("prefix", "full"),
        (url(n.UNIVERSITY), url(n.ALUMNI)): ("partial", "partial"),
        (url(n.NEWS), url(n.REPACKAGED)): ("repackaged", "full"),
        (url(n.WIKI), url(n.WIKI_COPY)): ("reserialised", "full"),
        (url(n.KAYAK), url(n.KAYAK_STALE)): ("stale", "partial"),
        (url(n.LIBRARY), url(n.LIBRARY_ALIAS)): ("alias", "full"),
        (url(n.OBSERVATORY), url(n.OBSERVATORY_MIRROR)): ("exact", "full"),
    }
    assert {k: (m["kind"], m["level"]) for k, m in mirrors.items()} == expected
    for m in mirrors.values():
        assert m["shared"] >= 20 and m["text_kept"] <= m["shared"]
        if m["kind"] in ("exact", "alias", "partial"):
            assert m["identical"] == m["text_kept"] == m["shared"]
        if m["kind"] in ("repackaged", "reserialised"):
            assert m["identical"] == 0 and m["text_kept"] == m["shared"] == m["a_pages"]
        if m["kind"] == "stale":
            assert m["b_pages"] < m["a_pages"] and m["identical"] == m["text_kept"] < m["shared"]
    assert mirrors[(url(n.LIBRARY), url(n.LIBRARY_ALIAS))]["same_ip"]
    assert not mirrors[(url(n.WIKI), url(n.WIKI_COPY))]["same_24"]
    assert mirrors[(url(n.KAYAK), url(n.KAYAK_STALE))]["same_24"]
    # No decoy pair is a mirror pair.
    hosts_of = {(urlsplit(m["a"]).hostname, urlsplit(m["b"]).hostname) for m in truth["mirrors"]}
    for a, b in truth["decoys"]:
        assert (a, b) not in hosts_of and (b, a) not in hosts_of


def test_repackaged_pages_wrap_the_original_text(world: World, truth: dict) -> None:
    news, copy = world.host(n.NEWS), world.host(n.REPACKAGED)
    wrappers = set()
    paths = html_paths(truth, n.NEWS)
    assert len(paths) >= 30
    for path in paths:
        a, b = news.resolve(path).body, copy.resolve(path).body
        assert a != b
        title_a = lxml.html.document_fromstring(a).findtext(".//title")
        title_b = lxml.html.document_fromstring(b).findtext(".//title")
        assert title_a != title_b and title_a.split(" \u2013 ")[0] in title_b
        words_a, words_b = visible_words(a), visible_words(b)
        text_a, text_b = " ".join(words_a), " ".join(words_b)
        assert text_a in text_b
        before, after = text_b.split(text_a, 1)
        wrappers.add((before, after))
        assert 10 <= len(before.split()) + len(after.split()) <= 150
    assert len(wrappers) == 1  # the same chrome on every page
    # The copy also has pages of its own, at paths the original lacks.
    assert {"/coastwire/about.html", "/coastwire/advertise.html"} <= set(html_paths(truth, n.REPACKAGED)) - set(paths)


def test_reserialised_pages_keep_text_and_links_but_no_bytes(world: World, truth: dict) -> None:
    wiki, copy = world.host(n.WIKI), world.host(n.WIKI_COPY)
    paths = html_paths(truth, n.WIKI)
    assert paths == html_paths(truth, n.WIKI_COPY)
    for path in paths:
        a, b = wiki.resolve(path).body, copy.resolve(path).body
        assert a != b and b"<!--" in a and b"<!--" not in b
        assert visible_words(a) == visible_words(b)
        hrefs = lambda body: [e.get("href") for e in lxml.html.document_fromstring(body).iter("a")]  # noqa: E731
        assert hrefs(a) == hrefs(b)
        assert b.count(b"<script") == a.count(b"<script") + 2
        assert b"\n    <" in b  # re-indented
        # Attributes come in another order.
        assert b'<header id="masthead" class="site-header" role="banner">' in a
        assert b'<header role="banner" class="site-header" id="masthead">' in b
    for path, resource in wiki.resources.items():
        assert copy.resolve(path).body != resource.body, path  # robots.txt too


def test_stale_copy_misses_and_edits_pages(world: World, truth: dict, server: SandboxServer) -> None:
    kayak, stale = world.host(n.KAYAK), world.host(n.KAYAK_STALE)
    original = html_paths(truth, n.KAYAK)
    missing = [p for p in original if stale.resolve(p) is None]
    kept = [p for p in original if stale.resolve(p) is not None]
    edited = [p for p in kept if stale.resolve(p).body != kayak.resolve(p).body]
    assert 3 <= len(missing) <= 0.35 * len(original)
    assert 3 <= len(edited) <= 0.5 * len(kept)
    assert all(not p.endswith("/") for p in missing)  # index pages stay
    for path in missing:
        assert truth["outcomes"][server.url(n.KAYAK_STALE, path)] == "http-404"
    for path in edited:
        a, b = kayak.resolve(path).body, stale.resolve(path).body
        pa, pb = re.findall(rb"<p>.*?</p>", a), re.findall(rb"<p>.*?</p>", b)
        assert len(pa) == len(pb) and sum(x != y for x, y in zip(pa, pb, strict=True)) == 1
        assert re.sub(rb"<p>.*?</p>", b"", a) == re.sub(rb"<p>.*?</p>", b"", b)


def test_alias_is_the_same_site_under_another_name(world: World, truth: dict) -> None:
    library, alias = world.host(n.LIBRARY), world.host(n.LIBRARY_ALIAS)
    assert alias.ip == library.ip and alias.resources is library.resources
    assert html_paths(truth, n.LIBRARY) == html_paths(truth, n.LIBRARY_ALIAS)


def test_deep_mirror_has_one_deep_link(world: World, truth: dict, server: SandboxServer) -> None:
    into = [(s, t) for s, t in truth["edges"] if urlsplit(t).hostname == n.OBSERVATORY_MIRROR and urlsplit(s).hostname != n.OBSERVATORY_MIRROR]
    assert into == [(server.url(n.OBSERVATORY, "/about/links.html"), server.url(n.OBSERVATORY_MIRROR))]
    assert truth["host_depth"][n.OBSERVATORY_MIRROR] >= 3
    assert truth["host_depth"][n.OBSERVATORY] == 1
    assert world.host(n.OBSERVATORY_MIRROR).resources == world.host(n.OBSERVATORY).resources


# -- decoys ---------------------------------------------------------------------------------------


def test_ground_truth_decoys(truth: dict) -> None:
    kinds = {(d["a"], d["b"]): d["kind"] for d in truth["decoy_kinds"]}
    assert [[a, b] for a, b in kinds] == truth["decoys"]
    expected = {
        (n.DOCS, n.DECOY): "same-paths",
        (n.DOCS_MIRROR, n.DECOY): "same-paths",
        (n.DOCS, n.LOOKALIKE): "lookalike-name",
        (n.DOCS_MIRROR, n.LOOKALIKE): "lookalike-name",
        (n.TEMPLATE_A, n.TEMPLATE_B): "shared-template",
        (n.COMMON_A, n.COMMON_B): "shared-common-pages",
        (n.RECIPES, n.REUSE): "reused-pages",
        (n.ARCHIVE, n.REUSE): "reused-pages",
        (n.BIRDERS, n.HOMEPAGE): "shared-ip",
        **{pair: "shared-ip" for pair in itertools.combinations(n.VHOSTS, 2)},
    }
    assert kinds == expected


def test_virtual_hosts_share_an_address_and_nothing_else(world: World, truth: dict) -> None:
    sets = {h: host_shingles(world, truth, h) for h in n.VHOSTS}
    for a, b in itertools.combinations(n.VHOSTS, 2):
        assert len(sets[a] & sets[b]) <= 0.01 * min(len(sets[a]), len(sets[b])), (a, b)


def test_lookalike_name_unrelated_content(world: World, truth: dict) -> None:
    assert n.LOOKALIKE.replace("-", ".") == n.DOCS
    docs = host_shingles(world, truth, n.DOCS)
    lookalike = host_shingles(world, truth, n.LOOKALIKE)
    assert len(docs & lookalike) <= 0.01 * len(lookalike)
    generic = {"/", "/about.html", "/contact.html", "/robots.txt"}
    assert not (set(html_paths(truth, n.LOOKALIKE)) - generic) & set(html_paths(truth, n.DOCS))


def test_shared_template_shares_chrome_not_content(world: World, truth: dict) -> None:
    a_paths, b_paths = html_paths(truth, n.TEMPLATE_A), html_paths(truth, n.TEMPLATE_B)
    boiler = "cookie settings at any time"
    for host, paths in ((n.TEMPLATE_A, a_paths), (n.TEMPLATE_B, b_paths)):
        for path in paths:
            body = world.host(host).resolve(path).body.decode()
            assert boiler in body and "Made with SiteSmith" in body and 'class="ss-sidebar"' in body
    main_a = set().union(*(main_shingles(world.host(n.TEMPLATE_A).resolve(p).body) for p in a_paths))
    main_b = set().union(*(main_shingles(world.host(n.TEMPLATE_B).resolve(p).body) for p in b_paths))
    assert len(main_a & main_b) <= 0.01 * min(len(main_a), len(main_b))
    # The whole pages do share text: the template's.
    whole_a = host_shingles(world, truth, n.TEMPLATE_A)
    whole_b = host_shingles(world, truth, n.TEMPLATE_B)
    assert len(whole_a & whole_b) >= 100


def test_common_pages_are_the_only_thing_shared(world: World, truth: dict) -> None:
    a, b = world.host(n.COMMON_A), world.host(n.COMMON_B)
    common = {"/license.html", "/privacy.html", "/contact.html"}
    both = set(html_paths(truth, n.COMMON_A)) & set(html_paths(truth, n.COMMON_B))
    identical = {p for p in both if a.resolve(p).body == b.resolve(p).body}
    assert identical == common
    rest_a = host_shingles(world, truth, n.COMMON_A, [p for p in html_paths(truth, n.COMMON_A) if p not in common])
    rest_b = host_shingles(world, truth, n.COMMON_B, [p for p in html_paths(truth, n.COMMON_B) if p not in common])
    assert len(rest_a & rest_b) <= 0.01 * min(len(rest_a), len(rest_b))
    assert len(common) / len(html_paths(truth, n.COMMON_A)) < 0.3


def test_reused_pages_are_about_a_tenth(world: World, truth: dict) -> None:
    recipes, reuse = world.host(n.RECIPES), world.host(n.REUSE)
    recipe_paths = html_paths(truth, n.RECIPES)
    reposts = [p for p in html_paths(truth, n.REUSE) if p.startswith("/reposts/") and p.endswith(".html")]
    assert len(reposts) == 4 and 0.05 <= len(reposts) / len(recipe_paths) <= 0.15
    originals = {p: " ".join(visible_words(recipes.resolve(p).body)) for p in recipe_paths}
    for path in reposts:
        article = lxml.html.document_fromstring(reuse.resolve(path).body).find(".//article")
        words = " ".join(w for t in article.itertext() for w in re.findall(r"\w+", t.lower()))
        sources = [p for p, text in originals.items() if words in text]
        assert len(sources) == 1 and sources[0].rsplit("/", 1)[1] == path.rsplit("/", 1)[1]
        assert reuse.resolve(path).body != recipes.resolve(sources[0]).body
    own = [p for p in html_paths(truth, n.REUSE) if not p.startswith("/reposts/")]
    assert len(host_shingles(world, truth, n.REUSE, own) & host_shingles(world, truth, n.RECIPES)) <= 5
