"""End to end on real pages: the small real-page world (``build_real_world(small=True)``)
crawled with the defaults, scored against its ground truth, on SQLite and PostgreSQL.

It holds the cases the issue "Real pages" saw fail: XHTML and Chinese sites and their
copies, a partial mirror reached only at its root (byte-identical to the original's), a
prefix mirror reached only at /pub/x/ (identical to the original's home), translations
with identical paths, spam written from real paragraphs, a cloaker that shows its spam
only to clients that say they crawl, and pages linking to hosts that do not resolve.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mirrorscope.report.document import build_report
from mirrorscope.sandbox import Host, Resource, SandboxServer, World, build_real_world
from mirrorscope.sandbox.model import PORT_MARK
from mirrorscope.sandbox.scoring import score_mirrors, score_spam
from mirrorscope.sandbox import realnames as n
from mirrorscope.storage.store import Store
from tests.helpers import requires_real_pages, scrapy_crawl

pytestmark = [pytest.mark.timeout(600), requires_real_pages]


class RealSandbox:
    def __init__(self, world: World, tmp: Path) -> None:
        self.world = world
        self.server = SandboxServer(world, port=0).start()
        self.truth = world.ground_truth(self.server.port)
        self.hosts_file, self.seeds_file = tmp / "hosts", tmp / "seeds.txt"
        self.hosts_file.write_text(world.hosts_file_text())
        self.seeds_file.write_text("\n".join(world.seeds(self.server.port)) + "\n")

    def crawl(self, db_url: str, *extra: str) -> str:
        """Crawl with the defaults (names outside the world fail without a DNS query);
        the crawl's log."""
        self.server.reset_stats()
        result = scrapy_crawl(
            "-a", f"seeds={self.seeds_file}", "-s", f"HOSTS_FILE={self.hosts_file}", "-s", "ALLOW_PRIVATE_ADDRESSES=True",
            "-s", "RESOLVE_ONLY_HOSTS_FILE=True", "-s", f"DATABASE_URL={db_url}", "-s", "LOG_LEVEL=INFO", *extra, timeout=500,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stderr


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSandbox]:
    box = RealSandbox(build_real_world(0, small=True), tmp_path_factory.mktemp("real-small"))
    yield box
    box.server.stop()


def hostname(url: str) -> str:
    return urlsplit(url).hostname or ""


def test_the_small_real_world_is_crawled_and_judged_right(real: RealSandbox, db_url: str) -> None:
    log = real.crawl(db_url)
    store = Store(db_url)
    report = build_report(store)
    pages = store.pages()
    (run,) = store.runs()
    store.close()

    mirrors = score_mirrors(report["mirrors"], real.truth)
    assert mirrors["found"] == mirrors["prefix_right"] == mirrors["true_pairs"] >= 5, mirrors
    assert mirrors["false_pairs"] == mirrors["decoys_reported"] == 0, mirrors
    kinds = {m["kind"] for m in real.truth["mirrors"]}
    assert {"exact", "prefix", "partial"} <= kinds  # the XHTML, Chinese and index-only copies
    spam = score_spam(report["spam_hosts"], report["traps"], real.truth)
    assert spam["found"] == spam["spam_hosts"] == 8 and spam["good_flagged"] == 0, spam
    assert spam["traps"] == [n.EVENTS]

    outcomes = {p["url"]: p["outcome"] for p in pages}
    assert "unparsed" not in outcomes.values()
    # Every page of the XHTML site was read, on the original or on its exact copy (the
    # crawl keeps one of two full mirrors).
    read = {urlsplit(u).path for u, o in outcomes.items() if o == "ok" and hostname(u) in (n.MAINT_FR, n.MAINT_FR_MIRROR)}
    assert read >= {urlsplit(u).path for u in real.truth["html_pages"] if hostname(u) == n.MAINT_FR}

    # One INFO line per host that does not resolve, and no ERROR or WARNING line at all.
    assert not re.search(r"\] (ERROR|WARNING|CRITICAL):", log), re.findall(r".*\] (?:ERROR|WARNING).*", log)[:5]
    unresolved = re.findall(r"\] INFO: (\S+) does not resolve", log)
    assert len(unresolved) == len(set(unresolved)) == run["stats"]["mirrorscope/unresolvable_hosts"] > 10
    off_world = {hostname(u) for u, o in outcomes.items() if o == "dns-error"}
    assert {h.split(":")[0] for h in unresolved} == off_world
    assert not off_world & {h.name for h in real.world.hosts}


def cloaker_world(world: World) -> World:
    """The small world's portal and cloaking host only."""
    cloaking = world.host(n.CLOAKING)
    portal = Host(n.PORTAL, "127.0.20.1", "portal", {
        "/": Resource(body=f'<p><a href="http://{n.CLOAKING}{PORT_MARK}/">Linux tutorials</a></p>'.encode()),
        "/robots.txt": world.host(n.PORTAL).resources["/robots.txt"],
    })
    return World(seed=0, hosts=[portal, cloaking], seed_paths=[(n.PORTAL, "/")])


def test_a_cloaker_is_seen_by_a_crawler_that_says_it_is_one(real: RealSandbox, tmp_path: Path, sqlite_url: str) -> None:
    """The cloaker shows its keyword spam to clients naming a bot, crawler or spider, and
    its clean pages to everyone else. mirrorscope's User-Agent says 'mirrorscope-bot';
    the old one ('mirrorscope/0.1 (+url)') met the clean pages on both fetches."""
    box = RealSandbox(cloaker_world(real.world), tmp_path)
    try:
        verdicts = {}
        for name, extra in (("default", ()), ("old", ("-s", "USER_AGENT=mirrorscope/0.1 (+https://github.com/mirrorscope/mirrorscope)"))):
            url = f"sqlite:///{tmp_path / name}.db"
            box.crawl(url, *extra)
            store = Store(url)
            verdicts[name] = {v["host"].split(":")[0]: v for v in store.host_verdicts("spam")}
            store.close()
    finally:
        box.server.stop()
    flagged = verdicts["default"][n.CLOAKING]
    assert flagged["flagged"] and any(r.startswith("crawler/browser resemblance") for r in flagged["reasons"]), flagged
    # The old User-Agent's check ran, and compared two clean copies.
    old = verdicts["old"][n.CLOAKING]
    assert not old["flagged"] and old["features"]["cloak_resemblance"] > 0.9
