"""Tests of the sandbox: world content, ground truth, and the loopback server.

Real sockets on 127.0.1.x, no mocks. Module-scoped fixtures keep the file fast:
the standard world is built once and served once for most tests.
"""

from __future__ import annotations

import http.client
import itertools
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import zlib
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
import pytest

from mirrorscope.sandbox import SandboxServer, World, build_linkheavy_world, build_world
from mirrorscope.sandbox import names
from mirrorscope.sandbox.markup import MIN_PAGE_BYTES, rel
from mirrorscope.sandbox.sites.hostile import BOMB_INFLATED_BYTES, EXPECTED
from mirrorscope.sandbox.text import Prose
from tests.helpers import html_paths

ROOT = Path(__file__).resolve().parent.parent
ORIGINALS = (names.DOCS, names.RECIPES, names.UNIVERSITY, names.NEWS)


def fetch(ip: str, port: int, host: str, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One request to `ip` with an explicit Host header."""
    conn = http.client.HTTPConnection(ip, port, timeout=10)
    try:
        conn.request(method, path, headers={"Host": f"{host}:{port}"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def shingles(html: bytes, k: int = 10) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", lxml.html.document_fromstring(html).text_content().lower())
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


# -- world content -------------------------------------------------------------


def test_same_seed_same_bytes_different_seed_different_text(world: World) -> None:
    again = build_world(0)
    assert [(h.name, h.ip, h.role) for h in again.hosts] == [(h.name, h.ip, h.role) for h in world.hosts]
    for a, b in zip(world.hosts, again.hosts, strict=True):
        assert a.resources == b.resources, a.name
    other = build_world(1)
    for name in ORIGINALS:
        assert other.host(name).resolve("/").body != world.host(name).resolve("/").body
    first_words = shingles(world.host(names.RECIPES).resolve("/about.html").body, 5)
    other_words = shingles(other.host(names.RECIPES).resolve("/about.html").body, 5)
    assert len(first_words & other_words) < 0.2 * len(first_words)


def test_prose_paragraphs_share_no_long_phrases() -> None:
    prose = Prose("cooking", random.Random("test"))
    paragraphs = []
    for _ in range(30):
        prose.new_page()
        paragraphs.append(" ".join(prose.paragraphs(3)))
    sets = [shingles(f"<p>{p}</p>".encode()) for p in paragraphs]
    shared = sum(len(a & b) for a, b in itertools.combinations(sets, 2))
    assert shared <= 2


@pytest.mark.parametrize("host", ORIGINALS)
def test_pages_of_a_site_share_few_shingles(world: World, truth: dict, host: str) -> None:
    site = world.host(host)
    sets = {p: shingles(site.resolve(p).body) for p in html_paths(truth, host)}
    overlaps = [len(sets[a] & sets[b]) / min(len(sets[a]), len(sets[b])) for a, b in itertools.combinations(sets, 2)]
    assert len(sets) >= 30
    assert sum(overlaps) / len(overlaps) < 0.05
    # Pages that list the same things (e.g. two module indexes) may overlap; few pairs do.
    assert sum(o >= 0.05 for o in overlaps) <= 0.01 * len(overlaps) + 2


def test_page_sizes(world: World, truth: dict) -> None:
    for host in world.hosts:
        if host.role == "hostile":
            continue
        for path in html_paths(truth, host.name):
            size = len(host.resolve(path).body)
            assert MIN_PAGE_BYTES <= size <= 20 * 1024, (host.name, path, size)


def test_mirrors_are_byte_identical(world: World) -> None:
    docs, mirror = world.host(names.DOCS), world.host(names.DOCS_MIRROR)
    assert mirror.resources.keys() == docs.resources.keys()
    for path, resource in docs.resources.items():
        assert mirror.resolve(path).body == resource.body
    university, alumni = world.host(names.UNIVERSITY), world.host(names.ALUMNI)
    kept = [p for p in university.resources if alumni.resolve(p) is not None]
    assert 0.35 < len(kept) / len(university.resources) < 0.75
    for path in kept:
        assert alumni.resolve(path).body == university.resolve(path).body
    decoy = world.host(names.DECOY)
    assert decoy.resources.keys() == docs.resources.keys()
    assert decoy.resolve("/library/index.html").body != docs.resolve("/library/index.html").body


def test_prefix_mirror_rewrites_only_rooted_links(world: World) -> None:
    recipes, archive = world.host(names.RECIPES), world.host(names.ARCHIVE)
    for path, resource in recipes.resources.items():
        if path == "/robots.txt":
            continue
        copy = archive.resolve(names.ARCHIVE_PREFIX + path[1:])
        assert copy is not None, path
        assert lxml.html.document_fromstring(copy.body).text_content() == lxml.html.document_fromstring(resource.body).text_content()
    assert archive.resolve("/about.html") is not None  # the archive has pages of its own


def test_originals_mix_link_forms(world: World) -> None:
    hrefs = set()
    for host in ORIGINALS:
        for resource in world.host(host).resources.values():
            hrefs.update(re.findall(rb'href="([^"]*)"', resource.body))
    assert any(h.startswith(b"../") for h in hrefs)
    assert any(h.startswith(b"/") and not h.startswith(b"//") for h in hrefs)
    assert any(b"#" in h and not h.startswith(b"#") for h in hrefs)
    assert any(b"?" in h for h in hrefs)
    assert any(h.startswith(b"http://") for h in hrefs)


def test_relative_links_resolve_to_their_targets() -> None:
    cases = [("/a/b.html", "/a/c.html"), ("/a/b.html", "/"), ("/", "/x/"), ("/?page=2", "/?page=3"), ("/a/b/c.html", "/x/y.html#f"), ("/x/", "/")]
    for source, target in cases:
        assert urljoin("http://h" + source, rel(source, target)) == "http://h" + target


# -- ground truth ------------------------------------------------------------------


def test_ground_truth_reaches_every_host_from_the_seed(world: World, truth: dict, server: SandboxServer) -> None:
    assert truth["seeds"] == [server.url(names.PORTAL, "/")]
    reached = {urlsplit(u).hostname for u in truth["pages"]}
    assert reached == {h.name for h in world.hosts}
    # Some mirrors are only found through other hosts' links, never from the portal.
    portal_targets = {urlsplit(t).hostname for s, t in truth["edges"] if urlsplit(s).hostname == names.PORTAL}
    assert names.DOCS_MIRROR not in portal_targets and names.ALUMNI not in portal_targets
    assert {names.DOCS, names.RECIPES, names.UNIVERSITY, names.NEWS, names.DECOY, names.HOSTILE} <= portal_targets


def test_ground_truth_structure(world: World, truth: dict, server: SandboxServer) -> None:
    json.dumps(truth)
    assert 300 <= len(truth["pages"]) <= 500
    assert set(truth["html_pages"]) <= set(truth["pages"]) and truth["pages"] == sorted(truth["pages"])
    assert truth["links"] >= len(truth["edges"]) > len(truth["html_pages"])
    assert truth["hosts"][names.ARCHIVE] == {"ip": world.host(names.ARCHIVE).ip, "role": "prefix-mirror", "of": names.RECIPES, "prefix": names.ARCHIVE_PREFIX}
    mirrors = {(m["a"], m["b"]): m["level"] for m in truth["mirrors"]}
    url = server.url
    assert mirrors == {
        (url(names.DOCS), url(names.DOCS_MIRROR)): "full",
        (url(names.RECIPES), url(names.ARCHIVE, names.ARCHIVE_PREFIX)): "full",
        (url(names.UNIVERSITY), url(names.ALUMNI)): "partial",
    }
    assert [names.DOCS, names.DECOY] in truth["decoys"]
    # robots.txt is obeyed: disallowed URLs are linked but never part of the crawl.
    assert truth["robots_disallowed"] and not set(truth["robots_disallowed"]) & set(truth["pages"])
    assert any("/_sources/" in u for u in truth["robots_disallowed"])
    # Apart from the hostile host and the partial mirror's holes, every link works.
    broken = [u for u, o in truth["outcomes"].items() if o != "ok" and urlsplit(u).hostname not in (names.HOSTILE, names.ALUMNI)]
    assert broken == []


def test_ground_truth_names_hostile_outcomes(truth: dict, server: SandboxServer) -> None:
    assert truth["hostile"] == {server.url(names.HOSTILE, p): o for p, o in EXPECTED.items()}


def test_world_without_hostile_host() -> None:
    calm = build_world(0, hostile=False)
    assert all(h.role != "hostile" for h in calm.hosts)
    assert b"glitchworks" not in calm.host(names.PORTAL).resolve("/").body


def test_hosts_file_and_seeds(world: World) -> None:
    lines = world.hosts_file_text().splitlines()
    assert len(lines) == len(world.hosts)
    for line, host in zip(lines, world.hosts, strict=True):
        assert line == f"{host.ip} {host.name}"
        assert host.ip.startswith("127.") and not host.ip.startswith("127.0.0.")
        robots = host.resolve("/robots.txt")
        assert robots is not None and robots.status == 200 and robots.body.startswith(b"User-agent: *")
    assert world.seeds(80) == [f"http://{names.PORTAL}/"]


def test_linkheavy_world() -> None:
    small = build_linkheavy_world(0, pages=60, links_per_page=40)
    assert len(small.hosts) == 1 and small.hosts[0].role == "linkheavy"
    truth = small.ground_truth(8080)
    assert len(truth["html_pages"]) == 60
    assert truth["links"] == 60 * 40
    assert len(truth["edges"]) < truth["links"]  # many links go to the same targets


# -- server ----------------------------------------------------------------------


def test_server_routes_by_host_header_on_several_addresses(world: World, server: SandboxServer) -> None:
    assert len(server.addresses) >= 10
    for host in (names.DOCS, names.RECIPES, names.BIRDERS, names.HOMEPAGE):
        status, headers, body = fetch(server.ip_of(host), server.port, host, "/")
        assert status == 200
        assert body == world.host(host).resolve("/").at_port(server.port).body
        assert int(headers["Content-Length"]) == len(body)
    # Two hosts on one address are told apart by name only.
    assert world.host(names.BIRDERS).ip == world.host(names.HOMEPAGE).ip
    # The address does not decide: a docs request sent to the portal's address is still docs.
    _, _, body = fetch(server.ip_of(names.PORTAL), server.port, names.DOCS, "/mirrors.html")
    assert f"http://{names.DOCS_MIRROR}:{server.port}/".encode() in body
    status, _, _ = fetch(server.ip_of(names.DOCS), server.port, "unknown.example", "/")
    assert status == 404
    status, headers, body = fetch(server.ip_of(names.DOCS), server.port, names.DOCS, "/", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > MIN_PAGE_BYTES
    status, _, body = fetch(server.ip_of(names.DOCS), server.port, names.DOCS, "/robots.txt")
    assert status == 200 and b"Disallow: /_sources/" in body


def test_server_serves_what_the_truth_walked(world: World, truth: dict, server: SandboxServer) -> None:
    """Every ok page over one keep-alive connection per host, byte for byte."""
    by_host: dict[str, list[str]] = {}
    for url in truth["html_pages"]:
        parts = urlsplit(url)
        by_host.setdefault(parts.hostname, []).append(parts.path + (f"?{parts.query}" if parts.query else ""))
    for host, paths in by_host.items():
        conn = http.client.HTTPConnection(server.ip_of(host), server.port, timeout=10)
        for path in paths:
            if world.host(host).resolve(path).delay:
                continue
            conn.request("GET", path, headers={"Host": host})
            response = conn.getresponse()
            assert response.status == 200
            assert response.read() == world.host(host).resolve(path).at_port(server.port).body
        conn.close()


def test_hostile_resources(server: SandboxServer) -> None:
    ip, port, host = server.ip_of(names.HOSTILE), server.port, names.HOSTILE
    assert fetch(ip, port, host, "/error-500.html")[0] == 500
    assert fetch(ip, port, host, "/missing.html")[0] == 404
    status, headers, _ = fetch(ip, port, host, "/loop-a")
    assert (status, headers["Location"]) == (302, "/loop-b")
    status, headers, _ = fetch(ip, port, host, "/loop-b")
    assert (status, headers["Location"]) == (302, "/loop-a")
    status, headers, _ = fetch(ip, port, host, "/moved.html")
    assert (status, headers["Location"]) == (301, "/welcome.html")
    status, headers, body = fetch(ip, port, host, "/empty.html")
    assert (status, headers["Content-Length"], body) == (200, "0", b"")
    status, headers, body = fetch(ip, port, host, "/huge.html", method="HEAD")
    assert headers["Content-Type"] == "text/html; charset=utf-8" and int(headers["Content-Length"]) > 12 * 2**20
    _, headers, _ = fetch(ip, port, host, "/cp1252.html")
    assert headers["Content-Type"] == "text/html"  # no charset anywhere
    assert fetch(ip, port, host, "/report.pdf")[2].startswith(b"%PDF-")
    assert fetch(ip, port, host, "/logo.png")[2].startswith(b"\x89PNG")
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        fetch(ip, port, host, "/reset.html")


def test_gzip_bomb(server: SandboxServer) -> None:
    status, headers, body = fetch(server.ip_of(names.HOSTILE), server.port, names.HOSTILE, "/bomb.html")
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert len(body) < 300 * 1024
    inflater, inflated, data = zlib.decompressobj(wbits=31), 0, body
    while data:
        inflated += len(inflater.decompress(data, 2**22))
        data = inflater.unconsumed_tail
    assert inflated >= BOMB_INFLATED_BYTES


def test_in_flight_accounting_and_log() -> None:
    world = build_world(0, hostile=False)
    concurrent = 6
    with SandboxServer(world, latency=0.8) as server:  # long enough for all to overlap on a busy machine
        barrier = threading.Barrier(concurrent)

        def slow_request(i: int) -> None:
            barrier.wait()
            fetch(server.ip_of(names.NEWS), server.port, names.NEWS, f"/?n={i}")

        threads = [threading.Thread(target=slow_request, args=(i,)) for i in range(concurrent)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        fetch(server.ip_of(names.DOCS), server.port, names.DOCS, "/")
        assert server.max_in_flight() == {names.NEWS: concurrent, names.DOCS: 1}
        assert server.requests_by_host() == {names.NEWS: concurrent, names.DOCS: 1}
        log = server.request_log()
        assert [h for _, h, _ in log] == [names.NEWS] * concurrent + [names.DOCS]
        assert [t for t, _, _ in log] == sorted(t for t, _, _ in log)
        server.reset_stats()
        assert server.stats.requests_by_host() == {} and server.request_log() == []


def test_stop_leaves_no_socket_and_no_thread() -> None:
    world = build_world(0, hostile=False)
    before = set(threading.enumerate())
    server = SandboxServer(world).start()
    port = server.port
    idle = http.client.HTTPConnection(server.ip_of(names.DOCS), port, timeout=5)
    try:
        idle.request("GET", "/", headers={"Host": names.DOCS})
        idle.getresponse().read()  # the keep-alive connection stays open
        server.stop()
        server.stop()
        assert set(threading.enumerate()) <= before
        for ip in server.addresses:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((ip, port), timeout=2).close()
    finally:
        idle.close()


def test_shared_address_mode() -> None:
    world = build_world(0, hostile=False)
    with SandboxServer(world, host_ip="127.0.2.1") as server:
        assert server.addresses == ["127.0.2.1"]
        for host in (names.PORTAL, names.UNIVERSITY):
            assert server.ip_of(host) == "127.0.2.1"
            assert fetch("127.0.2.1", server.port, host, "/")[0] == 200


def test_explicit_port_clash_raises() -> None:
    world = build_world(0, hostile=False)
    with SandboxServer(world) as first, pytest.raises(OSError):
        SandboxServer(world, port=first.port).start()


# -- command line ----------------------------------------------------------------


def test_command_line_writes_files_and_stops_on_sigterm(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mirrorscope.sandbox", "--port", "0", "--seed", "0", "--out", str(tmp_path), "--no-hostile"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            banner = process.stdout.readline()  # printed once the files are written
            assert "hosts on port" in banner, process.stderr.read()
            truth = json.loads((tmp_path / "truth.json").read_text())
            seeds = (tmp_path / "seeds.txt").read_text().split()
            assert seeds == truth["seeds"]
            assert len((tmp_path / "hosts").read_text().splitlines()) == len(truth["hosts"])
            parts = urlsplit(seeds[0])
            ip = truth["hosts"][parts.hostname]["ip"]
            assert fetch(ip, parts.port, parts.hostname, "/")[0] == 200
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0


def test_command_line_reports_a_busy_port_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.1.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "mirrorscope.sandbox", "--port", str(port), "--out", str(tmp_path), "--no-hostile"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "error" in result.stderr
    bad = subprocess.run([sys.executable, "-m", "mirrorscope.sandbox", "--port", "99999", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
