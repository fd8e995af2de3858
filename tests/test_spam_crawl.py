"""End to end: the full sandbox (farm, doorway, cloaking, hidden text, calendar) crawled
with the defences on, scored against its ground truth from the server's own request log."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.sandbox import Host, SandboxServer, World, build_full_world
from mirrorscope.sandbox.markup import document, html_resource
from mirrorscope.sandbox.sites.spam import cloak_for
from mirrorscope.sandbox.text import Prose
from mirrorscope.jobs.spam import rejudge_spam
from mirrorscope.crawler.spam import SpamMonitor
from mirrorscope.detectors.spam import host_features
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world, mirror_report, page, project_crawler, scrapy_crawl


def name(host: str) -> str:
    return host.split(":")[0]


class FullSandbox:
    def __init__(self, tmp: Path) -> None:
        self.world = build_full_world(0)
        self.server = SandboxServer(self.world, port=0).start()
        self.truth = self.world.ground_truth(self.server.port)
        self.hosts_file = tmp / "hosts"
        self.hosts_file.write_text(self.world.hosts_file_text())
        self.seeds_file = tmp / "seeds.txt"
        self.seeds_file.write_text("\n".join(self.truth["seeds"]) + "\n")
        self.spam = {name(h) for h in self.truth["spam_hosts"]}
        self.good = {name(h) for h in self.truth["good_hosts"]}
        self.trap_prefixes = {name(h): p for h, p in self.truth["trap_hosts"].items() if name(h) not in self.spam}

    def crawl(self, db_url: str, *extra: str) -> list[tuple[float, str, str]]:
        """Crawl with the defaults (plus ``extra``); the server's request log of the crawl."""
        self.server.reset_stats()
        result = scrapy_crawl("-a", f"seeds={self.seeds_file}", "-s", f"HOSTS_FILE={self.hosts_file}",
                              "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", f"DATABASE_URL={db_url}",
                              "-s", "LOG_LEVEL=WARNING", *extra, timeout=400)
        assert result.returncode == 0, result.stderr[-3000:]
        return self.server.request_log()

    def spam_or_trap(self, host: str, path: str) -> bool:
        return name(host) in self.spam or any(path.startswith(p) for p in self.trap_prefixes.get(name(host), ()))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FullSandbox]:
    box = FullSandbox(tmp_path_factory.mktemp("full-sandbox"))
    yield box
    box.server.stop()


def verdict_fields(verdict: dict) -> tuple:
    return verdict["host"], verdict["kind"], verdict["flagged"], round(verdict["score"], 6), verdict["reasons"], verdict["pages"]


def test_spam_hosts_are_flagged_with_reasons_and_cost_few_fetches(sandbox: FullSandbox, db_url: str) -> None:
    log = sandbox.crawl(db_url)
    share = sum(sandbox.spam_or_trap(host, path) for _, host, path in log) / len(log)
    assert share <= 0.03, f"{share:.3f} of {len(log)} fetches went to spam hosts and traps"
    store = Store(db_url)
    try:
        crawled = store.host_verdicts()
        flagged = {name(v["host"]): v for v in store.host_verdicts("spam", flagged_only=True)}
        traps = {name(v["host"]): v for v in store.host_verdicts("trap", flagged_only=True)}
        doorway_reasons = [p["spam_reasons"] for p in store.pages() if name(urlsplit(p["url"]).netloc) == "www.cheap-harbourtown-hotels.info" and p["spam_score"]]
        # Judged again from the store alone on the crawl's evidence: the crawl's verdicts.
        rejudge_spam(store, link_features=False)
        rejudged = store.host_verdicts()
        # With the link graph (mirror-report detect), the same hosts flagged.
        rejudge_spam(store)
        flagged_on_links = {name(v["host"]) for v in store.host_verdicts("spam", flagged_only=True)}
    finally:
        store.close()
    diffs = [(a, b) for a, b in zip(map(verdict_fields, rejudged), map(verdict_fields, crawled)) if a != b]
    assert not diffs, '\n'.join(map(str, diffs))
    assert set(flagged) == sandbox.spam == flagged_on_links  # precision and recall 1
    assert not set(flagged) & sandbox.good
    assert set(traps) == {"events.harbourtown-arts.org"}
    assert traps["events.harbourtown-arts.org"]["reasons"][0].startswith("calendar links on calendar pages")
    assert all(0.5 <= v["score"] <= 1.0 and v["reasons"] for v in flagged.values())
    farm = [h for h, role in sandbox.truth["spam"].items() if role == "link-farm"]
    unfetched = [flagged[name(h)] for h in farm if flagged[name(h)]["pages"] == 0]
    assert unfetched and all("share of linking hosts that are spam 1 >= 1" in v["reasons"] for v in unfetched)
    # The doorway's pages were kept (not replaced by their meta-refresh target) and scored.
    assert any("words on a redirecting page" in " ".join(reasons) for reasons in doorway_reasons)

    report = mirror_report("report", "--db", db_url, "--format", "json")
    assert report.returncode == 0, report.stderr
    entries = json.loads(report.stdout)["spam_hosts"]
    assert {name(e["host"]) for e in entries} == sandbox.spam
    assert all(set(e) >= {"host", "score", "reasons", "pages"} for e in entries)
    table = mirror_report("report", "--db", db_url)
    assert "Spam hosts: 8" in table.stdout and "Crawler traps (not spam): 1" in table.stdout


def test_the_defences_lose_no_good_page(sandbox: FullSandbox, sqlite_url: str) -> None:
    """Every bounded URL of a good host is stored: budgets, traps and verdicts cut only spam."""
    sandbox.crawl(sqlite_url, "-s", "EXPAND_DUPLICATES=True", "-s", "MIRROR_DETECTION_ENABLED=False")
    store = Store(sqlite_url)
    try:
        stored = {p["url"] for p in store.pages()}
    finally:
        store.close()
    good_pages = {u for u in sandbox.truth["pages"] if name(urlsplit(u).netloc) not in sandbox.spam}
    assert sorted(good_pages - stored) == []


def prose(topic: str, n: int) -> str:
    return "".join(f"<p>{p}</p>" for p in Prose(topic, random.Random(topic)).paragraphs(n))


def test_a_host_that_shows_crawlers_another_page_than_people_is_flagged_for_cloaking(tmp_path: Path, sqlite_url: str) -> None:
    """The crawler's view is clean, so only the browser refetch can tell (and a second
    crawler fetch rules out a page that changes by itself)."""
    crawler_view = {"/": html_resource(document("The potting shed", prose("crafts", 6)))}
    browser_view = {"/": html_resource(document("Win big tonight", prose("travel", 6)))}
    shed = Host("www.potting-shed.com", "127.0.1.61", "cloaking", crawler_view, cloak=cloak_for(browser_view))
    honest = Host("www.seed-library.org", "127.0.1.62", "other", {"/": html_resource(document("Seeds", prose("outdoors", 5)))})
    portal = Host("www.garden-portal.org", "127.0.1.60", "other", {"/": html_resource(document(
        "Garden links", '<a href="http://www.potting-shed.com@@PORT@@/">Shed</a> <a href="http://www.seed-library.org@@PORT@@/">Seeds</a>'))})
    world = World(seed=0, hosts=[portal, shed, honest], seed_paths=[("www.garden-portal.org", "/")])
    _, fetches = crawl_world(world, tmp_path, sqlite_url)
    store = Store(sqlite_url)
    try:
        verdicts = {name(v["host"]): v for v in store.host_verdicts("spam")}
    finally:
        store.close()
    shed_verdict = verdicts["www.potting-shed.com"]
    assert shed_verdict["flagged"] and shed_verdict["reasons"] == ["crawler/browser resemblance 0 <= 0.5"]
    assert shed_verdict["features"]["refetch_resemblance"] == 1.0
    assert fetches.count(("www.potting-shed.com", "/")) == 3  # crawler, browser, crawler again
    assert not verdicts["www.seed-library.org"]["flagged"] and verdicts["www.seed-library.org"]["features"]["cloak_resemblance"] == 1.0
    assert fetches.count(("www.seed-library.org", "/")) == 2


def test_a_resumed_crawl_judges_hosts_on_the_evidence_stored_before(db_url: str) -> None:
    store = Store(db_url)
    run = store.start_run([], {})
    targets = tuple(f"http://t{n}.test/" for n in range(40))
    template = [page(f"http://tpl.test/{n}", links=targets, ip="127.0.1.9", spam_score=0.2, word_count=250) for n in range(12)]
    template[11].duplicate_of, template[11].duplicate_kind, template[11].duplicate_score = "http://tpl.test/0", "near", 0.9
    farm = page("http://farm.test/", links=("http://victim.test/buy",), ip="127.0.1.9", spam_score=0.9, word_count=80)
    store.write_pages([*template, farm], run)
    features = {"cloak_resemblance": 0.95, "refetch_resemblance": None}
    store.replace_host_verdicts([
        {"host": "tpl.test", "kind": "spam", "flagged": False, "score": 0.3, "pages": 12, "reasons": [], "features": features},
        {"host": "farm.test", "kind": "spam", "flagged": True, "score": 0.9, "pages": 1, "reasons": ["link farm"], "features": {}},
    ])
    crawler = project_crawler(HOSTS_FILE=None)
    context = CrawlContext.of(crawler)
    context.store, context.run = store, (run, True, False)  # a resumed crawl of that store
    monitor = SpamMonitor(crawler, context)
    monitor.spider_opened()
    monitor.timer.stop()
    evidence = monitor.judge.evidence("tpl.test")
    assert evidence.word_counts == (250,) * 12 and evidence.out_degrees == (40,) * 12
    assert evidence.hosts_on_ip == 2 and evidence.near_duplicate_fraction == pytest.approx(1 / 12)
    assert evidence.cloak_resemblance == 0.95 and monitor.judge.hosts["tpl.test"].checked  # not checked again
    features = host_features(evidence)
    assert features.same_word_count_share == 1.0 and features.median_out_degree == 40
    assert monitor.judge.spam_links == {"victim.test": [("farm.test", "http://victim.test/buy", "anchor 0")]}
    assert "farm.test" in monitor.judge.flagged and CrawlContext.of(crawler).policy.budget.blocked("farm.test")
    store.close()
