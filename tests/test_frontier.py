"""The host budget and the frontier: fair, breadth-first, bounded under a link farm."""

from __future__ import annotations

import collections
import itertools
import random
import types
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.utils.misc import load_object

from tests.helpers import project_crawler
from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.frontier import FrontierMiddleware, HostFairQueue
from mirrorscope.crawler.hosts import host_key, registrable_domain
from mirrorscope.crawler.items import PageItem
from mirrorscope.detectors.budget import BudgetPolicy, HostBudget
from mirrorscope.storage.records import LinkRecord, PageRecord

MEMORY = load_object("scrapy.squeues.FifoMemoryQueue")
DISK = load_object("scrapy.squeues.PickleFifoDiskQueue")
FARM = "www.cheap-flights-4u.biz"


# -- the budget ----------------------------------------------------------------------


def crawl_host(budget: HostBudget, host: str, domain: str, ip: str, links_per_page: int, pages: int = 10**6) -> int:
    """Admit a host's self-links page after page (each fetched page yields
    ``links_per_page`` new URLs) until the budget refuses; the fetches admitted."""
    admitted, frontier = 0, 1
    budget.record_fetch(host, domain, ip)
    while frontier and admitted < pages:
        frontier -= 1
        admitted += 1
        for _ in range(links_per_page):
            if budget.refusal(host, domain, ip) is not None:
                break
            budget.record_fetch(host, domain, ip)
            frontier += 1
    return budget.spent_host[host]


def test_a_farm_emitting_1000_links_a_page_gets_only_its_budget() -> None:
    budget = HostBudget()
    budget.record_inlink("quietcoast-notes.net", FARM, "cheap-flights-4u.biz")  # a comment-spam link
    spent = crawl_host(budget, FARM, "cheap-flights-4u.biz", "10.0.5.1", links_per_page=1000)
    assert spent == budget.limit_host(FARM) == 60 + 20
    assert budget.refusal(FARM, "cheap-flights-4u.biz") == "budget-host"
    # Its own outlinks never raise its budget, however many.
    for target in range(1000):
        budget.record_inlink("cheap-flights-4u.biz", f"p{target}.{FARM}", "cheap-flights-4u.biz")
    assert budget.limit_host(FARM) == 80


def test_a_link_farm_cannot_vote_its_members_up() -> None:
    budget = HostBudget()
    farm = [f"www.farm{i}.biz" for i in range(5)]
    for a, b in itertools.permutations(farm, 2):
        budget.record_inlink(a.removeprefix("www."), b, b.removeprefix("www."), source_ip=f"10.0.5.{farm.index(a)}")
    assert [budget.limit_host(h) for h in farm] == [60] * 5  # reciprocal votes are vote trading
    budget.record_inlink("blog.example", farm[0], "farm0.biz")
    assert budget.limit_host(farm[0]) == 80


def test_in_links_from_other_domains_raise_a_budget() -> None:
    budget = HostBudget()
    host, domain = "docs.pyref.org", "pyref.org"
    assert budget.limit_host(host) == 60 and budget.limit_domain(domain) == 120
    for source in ("linkatlas.net", "saltandsimmer.com", "northfield.edu", "linkatlas.net"):
        budget.record_inlink(source, host, domain, source_ip="10.0.0.9")
    assert budget.limit_host(host) == 60 + 3 * 20
    assert budget.limit_domain(domain) == 120 + 3 * 20
    budget.record_inlink("pyref.org", host, domain)  # its own links
    budget.record_ip(host, "10.0.0.2")
    budget.record_inlink("fastmirror.net", host, domain, source_ip="10.0.0.2")  # same server
    assert budget.limit_host(host) == 120
    assert budget.limit_ip("10.0.0.2") == 600 + 3 * 20  # votes made before the address was known count there
    # More fetches are admitted once the votes are in.
    spent = crawl_host(budget, host, domain, "10.0.0.2", links_per_page=30)
    assert spent == 120


def test_blocking_a_voter_withdraws_its_votes() -> None:
    budget = HostBudget()
    budget.record_inlink("farm1.biz", "www.target.example", "target.example")
    budget.record_inlink("blog.example", "www.target.example", "target.example")
    assert budget.limit_host("www.target.example") == 100
    budget.block("www.farm1.biz", "link farm", domain="farm1.biz")
    assert budget.limit_host("www.target.example") == 80
    assert budget.refusal("www.farm1.biz", "farm1.biz") == "blocked-host"
    assert budget.refusal("shop.farm1.biz", "farm1.biz") == "blocked-domain"
    assert budget.blocked("shop.farm1.biz", "farm1.biz") == "link farm"


def test_domain_flooding_shares_one_budget() -> None:
    budget = HostBudget()
    admitted = 0
    for i in range(1000):  # a thousand generated subdomains, each linked to
        host = f"cheap-hotels-{i}.flood.example"
        while budget.refusal(host, "flood.example") is None:
            budget.record_fetch(host, "flood.example")
            admitted += 1
    assert admitted == 120
    # Many registrable domains on one address share the address's budget.
    budget = HostBudget(BudgetPolicy(ip_base=300))
    admitted = 0
    for i in range(200):
        host, domain = f"www.cheap-hotels-{i}.biz", f"cheap-hotels-{i}.biz"
        while budget.refusal(host, domain, "10.0.9.9") is None:
            budget.record_fetch(host, domain, "10.0.9.9")
            admitted += 1
    assert admitted == 300 and budget.refusal("www.new.biz", "new.biz", "10.0.9.9") == "budget-ip"
    budget.block("www.cheap-hotels-0.biz", "spam", ip="10.0.9.9")
    assert budget.refusal("www.other.org", "other.org", "10.0.9.9") == "blocked-ip"


def test_a_host_learned_on_a_blocked_address_loses_its_votes() -> None:
    budget = HostBudget()
    budget.block("spam.example", "spam", ip="10.0.0.66")
    budget.record_inlink("sidekick.biz", "www.target.org", "target.org")
    assert budget.limit_host("www.target.org") == 80
    budget.refusal("www.sidekick.biz", "sidekick.biz")
    budget.record_ip("www.sidekick.biz", "10.0.0.66")
    assert budget.limit_host("www.target.org") == 60


def test_budget_policy_is_validated() -> None:
    with pytest.raises(ValueError):
        BudgetPolicy(host_base=0)


def test_the_sandbox_link_graph_fits_the_budgets_and_its_farm_does_not() -> None:
    """BFS over the sandbox's ground-truth links, admitting through the budget."""
    from mirrorscope.sandbox.world import build_full_world

    world = build_full_world(0)
    truth = world.ground_truth(8080)
    ips = {h.name: h.ip for h in world.hosts}
    roles = {h.name: h.role for h in world.hosts}
    links = collections.defaultdict(list)
    for source, target in truth["edges"]:
        links[source].append(target)

    def keys(url: str) -> tuple[str, str, str]:
        hostname = urlsplit(url).hostname or ""
        return host_key(url) or "", registrable_domain(hostname), ips.get(hostname, "")

    budget = HostBudget()
    queue = collections.deque(truth["seeds"])
    seen = set(queue)
    fetched = collections.Counter()
    for url in queue:
        budget.record_fetch(*keys(url))
    while queue:
        url = queue.popleft()
        host, domain, ip = keys(url)
        fetched[host] += 1
        for target in set(links[url]):
            budget.record_inlink(domain, keys(target)[0], keys(target)[1], source_ip=ip)
        for target in links[url]:
            if target not in seen and budget.refusal(*keys(target)) is None:
                seen.add(target)
                budget.record_fetch(*keys(target))
                queue.append(target)
    def role(url: str) -> str:
        return roles[urlsplit(url).hostname or ""]

    assert [url for url in truth["pages"] if url not in seen and role(url) != "link-farm"] == []
    farm = [h for h in fetched if roles[h.split(":")[0]] == "link-farm"]
    assert farm and all(fetched[h] <= budget.limit_host(h) <= 80 for h in farm)


# -- the queue -----------------------------------------------------------------------


def crawler_with(**settings: Any) -> Any:
    return project_crawler(FRONTIER_ADMISSION=False, **settings)


def memory_queue(crawler: Any, key: str = "", downstream: Any = MEMORY, state: Any = ()) -> HostFairQueue:
    return HostFairQueue.from_crawler(crawler, downstream, key, state, start_queue_cls=downstream)


def request(host: str, path: str, depth: int) -> Request:
    return Request(f"http://{host}{path}", priority=-depth, meta={"depth": depth}, dont_filter=True)


def drain(queue: HostFairQueue) -> list[Request]:
    out = []
    while (r := queue.pop()) is not None:
        out.append(r)
    return out


def test_a_farm_cannot_own_the_queue() -> None:
    crawler = crawler_with()
    queue = memory_queue(crawler)
    others = [f"www.site{i}.example" for i in range(30)]
    for n in range(100_000):
        queue.push(request(FARM, f"/p/{n}.html", 1))
        assert len(queue) <= 1000
    for host, n in itertools.product(others, range(10)):
        queue.push(request(host, f"/page{n}.html", 1))
    assert len(queue) == 1000 + 300
    assert crawler.stats.get_value("frontier/dropped/queue-host-cap") == 99_000
    popped = [urlsplit(r.url).hostname for r in (queue.pop() for _ in range(310))]
    assert collections.Counter(popped) == {FARM: 10, **{h: 10 for h in others}}
    assert len(drain(queue)) == 990 and len(queue) == 0


def test_breadth_first_by_depth_across_hosts() -> None:
    queue = memory_queue(crawler_with())
    rng = random.Random(1)
    pushed = [request(f"h{rng.randrange(8)}.example", f"/{i}", rng.randrange(6)) for i in range(2000)]
    for r in pushed:
        queue.push(r)
    popped = drain(queue)
    depths = [r.meta["depth"] for r in popped]
    assert depths == sorted(depths) and len(popped) == 2000
    # Within a host and depth the order stays first in, first out.
    for host, depth in itertools.product(range(8), range(6)):
        in_order = [r.url for r in pushed if r.url.startswith(f"http://h{host}.") and r.meta["depth"] == depth]
        assert [r.url for r in popped if r.url.startswith(f"http://h{host}.") and r.meta["depth"] == depth] == in_order
    # A shallower request pushed late still comes before the deeper ones left.
    for r in pushed[:5]:
        queue.push(request("late.example", r.url.split("/", 3)[-1], 5))
    queue.push(request("late.example", "/seed", 0))
    assert queue.peek().url == "http://late.example/seed" == queue.pop().url


def test_a_host_with_its_share_in_the_downloader_waits_and_others_take_the_turn() -> None:
    """The queue pops only what the downloader can send (CONCURRENT_REQUESTS_PER_DOMAIN
    2): a busy host's requests stay queued, the next domain or a level within
    FRONTIER_DEPTH_LOOKAHEAD (1 here) goes instead, and nothing when all are busy."""
    crawler = crawler_with(CONCURRENT_REQUESTS_PER_DOMAIN=2, FRONTIER_DEPTH_LOOKAHEAD=1)
    downloader = types.SimpleNamespace(active=set())
    crawler.engine = types.SimpleNamespace(downloader=downloader)
    queue = memory_queue(crawler)
    for n in range(4):
        queue.push(request("busy.example", f"/{n}", 1))
    queue.push(request("free.example", "/a", 2))
    queue.push(request("free.example", "/b", 2))
    queue.push(request("deep.example", "/a", 3))
    downloader.active.update(request("busy.example", f"/in-flight/{n}", 1) for n in range(2))
    assert queue.pop().url == "http://free.example/a"
    downloader.active.add(request("free.example", "/a", 2))
    downloader.active.add(request("free.example", "/c", 2))
    assert queue.pop() is None and len(queue) == 6  # deep.example is two levels past the shallowest
    downloader.active.clear()
    popped = [r.url for r in drain(queue)]
    assert popped == [f"http://busy.example/{n}" for n in range(4)] + ["http://free.example/b", "http://deep.example/a"]


def test_a_wide_host_gets_one_turn_per_round_within_a_depth() -> None:
    queue = memory_queue(crawler_with())
    for n in range(500):
        queue.push(request("wide.example", f"/{n}", 2))
    for n in range(5):
        queue.push(request("narrow.example", f"/{n}", 2))
    hosts = [urlsplit(r.url).hostname for r in (queue.pop() for _ in range(10))]
    assert hosts == ["wide.example", "narrow.example"] * 5


def test_subdomains_of_one_registrable_domain_share_its_cap_and_its_turns() -> None:
    crawler = crawler_with(FRONTIER_HOST_QUEUE_CAP=50, FRONTIER_DOMAIN_QUEUE_CAP=200)
    queue = memory_queue(crawler)
    for i, n in itertools.product(range(100), range(10)):
        queue.push(request(f"h{i}.flood.biz", f"/{n}", 1))
    for n in range(20):
        queue.push(request("www.good.org", f"/{n}", 1))
    assert len(queue) == 220
    assert crawler.stats.get_value("frontier/dropped/queue-domain-cap") == 800
    hosts = [urlsplit(r.url).hostname for r in (queue.pop() for _ in range(40))]
    assert sum(h == "www.good.org" for h in hosts) == 20


def test_disk_queues_resume_and_open_few_files(tmp_path: Path) -> None:
    crawler = crawler_with(FRONTIER_DISK_SLOTS=4)
    key = str(tmp_path / "requests.queue")
    queue = memory_queue(crawler, key, DISK)
    for i, depth in itertools.product(range(40), range(3)):
        queue.push(request(f"www.site{i}.example", f"/d{depth}", depth))
    assert len(queue.queues) <= 4 * 3  # slots x depths, not hosts x depths
    first = queue.pop()
    state = queue.close()
    assert sorted(state["slots"]) and sum(state["hosts"].values()) == 119
    resumed = memory_queue(crawler, key, DISK, state)
    assert len(resumed) == 119
    rest = drain(resumed)
    assert first.meta["depth"] == 0 and [r.meta["depth"] for r in rest] == sorted(r.meta["depth"] for r in rest)
    assert {r.url for r in rest} | {first.url} == {f"http://www.site{i}.example/d{d}" for i in range(40) for d in range(3)}
    resumed.close()
    assert not any(p.is_file() for p in Path(key).rglob("q*"))
    with pytest.raises(ValueError, match="priority queue"):
        memory_queue(crawler, key, DISK, [0, 1])


def test_an_unserialisable_request_leaves_no_empty_disk_queue(tmp_path: Path) -> None:
    queue = memory_queue(crawler_with(), str(tmp_path / "q"), DISK)
    with pytest.raises(ValueError):
        queue.push(Request("http://a.example/", callback=lambda r: None))
    assert len(queue) == 0 and queue.queues == {} and queue.pop() is None


def test_scrapy_scheduler_runs_on_the_queue_with_and_without_jobdir(tmp_path: Path) -> None:
    for jobdir in (None, str(tmp_path / "job")):
        crawler = project_crawler(JOBDIR=jobdir)  # the project's queues
        crawler.spider = Spider.from_crawler(crawler, name="s")
        scheduler = Scheduler.from_crawler(crawler)
        scheduler.open(crawler.spider)
        for n in range(3):
            assert scheduler.enqueue_request(request("a.example", f"/{n}", n))
        scheduler.enqueue_request(request("b.example", "/0", 0))
        assert [r.url for r in iter(scheduler.next_request, None)] == [
            "http://a.example/0", "http://b.example/0", "http://a.example/1", "http://a.example/2",
        ]
        scheduler.close("finished")


# -- admission and the middleware ------------------------------------------------------


def test_the_queue_admits_through_the_budget_and_trap_checks() -> None:
    crawler = project_crawler(FRONTIER_HOST_BUDGET=25, FRONTIER_DOMAIN_BUDGET=50)
    queue = memory_queue(crawler)
    for n in range(1000):
        queue.push(request(FARM, f"/p/{n}.html", 1))
    queue.push(request("www.site.example", "/cart?PHPSESSID=0123", 1))
    queue.push(request("www.site.example", "/about.html", 1))
    assert len(queue) == 26
    stats = crawler.stats.get_stats()
    assert stats["frontier/dropped/budget-host"] == 975
    assert stats["frontier/dropped/trap-session-id"] == 1
    assert stats["frontier/admitted"] == 26
    policy = CrawlContext.of(crawler).policy
    assert policy is CrawlContext.of(crawler).policy and policy.budget.spent_host[FARM] == 25
    policy.budget.block("www.site.example", "spam: hidden keywords")
    queue.push(request("www.site.example", "/contact.html", 1))
    assert stats["frontier/dropped/blocked-host"] == 1 and len(queue) == 26


def page_item(url: str, ip: str, targets: list[str], outlinks: list[str]) -> PageItem:
    parts = urlsplit(url)
    record = PageRecord(
        url=url, host=host_key(url) or "", hostname=parts.hostname or "", port=parts.port, path=parts.path,
        depth=1, outcome="ok", fetched_at=None, ip=ip,  # type: ignore[arg-type]
        registrable_domain=registrable_domain(parts.hostname or ""),
        links=[LinkRecord(t, host_key(t), "anchor", "", "") for t in targets],
    )
    return PageItem(record, outlinks=[(u, 2) for u in outlinks])


def test_the_middleware_learns_votes_and_drops_refused_outlinks() -> None:
    crawler = project_crawler(HOSTS_FILE=None)
    middleware = FrontierMiddleware.from_crawler(crawler)
    policy = CrawlContext.of(crawler).policy
    docs = "http://docs.pyref.org/"
    for n, source in enumerate(("www.linkatlas.net", "www.saltandsimmer.com", "blog.example.net")):
        item = page_item(f"http://{source}/", f"10.0.0.{n}", [docs, docs + "a.html", f"http://{source}/x"], [])
        assert middleware.get_processed_item(item, None) is item
    assert policy.budget.limit_host("docs.pyref.org") == 60 + 3 * 20
    assert policy.budget.ip_of["www.linkatlas.net"] == "10.0.0.0"
    policy.budget.block(FARM, "link farm")
    item = page_item("http://www.quietcoast-notes.net/post.html", "10.0.0.9", [],
                     [f"http://{FARM}/p/1.html", "http://docs.pyref.org/b.html", "http://x.example/a/a/a/"])
    middleware.get_processed_item(item, None)
    assert item.outlinks == [("http://docs.pyref.org/b.html", 2)]
    assert middleware.get_processed_request(request(FARM, "/p/2.html", 2), None) is None
    kept = request("docs.pyref.org", "/c.html", 2)
    assert middleware.get_processed_request(kept, None) is kept
    stats = crawler.stats.get_stats()
    assert stats["frontier/dropped/blocked-host"] == 2 and stats["frontier/dropped/trap-repeated-segment"] == 1
    # A blocked host's links are no votes.
    middleware.get_processed_item(page_item(f"http://{FARM}/", "10.0.5.1", ["http://victim.example/"], []), None)
    assert policy.budget.limit_host("victim.example") == 60


def test_seeds_are_trusted_and_their_votes_count_even_when_linked_back() -> None:
    budget = HostBudget()
    budget.trust("www.linkatlas.net", "linkatlas.net")
    # The directory lists the docs; the docs link back to the directory.
    budget.record_inlink("linkatlas.net", "docs.rubicon-lang.org", "rubicon-lang.org")
    budget.record_inlink("rubicon-lang.org", "www.linkatlas.net", "linkatlas.net")
    assert budget.limit_host("docs.rubicon-lang.org") == 60 + 20
    # Two ordinary sites trading links still cancel out.
    budget.record_inlink("a-site.example", "www.b-site.example", "b-site.example")
    budget.record_inlink("b-site.example", "www.a-site.example", "a-site.example")
    assert budget.limit_host("www.b-site.example") == 60
    # A seed host has no budget but the ceiling, whatever its address shares.
    for _ in range(5000):
        budget.record_fetch("www.linkatlas.net", "linkatlas.net", "10.0.0.1")
    assert budget.refusal("www.linkatlas.net", "linkatlas.net", "10.0.0.1") is None


def test_requests_queued_before_their_host_was_blocked_are_dropped_when_popped() -> None:
    crawler = project_crawler(HOSTS_FILE=None)
    queue = memory_queue(crawler)
    for n in range(3):
        queue.push(request("www.spam.example", f"/{n}.html", 1))
        queue.push(request("www.good.example", f"/{n}.html", 1))
    CrawlContext.of(crawler).policy.budget.block("www.spam.example", "spam")
    assert [urlsplit(r.url).hostname for r in drain(queue)] == ["www.good.example"] * 3
    assert crawler.stats.get_value("frontier/dropped/queued-blocked") == 3


def test_a_full_host_queue_refuses_before_the_spider_sees_the_url() -> None:
    crawler = project_crawler(HOSTS_FILE=None, FRONTIER_HOST_QUEUE_CAP=3)
    queue = memory_queue(crawler)
    policy = CrawlContext.of(crawler).policy
    for n in range(3):
        assert policy.refusal(f"http://{FARM}/p/{n}.html") is None
        queue.push(request(FARM, f"/p/{n}.html", 1))
    assert policy.refusal(f"http://{FARM}/p/9.html") == "queue-host-cap"
    assert policy.refusal("http://www.other.example/") is None
    queue.pop()
    assert policy.refusal(f"http://{FARM}/p/9.html") is None
