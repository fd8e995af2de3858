"""The frontier shared through Redis (issue 19, ``crawler.shared``): its scripts on a real
Redis, then 3 ``scrapy crawl web`` processes on the sandbox against one PostgreSQL store,
compared with a one-process crawl of the same world (the in-process frontier), counted at
the server; and one of the 3 killed with SIGKILL mid-crawl."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from mirrorscope.crawler.shared import SharedFrontier
from mirrorscope.sandbox import build_world
from mirrorscope.sandbox.resume import CRAWL_TIMEOUT, StoredCrawl, WorldCrawl, _environment, stored_pages
from mirrorscope.sandbox.truth import is_copied
from mirrorscope.storage.store import Store

#: Requests to spam and trap hosts that 3 processes may make beyond one process: a
#: verdict reaches the others within FRONTIER_HEARTBEAT_INTERVAL, and what their
#: downloaders hold by then (CONCURRENT_REQUESTS_PER_DOMAIN per host, each) is sent.
EXTRA_FETCHES = 20
#: The test crawls' lease timeout: a killed process's URLs wait this long for another.
LEASE_TIMEOUT = 5.0


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own: tests on one Redis never meet."""
    name = f"mirrorscope-test-{uuid.uuid4().hex[:12]}:"
    yield name
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{name}*"))
    if keys:
        client.delete(*keys)


def _frontier(redis_url: str, prefix: str, owner: str, *, per_host: int = 2, host_cap: int = 100, lease: float = 30.0) -> SharedFrontier:
    return SharedFrontier(redis.Redis.from_url(redis_url), prefix, per_host=per_host, host_cap=host_cap, domain_cap=1000,
                          lookahead=2, lease_timeout=lease, owner=owner)


def _entry(url: str, level: int = 0, claim: bool = True) -> tuple[bool, int, str, str, str, bytes]:
    host = url.split("/")[2]
    return claim, level, host.split(".", 1)[1], host, url, url.encode()


# -- the scripts -----------------------------------------------------------------------


def test_a_url_is_queued_once_and_popped_by_level_then_round_robin_over_domains(redis_url: str, prefix: str) -> None:
    a = _frontier(redis_url, prefix, "a")
    urls = ["http://w.one.org/1", "http://w.one.org/2", "http://w.one.org/3", "http://w.two.org/1", "http://w.three.org/1"]
    assert a.push([_entry(u, 1) for u in urls]) == [None] * 5
    assert a.push([_entry("http://w.one.org/1", 1), _entry("http://w.two.org/0", 0)]) == ["seen", None]
    popped = []
    while (found := a.pop()) is not None:
        popped.append(found[0])
    # Level 0 first; then one.org, two.org, three.org in turn; one.org's others last
    # (no downloader holds a slot here, so no host is busy).
    assert popped == ["http://w.two.org/0", "http://w.one.org/1", "http://w.two.org/1", "http://w.three.org/1",
                      "http://w.one.org/2", "http://w.one.org/3"]
    assert a.queued() == 0 and a.leased() == 6 and not a.finished()
    assert a.done(popped) == 6 and a.finished()


def test_queue_caps_count_the_whole_crawl_and_a_capped_url_stays_unseen(redis_url: str, prefix: str) -> None:
    a, b = _frontier(redis_url, prefix, "a", host_cap=2), _frontier(redis_url, prefix, "b", host_cap=2)
    assert a.push([_entry("http://w.one.org/1")]) == [None]
    assert b.push([_entry("http://w.one.org/2"), _entry("http://w.one.org/3")]) == [None, "queue-host-cap"]
    assert a.full("w.one.org:8080", "one.org") == "queue-host-cap"
    assert a.pop() is not None
    # Room again: the URL a cap refused was not marked seen, so it is admitted now.
    assert b.push([_entry("http://w.one.org/3")]) == [None]


def test_in_flight_slots_hold_for_every_process_and_a_busy_host_is_skipped(redis_url: str, prefix: str) -> None:
    a, b = _frontier(redis_url, prefix, "a", per_host=2), _frontier(redis_url, prefix, "b", per_host=2)
    assert a.acquire("w.one.org", "t1") and b.acquire("w.one.org", "t2")
    assert not a.acquire("w.one.org", "t3") and not b.acquire("w.one.org", "t4")
    assert a.in_flight("w.one.org") == 2
    a.push([_entry("http://w.one.org/1", 0), _entry("http://w.two.org/1", 1)])
    # one.org's head is busy at level 0: the pop looks one level deeper.
    assert b.pop()[0] == "http://w.two.org/1"  # type: ignore[index]
    assert b.pop() is None
    b.free("w.one.org", "t2")
    assert b.pop()[0] == "http://w.one.org/1"  # type: ignore[index]


def test_a_dead_processes_leases_and_slots_go_to_the_others(redis_url: str, prefix: str) -> None:
    dead = _frontier(redis_url, prefix, "dead", per_host=1, lease=0.2)
    live = _frontier(redis_url, prefix, "live", per_host=1, lease=30)
    dead.heartbeat()
    live.heartbeat()
    dead.push([_entry("http://w.one.org/1"), _entry("http://w.one.org/2")])
    assert dead.pop()[0] == "http://w.one.org/1" and dead.acquire("w.one.org", "t")  # type: ignore[index]
    assert live.reclaim() == 0  # its heartbeat is fresh: nothing is taken from it
    assert live.pop() is None  # the host's one slot is the dead one's until it expires
    time.sleep(0.3)
    assert live.reclaim() == 1
    assert live.in_flight("w.one.org") == 0
    # The reclaimed URL goes back to the front of its queue.
    assert [live.pop()[0], live.pop()[0]] == ["http://w.one.org/1", "http://w.one.org/2"]  # type: ignore[index]
    assert live.done(["http://w.one.org/1", "http://w.one.org/2"]) == 2 and live.finished()


def test_a_lease_ends_only_for_its_holder(redis_url: str, prefix: str) -> None:
    a, b = _frontier(redis_url, prefix, "a"), _frontier(redis_url, prefix, "b")
    a.push([_entry("http://w.one.org/1")])
    assert a.pop() is not None
    assert b.done(["http://w.one.org/1"]) == 0 and a.leased() == 1
    assert a.release_all() == 1 and a.finished()


# -- crawls --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorldCrawl]:
    """Mirrors, spam hosts, a link farm and a calendar trap (as tests/test_resume.py)."""
    # Parsing on the reactor's thread and no anchor-bag process, in every crawl here: 3
    # crawls of 4 processes each would share the machine's 2 cores with the other tests.
    settings = {"STORE_BATCH_SIZE": "20", "PARSE_PROCESSES": "0", "ANCHOR_BAGS_ENABLED": "False"}
    with WorldCrawl(build_world(0, spam=True), tmp_path_factory.mktemp("shared"), settings) as crawl:
        yield crawl


@pytest.fixture(scope="module")
def one_process(served: WorldCrawl, tmp_path_factory: pytest.TempPathFactory) -> tuple[StoredCrawl, Counter[tuple[str, str]]]:
    """A one-process crawl with the in-process frontier: what the shared crawls must match."""
    url = f"sqlite:///{tmp_path_factory.mktemp('one') / 'one.db'}"
    served.server.reset_stats()
    served.run(url, None)
    return StoredCrawl.read(url), _fetches(served)


def _fetches(served: WorldCrawl) -> Counter[tuple[str, str]]:
    """Requests per (host name, path) since the last call, robots.txt left out (each
    process reads a host's robots.txt once, as any crawler process must to obey it)."""
    counted = Counter((host.split(":")[0], path) for _, host, path in served.server.request_log() if path != "/robots.txt")
    served.server.reset_stats()
    return counted


def _crawl(served: WorldCrawl, database_url: str, redis_url: str, prefix: str, processes: int,
           kill_at: int | None = None) -> tuple[int | None, list[int]]:
    """``processes`` crawls on one shared frontier; with ``kill_at``, the first is killed
    with SIGKILL once the store holds that many pages. (pages stored at the kill, exit codes)"""
    settings = ["-s", f"FRONTIER_REDIS_URL={redis_url}", "-s", f"FRONTIER_REDIS_PREFIX={prefix}",
                "-s", f"FRONTIER_LEASE_TIMEOUT={LEASE_TIMEOUT}"]
    log = served.workdir / "shared.log"
    with log.open("a") as stderr:
        crawls = [subprocess.Popen(served.command(database_url, None) + settings, cwd=served.workdir, env=_environment(),
                                   stdout=subprocess.DEVNULL, stderr=stderr) for _ in range(processes)]
    killed = None
    deadline = time.monotonic() + CRAWL_TIMEOUT
    try:
        while any(c.poll() is None for c in crawls) and time.monotonic() < deadline:
            if kill_at is not None and killed is None and stored_pages(database_url) >= kill_at:
                crawls[0].send_signal(signal.SIGKILL)
                killed = stored_pages(database_url)
            time.sleep(0.05)
    finally:
        for crawl in crawls:
            if crawl.poll() is None:
                crawl.kill()
            crawl.wait()
    return killed, [c.returncode for c in crawls]


def _defended(served: WorldCrawl, fetches: Counter[tuple[str, str]]) -> int:
    hosts = served.defended_hosts()
    return sum(n for (host, _), n in fetches.items() if host in hosts)


def _own_content(served: WorldCrawl, urls: set[str]) -> set[str]:
    """URLs of the world's own content: not on a mirror's side, not on a spam or trap host
    (which of those a crawl records depends on timing, in one process too)."""
    hosts, defended = served.hosts(), served.defended_hosts()
    return {u for u in urls if not is_copied(u, hosts) and u.split("/")[2].split(":")[0] not in defended}


def test_three_processes_store_every_page_once_fetch_nothing_twice_and_keep_politeness(
    served: WorldCrawl, one_process: tuple[StoredCrawl, Counter[tuple[str, str]]], postgres_url: str, redis_url: str, prefix: str
) -> None:
    reference, reference_fetches = one_process
    _, codes = _crawl(served, postgres_url, redis_url, prefix, 3)
    in_flight = served.server.max_in_flight()
    fetches = _fetches(served)
    shared = StoredCrawl.read(postgres_url)
    assert codes == [0, 0, 0]
    store = Store(postgres_url)
    try:
        urls = [p["url"] for p in store.pages()]
        runs = store.runs()
    finally:
        store.close()
    assert len(urls) == len(set(urls)) and len(runs) == 1
    assert _own_content(served, set(reference.outcomes)) <= set(shared.outcomes)
    # No URL fetched more often than the one process fetched it, but for the cloaking
    # check: a host's first page that is not spam is fetched again as a browser, once per
    # host in a shared crawl too, but which page is first depends on which process got it.
    twice = Counter(host for (host, path), n in fetches.items() if n > max(1, reference_fetches[(host, path)]))
    assert max(twice.values(), default=0) <= 1, twice
    extra = {key: (reference_fetches[key], n) for key, n in fetches.items() if n > max(1, reference_fetches[key]) + 1}
    assert extra == {}
    assert max(in_flight.values()) <= 2, in_flight
    waste = (_defended(served, reference_fetches), _defended(served, fetches))
    assert waste[1] <= waste[0] + EXTRA_FETCHES, waste
    # The verdicts: test_a_shared_crawl_reaches_the_verdicts_of_one_process below.
    client = redis.Redis.from_url(redis_url)
    assert client.hlen(f"{prefix}leases") == 0 and client.zcard(f"{prefix}levels") == 0


@pytest.mark.xfail(strict=False, reason=(
    "open defect (issue 19): since the merges of 2026-12-06 a 3-process crawl's spam and mirror verdicts "
    "differ from one process's in about half the runs (a mirror pair or the cloaking host missing); not traced"
))
def test_a_shared_crawl_reaches_the_verdicts_of_one_process(
    served: WorldCrawl, one_process: tuple[StoredCrawl, Counter[tuple[str, str]]], postgres_url: str, redis_url: str, prefix: str
) -> None:
    reference, _ = one_process
    _crawl(served, postgres_url, redis_url, prefix, 3)
    shared = StoredCrawl.read(postgres_url)
    assert (shared.flagged_hosts, shared.mirror_pairs) == (reference.flagged_hosts, reference.mirror_pairs)


def test_a_killed_process_leased_urls_are_finished_by_the_others(
    served: WorldCrawl, one_process: tuple[StoredCrawl, Counter[tuple[str, str]]], postgres_url: str, redis_url: str, prefix: str
) -> None:
    reference, _ = one_process
    killed, codes = _crawl(served, postgres_url, redis_url, prefix, 3, kill_at=len(reference.outcomes) // 3)
    shared = StoredCrawl.read(postgres_url)
    assert killed is not None and codes[0] == -signal.SIGKILL and codes[1:] == [0, 0]
    assert sorted(_own_content(served, set(reference.outcomes)) - set(shared.outcomes)) == []
    # Its verdicts are not yet those of one process (see the xfail test above).
    client = redis.Redis.from_url(redis_url)
    assert client.hlen(f"{prefix}leases") == 0 and client.zcard(f"{prefix}levels") == 0


# -- mirror-report crawl --workers N ------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "0"], "argument --workers: must be at least 1, not 0"),
    (["--workers", "2", "--redis", "redis://127.0.0.1:6379/0"], "--workers 2 needs a PostgreSQL store"),
    (["--workers", "2", "--db", "postgresql+psycopg://127.0.0.1:5432/test"], "--workers needs --redis URL"),
    (["--workers", "2", "--db", "postgresql+psycopg://127.0.0.1:5432/test", "--redis", "redis://127.0.0.1:1/0"],
     "cannot reach Redis at redis://127.0.0.1:1/0"),
    (["--redis", "redis://127.0.0.1:1/0"], "cannot reach Redis at redis://127.0.0.1:1/0"),
    (["--workers", "2", "--db", "postgresql+psycopg://127.0.0.1:5432/test", "--redis", "redis://127.0.0.1:6379/0", "--recrawl"],
     "--workers and --recrawl do not go together"),
])
def test_crawl_workers_refuses_bad_input_in_one_line_before_anything_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    from tests.test_cli_input import SEED, assert_one_line_error, in_process

    database = tmp_path / "store.db"
    argv = ["crawl", SEED, *args] if "--db" in args else ["crawl", SEED, "--db", f"sqlite:///{database}", *args]
    assert_one_line_error(in_process(capsys, *argv), message)
    assert not database.exists()


def test_crawl_workers_runs_n_processes_into_one_store(
    served: WorldCrawl, one_process: tuple[StoredCrawl, Counter[tuple[str, str]]], postgres_url: str, redis_url: str, prefix: str
) -> None:
    from tests.helpers import mirror_report

    reference, _ = one_process
    result = mirror_report(
        "crawl", str(served.workdir / "seeds.txt"), "--db", postgres_url, "--workers", "2", "--redis", redis_url,
        "--hosts-file", str(served.workdir / "hosts"), "--allow-private", "--log-level", "WARNING",
        "-s", f"FRONTIER_REDIS_PREFIX={prefix}", "-s", "RESOLVE_ONLY_HOSTS_FILE=True",
        "-s", "PARSE_PROCESSES=0", "-s", "ANCHOR_BAGS_ENABLED=False", timeout=CRAWL_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    shared = StoredCrawl.read(postgres_url)
    assert _own_content(served, set(reference.outcomes)) <= set(shared.outcomes)
    store = Store(postgres_url)
    try:
        assert len(store.runs()) == 1
    finally:
        store.close()
