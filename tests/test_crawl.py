"""End-to-end crawls of the sandbox by `scrapy crawl web` in a subprocess, on real sockets."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import text

from mirrorscope.sandbox import Host, Resource, SandboxServer, World, build_world, is_copied
from mirrorscope.sandbox.markup import document, html_resource
from mirrorscope.jobs.similar import stored_signatures
from mirrorscope.storage.store import Store
from tests.helpers import ROOT, crawl_world, mirror_report, scrapy_crawl

# The sandbox's names for outcomes the crawler names differently.
TRUTH_OUTCOME = {"garbage": "binary", "reset": "connection-lost"}


class Sandbox:
    def __init__(self, tmp: Path, latency: float = 0.0, hostile: bool = True, hard_mirrors: bool = False):
        self.world = build_world(0, hostile=hostile, hard_mirrors=hard_mirrors)
        self.server = SandboxServer(self.world, port=0, latency=latency).start()
        self.truth = self.world.ground_truth(self.server.port)
        self.hosts_file = tmp / "hosts"
        self.hosts_file.write_text(self.world.hosts_file_text())
        self.seeds_file = tmp / "seeds.txt"
        self.seeds_file.write_text("\n".join(self.truth["seeds"]) + "\n")

    def crawl_args(self, db_url: str, *extra: str, expand_duplicates: bool = True, mirrors: bool = False) -> list[str]:
        """Arguments of a crawl of this sandbox. Unless told otherwise duplicates' links are
        followed and no mirror validation fetches samples, so that the reachable world is
        exactly the expected result."""
        return ["-a", f"seeds={self.seeds_file}", "-s", f"HOSTS_FILE={self.hosts_file}", "-s", "ALLOW_PRIVATE_ADDRESSES=True",
                "-s", f"DATABASE_URL={db_url}", "-s", "LOG_LEVEL=WARNING", "-s", f"EXPAND_DUPLICATES={expand_duplicates}",
                "-s", f"MIRROR_DETECTION_ENABLED={mirrors}", *extra]

    def on_mirror_side(self, url: str) -> bool:
        return is_copied(url, self.truth["hosts"])

    def expected_urls(self) -> set[str]:
        return set(self.truth["pages"]) | set(self.truth["robots_disallowed"])


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path_factory.mktemp("sandbox"))
    yield box
    box.server.stop()


@pytest.fixture
def slow_sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path, latency=0.03, hostile=False)
    yield box
    box.server.stop()


def crawl(box: Sandbox, db_url: str, *extra: str, expand_duplicates: bool = True, mirrors: bool = False) -> subprocess.CompletedProcess:
    result = scrapy_crawl(*box.crawl_args(db_url, *extra, expand_duplicates=expand_duplicates, mirrors=mirrors))
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_crawl_stores_every_reachable_page_once_with_its_links_and_outcome(sandbox: Sandbox, db_url: str) -> None:
    crawl(sandbox, db_url)
    store = Store(db_url)
    pages = store.pages()
    urls = [p["url"] for p in pages]
    assert len(urls) == len(set(urls))
    assert set(urls) == sandbox.expected_urls()
    outcomes = {p["url"]: p["outcome"] for p in pages}
    for url, expected in sandbox.truth["hostile"].items():
        assert outcomes[url] == TRUTH_OUTCOME.get(expected, expected), url
    edges = {(l["source_url"], l["target_url"]) for l in store.links()}
    assert edges == {tuple(e) for e in sandbox.truth["edges"]}
    hosts = {h["name"].split(":")[0]: h for h in store.hosts()}
    for name, info in sandbox.truth["hosts"].items():
        assert hosts[name]["ip"] == info["ip"]
    (run,) = store.runs()
    # Every URL recorded once: a redirect loop's URLs once each, not once per turn of the
    # loop, and the page a redirect ends at (/moved.html to /welcome.html, both linked)
    # by its own request only.
    assert run["status"] == "finished" and run["stats"]["mirrorscope/page_writes"] == len(urls)
    loops = sum(outcome == "redirect-loop" for outcome in outcomes.values())
    assert loops == 2 and run["stats"]["mirrorscope/outcome/redirect-loop"] == loops
    assert run["stats"]["mirrorscope/redirects_to_known_urls"] == 1
    _check_sketches(store, pages, sandbox)
    store.close()


def _check_sketches(store: Store, pages: list[dict], sandbox: Sandbox) -> None:
    """Every HTML page has a sketch, with its parameters; an exact mirror's pages have the
    same token-sequence fingerprint as their originals."""
    from mirrorscope.detectors.sketch import DEFAULT_PARAMS, DocumentSketch

    sketches = {k["url"]: k for k in store.sketches()}
    assert set(sketches) == {p["url"] for p in pages if p["outcome"] == "ok"}
    some = next(iter(sketches.values()))["sketch"]
    sketch = DocumentSketch.from_bytes(some.data)
    assert sketch.params == DEFAULT_PARAMS and (some.w, some.s, some.m) == (10, 200, 25)
    assert sketch.fingerprint == some.fingerprint
    (exact,) = [m for m in sandbox.truth["mirrors"] if m["a"].startswith("http://docs.pyref.org")]
    shared = [u for u in sketches if u.startswith(exact["a"])]
    assert len(shared) > 20
    for url in shared:
        twin = exact["b"] + url[len(exact["a"]):]
        if twin in sketches:
            assert sketches[twin]["sketch"].fingerprint == sketches[url]["sketch"].fingerprint


def test_duplicates_are_recorded_and_their_links_not_followed(sandbox: Sandbox, sqlite_url: str) -> None:
    # Without mirror validation, which fetches samples of the mirror sides on purpose.
    crawl(sandbox, sqlite_url, expand_duplicates=False)
    store = Store(sqlite_url)
    pages = {p["url"]: p for p in store.pages()}
    by_id = {p["id"]: p for p in pages.values()}
    sketches = {k["url"]: k for k in store.sketches()}
    duplicates = [p for p in pages.values() if p["duplicate_of_id"] is not None]
    assert duplicates
    for page in duplicates:
        original = by_id[page["duplicate_of_id"]]
        assert original["id"] < page["id"] or original["fetched_at"] <= page["fetched_at"]
        # The standard world's copies keep their originals' text, so every duplicate is an
        # identical one (a near one: test_a_near_duplicate_is_recorded_and_its_links_not_followed).
        assert page["duplicate_kind"] == "identical" and page["duplicate_score"] == 1.0, page["url"]
        assert sketches[page["url"]]["sketch"].fingerprint == sketches[original["url"]]["sketch"].fingerprint
    # Nothing whose content exists nowhere else is lost; the mirror sides are mostly not fetched.
    expected = sandbox.expected_urls()
    unique = {u for u in expected if not sandbox.on_mirror_side(u)}
    assert unique <= set(pages)
    mirrored = {u for u in expected if sandbox.on_mirror_side(u)}
    assert len(mirrored & set(pages)) <= 0.2 * len(mirrored)
    assert store.runs()[0]["stats"]["mirrorscope/duplicate_links_not_followed"] > 0
    store.close()


def test_offline_clusters_pair_mirrored_pages_and_not_the_decoy(sandbox: Sandbox, sqlite_url: str) -> None:
    crawl(sandbox, sqlite_url)
    result = mirror_report("detect", "--db", sqlite_url)
    assert result.returncode == 0, result.stderr
    store = Store(sqlite_url)
    port = sandbox.server.port
    for method in ("broder", "center", "super-shingles"):
        cluster_of = {u: n for n, c in enumerate(store.duplicate_clusters(method)) for u in c["members"]}
        pairs = 0
        for url in store.fetched_urls():
            if url.startswith(f"http://docs.pyref.org:{port}/") and url.endswith(".html"):
                twin = url.replace("docs.pyref.org", "pydocs.fastmirror.net")
                decoy = url.replace("docs.pyref.org", "docs.rubicon-lang.org")
                if twin in cluster_of or url in cluster_of:
                    assert cluster_of.get(twin) == cluster_of.get(url), (method, url)
                    pairs += 1
                assert decoy not in cluster_of or cluster_of.get(decoy) != cluster_of.get(url), (method, decoy)
        assert pairs > 40, method
    json_report = mirror_report("duplicates", "--db", sqlite_url, "--format", "json")
    assert json_report.returncode == 0 and '"duplicate_clusters"' in json_report.stdout
    store.close()


def test_mirrors_on_the_harder_sandbox_are_found_and_no_decoy_is_reported(tmp_path: Path, sqlite_url: str) -> None:
    from mirrorscope.report.document import build_report
    from mirrorscope.sandbox.scoring import score_mirrors

    box = Sandbox(tmp_path, hard_mirrors=True)
    try:
        crawl(box, sqlite_url, expand_duplicates=False, mirrors=True)
    finally:
        box.server.stop()
    store = Store(sqlite_url)
    report = build_report(store)
    store.close()
    scored = score_mirrors(report["mirrors"], box.truth)
    assert scored["precision"] >= 0.95 and scored["recall"] >= 0.95, scored
    assert scored["decoys_reported"] == 0 and scored["prefix_right"] >= 0.9 * scored["found"], scored
    for mirror in report["mirrors"]:
        if not mirror["inferred"]:
            assert mirror["paths_checked"] <= 40


def test_links_keep_anchor_text_and_word_windows(sandbox: Sandbox, sqlite_url: str) -> None:
    crawl(sandbox, sqlite_url, "-s", "ANCHOR_WINDOW=3")
    store = Store(sqlite_url)
    links = store.links()
    assert links and all(len(l["before"].split()) <= 3 and len(l["after"].split()) <= 3 for l in links)
    assert sum(1 for l in links if l["anchor"] and l["before"] and l["after"]) > len(links) / 2
    store.close()


def test_recrawl_updates_rows_and_never_duplicates_them(sandbox: Sandbox, sqlite_url: str) -> None:
    crawl(sandbox, sqlite_url)
    store = Store(sqlite_url)
    before = {p["url"]: p["id"] for p in store.pages()}
    links_before = store.summary()["links"]
    crawl(sandbox, sqlite_url)
    after = {p["url"]: p["id"] for p in store.pages()}
    assert after == before
    assert store.summary()["links"] == links_before
    assert len(store.runs()) == 2
    store.close()


def test_order_is_breadth_first(sandbox: Sandbox, sqlite_url: str) -> None:
    sandbox.server.reset_stats()
    # One request at a time makes the order strict (with more in flight it is loose).
    crawl(sandbox, sqlite_url, "-s", "CONCURRENT_REQUESTS=1", "-s", "AUTOTHROTTLE_ENABLED=False")
    store = Store(sqlite_url)
    depth = {p["url"]: p["depth"] for p in store.pages()}
    store.close()
    port = sandbox.server.port
    # First requests only: a retry is a second attempt, queued behind its depth on purpose.
    fetched = dict.fromkeys(f"http://{host}:{port}{path}" for _, host, path in sandbox.server.request_log() if path != "/robots.txt")
    depths = [depth[u] for u in fetched if u in depth]
    assert len(depths) > 300 and max(depths) >= 3
    assert depths == sorted(depths)


@pytest.mark.parametrize("limit", [1, 2])
def test_requests_in_flight_per_host_never_exceed_the_limit(slow_sandbox: Sandbox, sqlite_url: str, limit: int) -> None:
    crawl(slow_sandbox, sqlite_url, "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={limit}", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS=32")
    in_flight = slow_sandbox.server.max_in_flight()
    assert sum(slow_sandbox.server.requests_by_host().values()) > 300
    assert max(in_flight.values()) == limit, in_flight


def test_private_addresses_are_refused_recorded_and_counted(sandbox: Sandbox, sqlite_url: str) -> None:
    sandbox.server.reset_stats()
    result = scrapy_crawl(*sandbox.crawl_args(sqlite_url, "-s", "ALLOW_PRIVATE_ADDRESSES=False"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert sandbox.server.requests_by_host() == {}
    store = Store(sqlite_url)
    assert {p["outcome"] for p in store.pages()} == {"refused-private"}
    assert store.runs()[0]["stats"]["mirrorscope/refused_private"] >= 1
    store.close()


def test_an_unreachable_robots_txt_disallows_its_host(tmp_path: Path, sqlite_url: str) -> None:
    """RFC 9309: robots.txt that answers 5xx or 429, or not at all, means complete
    disallow; a 404 means no rules (Scrapy's own middleware allowed all four)."""
    robots = {
        "www.busy-archive.org": Resource(status=503, body=b"busy"),
        "www.throttled-news.org": Resource(status=429, body=b"slow down"),
        "www.resetting-wiki.org": Resource(reset=True),
        "www.no-rules.org": Resource(status=404, body=b"not found", content_type="text/plain"),
    }
    hosts = [Host(name, f"127.0.1.{71 + i}", "other", {"/robots.txt": res, "/": html_resource(document(name, '<a href="/a.html">A</a>')),
                                                       "/a.html": html_resource(document("A", "<p>a</p>"))})
             for i, (name, res) in enumerate(robots.items())]
    links = " ".join(f'<a href="http://{name}@@PORT@@/">{name}</a>' for name in robots)
    portal = Host("www.robots-portal.org", "127.0.1.70", "other", {"/": html_resource(document("Links", links))})
    world = World(seed=0, hosts=[portal, *hosts], seed_paths=[(portal.name, "/")])
    result, requests = crawl_world(world, tmp_path, sqlite_url)
    fetched = set(requests)
    store = Store(sqlite_url)
    try:
        outcomes = {(urlsplit(p["url"]).hostname, urlsplit(p["url"]).path): p["outcome"] for p in store.pages()}
    finally:
        store.close()
    for name in ("www.busy-archive.org", "www.throttled-news.org", "www.resetting-wiki.org"):
        assert outcomes[(name, "/")] == "robots-unreachable"
        assert {path for host, path in fetched if host == name} == {"/robots.txt"}
        assert "robots.txt of " + name in result.stderr
    assert outcomes[("www.no-rules.org", "/")] == outcomes[("www.no-rules.org", "/a.html")] == "ok"


def test_a_redirect_loop_costs_one_fetch_per_url_and_a_chain_is_followed(tmp_path: Path, sqlite_url: str) -> None:
    def moved(to: str) -> Resource:
        return Resource(status=302, body=b"", headers=(("Location", to),))

    pages = {
        "/loop-a": moved("/loop-b"), "/loop-b": moved("/loop-a"), "/self": moved("/self"),
        "/old": moved("/older"), "/older": moved("/new.html"), "/new.html": html_resource(document("New", "<p>here now</p>")),
    }
    links = " ".join(f'<a href="{path}">{path}</a>' for path in ("/loop-a", "/self", "/old"))
    host = Host("www.moving-house.org", "127.0.1.80", "other", {**pages, "/": html_resource(document("Moves", links))})
    world = World(seed=0, hosts=[host], seed_paths=[(host.name, "/")])
    _, requests = crawl_world(world, tmp_path, sqlite_url)
    # Round the loop once, then refused: not up to REDIRECT_MAX_TIMES (5) times round.
    assert sorted(path for _, path in requests if path in ("/loop-a", "/loop-b", "/self")) == ["/loop-a", "/loop-b", "/self"]
    store = Store(sqlite_url)
    try:
        outcomes = {urlsplit(p["url"]).path: (p["outcome"], p["error"]) for p in store.pages()}
        stats = store.runs()[0]["stats"]
    finally:
        store.close()
    assert {path: outcomes[path][0] for path in ("/loop-a", "/loop-b", "/self")} == dict.fromkeys(("/loop-a", "/loop-b", "/self"), "redirect-loop")
    assert outcomes["/loop-a"][1].startswith("redirect loop: back to http://www.moving-house.org:")
    assert stats["mirrorscope/redirect_loops_cut"] == 2
    assert (outcomes["/old"][0], outcomes["/older"][0], outcomes["/new.html"][0]) == ("redirect", "redirect", "ok")


def test_a_near_duplicate_is_recorded_and_its_links_not_followed(tmp_path: Path, sqlite_url: str) -> None:
    """The online index's near branch: a page whose text differs from an earlier page's in
    a few words (another fingerprint, resemblance above DUPLICATE_THRESHOLD, 0.8)."""
    rng = random.Random(7)
    words = [rng.choice(("harbour", "tide", "kelp", "gull", "pier", "lantern", "rope", "keel", "salt", "dune")) + str(rng.randrange(400))
             for _ in range(1500)]
    first = " ".join(words)
    second = " ".join(words[:-3] + ["quite", "another", "ending"])
    pages = {
        "/": html_resource(document("Notes", '<a href="/first.html">first</a> <a href="/second.html">second</a>')),
        "/first.html": html_resource(document("Notes", f'<p>{first}</p><a href="/from-first.html">on</a>')),
        "/second.html": html_resource(document("Notes", f'<p>{second}</p><a href="/from-second.html">on</a>')),
        "/from-first.html": html_resource(document("On", "<p>after the first</p>")),
        "/from-second.html": html_resource(document("On", "<p>after the second</p>")),
    }
    host = Host("www.tide-notes.org", "127.0.1.90", "other", pages)
    _, requests = crawl_world(World(seed=0, hosts=[host], seed_paths=[(host.name, "/")]), tmp_path, sqlite_url)
    store = Store(sqlite_url)
    try:
        stored = {urlsplit(p["url"]).path: p for p in store.pages()}
        by_id = {p["id"]: p for p in stored.values()}
        stats = store.runs()[0]["stats"]
    finally:
        store.close()
    (near,) = [p for p in stored.values() if p["duplicate_of_id"] is not None]
    original = urlsplit(by_id[near["duplicate_of_id"]]["url"]).path
    assert {urlsplit(near["url"]).path, original} == {"/first.html", "/second.html"}
    assert near["duplicate_kind"] == "near" and 0.8 <= near["duplicate_score"] <= 1.0
    assert near["fingerprint"] != stored[original]["fingerprint"]
    assert stats["mirrorscope/duplicates/near"] == 1 and "mirrorscope/duplicates/identical" not in stats
    # The original's link is followed, the near duplicate's is not.
    follow = {"/first.html": "/from-first.html", "/second.html": "/from-second.html"}
    fetched = {path for _, path in requests}
    assert follow[original] in fetched and follow[urlsplit(near["url"]).path] not in fetched


def _stored(db_url: str) -> int:
    store = Store(db_url)
    try:
        with store.engine.connect() as conn:
            return conn.execute(text("SELECT count(*) FROM pages")).scalar_one()
    finally:
        store.close()


def test_killed_and_resumed_crawl_loses_nothing_and_stores_nothing_twice(slow_sandbox: Sandbox, sqlite_url: str, tmp_path: Path) -> None:
    jobdir = tmp_path / "job"
    command = [sys.executable, "-m", "scrapy", "crawl", "web", *slow_sandbox.crawl_args(sqlite_url, "-s", f"JOBDIR={jobdir}", "-s", "STORE_BATCH_SIZE=20")]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    first_log = tmp_path / "killed-crawl.log"
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=first_log.open("w"))
    deadline = time.monotonic() + 120
    while _stored(sqlite_url) < 100:
        assert process.poll() is None and time.monotonic() < deadline, "the crawl ended before it could be killed"
        time.sleep(0.1)
    children = _children(process.pid)
    assert children, "the crawl has no anchor-bag worker"
    process.send_signal(signal.SIGKILL)
    process.wait()
    # The worker processes of a killed crawl notice and leave.
    assert _all_ended(children, within=30), f"a killed crawl left its worker processes behind: {_states(children)}"
    killed_at = _stored(sqlite_url)
    assert killed_at < len(slow_sandbox.expected_urls())
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store(sqlite_url)
    urls = [p["url"] for p in store.pages()]
    assert len(urls) == len(set(urls))
    missing, extra = slow_sandbox.expected_urls() - set(urls), set(urls) - slow_sandbox.expected_urls()
    assert not missing and not extra, (f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}\n"
                                       f"killed crawl: {first_log.read_text()[-3000:]}\nresumed crawl: {result.stderr[-3000:]}")
    assert len(store.runs()) == 1  # resumed, not started again
    store.close()


def test_demo_runs_within_a_minute_and_leaves_no_process(tmp_path: Path) -> None:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "mirrorscope.report.cli", "demo", "--format", "json"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    assert elapsed < 60
    import json

    report = json.loads(result.stdout)
    sandbox = report["sandbox"]
    assert sandbox["original_pages_stored"] == sandbox["original_pages"] > 200
    assert sandbox["mirrored_pages_fetched"] <= 0.7 * sandbox["mirrored_pages"]
    mirrors = sandbox["mirrors"]
    assert (mirrors["precision"], mirrors["recall"], mirrors["decoys_reported"]) == (1.0, 1.0, 0)
    assert {"a", "b", "level", "score", "paths_checked", "paths_matched", "features"} <= set(report["mirrors"][0])
    # The full world (the default): spam hosts flagged, the calendar reported as a trap.
    spam = sandbox["spam"]
    assert (spam["precision"], spam["recall"], spam["good_flagged"]) == (1.0, 1.0, 0)
    assert spam["traps"] == ["events.harbourtown-arts.org"]
    assert {"host", "score", "pages", "reasons"} <= set(report["spam_hosts"][0])
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and b"mirrorscope.sandbox" in _cmdline(p) and str(tmp_path).encode() in _cmdline(p)]
    assert leftovers == []


HALF_SENT_CRAWL = """
import multiprocessing, os, signal, struct, sys
from mirrorscope.crawler.anchor_worker import maintain_bags
from mirrorscope.detectors.anchors import DEFAULT_PARAMS

if __name__ == "__main__":
    context = multiprocessing.get_context("spawn")
    inbox, outbox = context.Queue(), context.Queue()
    worker = context.Process(target=maintain_bags, args=(sys.argv[1], DEFAULT_PARAMS, 1, None, inbox, outbox), daemon=True)
    worker.start()
    print(worker.pid, flush=True)
    inbox.put(("pages", ["http://cook.test/rye"], ["rye bread"], ["dark sour"], [""], [], 1))
    sys.stdin.readline()
    # What a kill in the middle of a send leaves in the pipe: a length, then less than it promised.
    os.write(inbox._writer.fileno(), struct.pack("!i", 1 << 20) + bytes(100))
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_anchor_worker_of_a_crawl_killed_in_the_middle_of_a_message_leaves(sqlite_url: str) -> None:
    """The worker then waits for bytes that never come (it holds the pipe's write end
    too, so no end of file comes either): it used to live on for ever."""
    store = Store(sqlite_url)
    crawl = subprocess.Popen([sys.executable, "-c", HALF_SENT_CRAWL, sqlite_url], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    worker = crawl.stdout.readline().strip()
    try:
        deadline = time.monotonic() + 60
        while "http://cook.test/rye" not in stored_signatures(store)[0]:  # the worker is in its loop
            assert time.monotonic() < deadline and crawl.poll() is None, "the worker never stored the first message's signature"
            time.sleep(0.1)
        crawl.stdin.write("kill\n")
        crawl.stdin.flush()
        assert crawl.wait(timeout=30) == -signal.SIGKILL
        assert _all_ended([worker], within=15), f"the worker is still there: {_states([worker])}"
    finally:
        if _states([worker])[worker] not in ("gone", "Z"):
            os.kill(int(worker), signal.SIGKILL)
        store.close()


def _states(pids: list[str]) -> dict[str, str]:
    """Each process's state letter (``Z`` for one that ended and awaits its reaper), or ``gone``."""
    states = {}
    for pid in pids:
        try:
            states[pid] = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            states[pid] = "gone"
    return states


def _all_ended(pids: list[str], within: float) -> bool:
    """Whether every process ended within ``within`` seconds. An orphan that ended is a
    zombie until init reaps it, which on some machines takes a while: it counts as ended."""
    deadline = time.monotonic() + within
    while any(state not in ("gone", "Z") for state in _states(pids).values()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _children(pid: int) -> list[str]:
    return [child for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()]


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize(
    "args, message",
    [
        (["-a", "seeds=/no/such/seeds.txt"], "seeds file not found: /no/such/seeds.txt"),
        (["-a", "seeds=http://a.test/", "-a", "colour=blue"], "unknown spider argument 'colour'"),
        (["-a", "seeds=http://a.test/", "-s", "DATABASE_URL=oracle://x"], "unsupported database 'oracle'"),
        (["-a", "seeds=http://a.test/", "-a", "max_pages=lots"], "max_pages must be a whole number"),
    ],
)
def test_scrapy_crawl_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = scrapy_crawl(*args, "--nolog")
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {result.stderr.strip()[7:]}" and message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["crawl", "/no/such/seeds.txt"], "seeds file not found"),
        (["--db", "nope"], "bad database URL"),
        (["--colour"], "unrecognized arguments: --colour"),
        (["demo", "--port", "x"], "invalid int value"),
        (["db", "current", "--db", "postgresql+psycopg://127.0.0.1:1/x"], "cannot open database"),
    ],
)
def test_mirror_report_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = mirror_report(*args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_report_escapes_crawled_strings(tmp_path: Path) -> None:
    from mirrorscope.report.render import render_csv, safe_cell, safe_text

    assert safe_text("ok\x1b[31mred\x07") == "ok\\x1b[31mred\\x07"
    assert safe_text("a\u202eb") == "a\\u202eb"
    assert safe_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    row = {"a": "=cmd()", "b": "http://b/", "level": "full", "score": 1.0, "paths_checked": 2, "paths_matched": 2, "inferred": False, "features": {"paths": 1.0}}
    assert "'=cmd()" in render_csv({"mirrors": [row]})


def test_similar_urls_pair_mirrored_pages_by_their_anchor_bags(sandbox: Sandbox, sqlite_url: str) -> None:
    from mirrorscope.jobs.similar import similar_urls

    crawl(sandbox, sqlite_url)
    store = Store(sqlite_url)
    port = sandbox.server.port
    originals = sorted(u for u in store.fetched_urls() if u.startswith(f"http://docs.pyref.org:{port}/library/"))[:15]
    assert len(originals) == 15
    hits = 0
    for url in originals:
        found = [row["url"] for row in similar_urls(store, url) or []]
        hits += url.replace("docs.pyref.org", "pydocs.fastmirror.net") in found
        assert all(not u.startswith(f"http://docs.rubicon-lang.org:{port}/") or u.endswith("index.html") for u in found[:1])
    assert hits >= 0.9 * len(originals)
    result = mirror_report("similar", originals[0], "--db", sqlite_url, "--format", "json")
    assert result.returncode == 0 and "pydocs.fastmirror.net" in result.stdout
    store.close()


def test_anchor_bag_pipeline_keeps_signatures_during_the_crawl(sandbox: Sandbox, sqlite_url: str, tmp_path: Path) -> None:
    """A flush after every page: the first snapshot sees one page's links, so it is
    retaken as the bags double; every URL with a bag ends up with a signature, and
    similar finds mirrors from them."""
    from mirrorscope.jobs.similar import bags_from_store, similar_urls, stored_signatures

    result = crawl(sandbox, sqlite_url, "-s", "ANCHOR_BAGS_BATCH_SIZE=1", "-s", "ANCHOR_BAGS_FLUSH_PAGES=1", "-s", "LOG_LEVEL=INFO")
    assert "mirrorscope/anchor_bags/snapshots" in result.stderr
    store = Store(sqlite_url)
    urls, signatures = stored_signatures(store)
    bags = bags_from_store(store)
    assert set(urls) == set(bags.urls) and len(urls) > 300
    stats = store.runs()[-1]["stats"]
    assert stats["mirrorscope/anchor_bags/snapshots"] >= 2
    assert stats["mirrorscope/anchor_bags/signatures_written"] > len(urls)  # some bags signed again
    # Snapshots are retaken as the bags double: the latest one saw at least half of them.
    assert len(urls) / 2 <= max(store.anchor_signature(u)["idf_bags"] for u in urls) <= len(urls)
    port = sandbox.server.port
    originals = sorted(u for u in urls if u.startswith(f"http://docs.pyref.org:{port}/library/"))[:15]
    assert all(store.anchor_signature(u) is not None for u in originals)
    hits = sum(u.replace("docs.pyref.org", "pydocs.fastmirror.net") in [r["url"] for r in similar_urls(store, u) or []] for u in originals)
    assert hits >= 0.9 * len(originals)
    store.close()
    # Off: nothing is stored, and similar still answers by recomputing.
    other = f"sqlite:///{tmp_path / 'off.db'}"
    crawl(sandbox, other, "-s", "ANCHOR_BAGS_ENABLED=False")
    store = Store(other)
    assert stored_signatures(store)[0] == []
    found = similar_urls(store, originals[0].replace(str(port), str(port)))
    assert found is not None and originals[0].replace("docs.pyref.org", "pydocs.fastmirror.net") in [r["url"] for r in found]
    store.close()


def test_detection_over_hostile_stores(db_url: str) -> None:
    """An empty store, a store of one page and a store of identical pages all work."""
    from datetime import datetime, timezone

    from mirrorscope.jobs.duplicates import detect_duplicates
    from mirrorscope.jobs.mirrors import detect_mirrors
    from mirrorscope.crawler.pipelines import sketch_record
    from mirrorscope.detectors.sketch import sketch_tokens
    from mirrorscope.storage.records import PageRecord

    store = Store(db_url)
    assert detect_duplicates(store)["pages"] == 0 and detect_mirrors(store)["mirrors"] == 0
    run = store.start_run([], {})
    words = "the same page of text repeated on every host of this store".split() * 3
    for n in range(4):
        record = PageRecord(url=f"http://h{n}.test/p.html", host=f"h{n}.test", hostname=f"h{n}.test", port=None,
                            path="/p.html", depth=0, outcome="ok", fetched_at=datetime.now(timezone.utc), status=200,
                            sketch=sketch_record(sketch_tokens(words)))
        store.write_pages([record], run)
        summary = detect_duplicates(store)
        assert summary["broder"]["clusters"] == (1 if n else 0)
        assert summary["broder"]["pages_in_clusters"] == (n + 1 if n else 0)
    assert store.duplicate_clusters("broder")[0]["identical"] is True
    detect_mirrors(store)
    store.close()


def test_urls_parked_at_a_full_host_queue_are_all_fetched_from_the_store(tmp_path: Path, sqlite_url: str) -> None:
    """A host queue of 5 parks the index's other 35 links in the store; the crawl goes
    idle right after the index's neighbours, before the index's batch was written, and
    must refill from the store rather than close."""
    index = " ".join(f'<a href="/p{n}.html">Chapter {n}</a>' for n in range(40))
    pages = {"/": html_resource(document("Handbook", index))}
    pages |= {f"/p{n}.html": html_resource(document(f"Chapter {n}", f"<p>Chapter {n} of the handbook, on topic {n * 7919}.</p>")) for n in range(40)}
    world = World(seed=0, hosts=[Host("docs.handbook.org", "127.0.1.70", "other", pages)], seed_paths=[("docs.handbook.org", "/")])
    _, fetches = crawl_world(world, tmp_path, sqlite_url, "-s", "FRONTIER_HOST_QUEUE_CAP=5")
    fetched = {path for host, path in fetches if host == "docs.handbook.org"}
    missing = {f"/p{n}.html" for n in range(40)} - fetched
    assert not missing, f"{len(missing)} of 40 never fetched"
