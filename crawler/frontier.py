"""The frontier: breadth-first, fair across hosts, bounded, and closed to spam and traps.

With Scrapy's queues a host that emits a thousand links a page owns the frontier: the
CS276 notes' worst case has a spam host holding 99% of the queue by depth 4, and
``ScrapyPriorityQueue`` (global depth order) lets a wide host fill each level while
``DownloaderAwarePriorityQueue`` keeps depth order only within a host (SCRAPY-NOTES).
Three components, set in ``settings``:

:class:`HostFairQueue` (``SCHEDULER_PRIORITY_QUEUE``)
    Depth order across the whole crawl (lower ``-priority`` first, as
    ``ScrapyPriorityQueue``), and within a depth round-robin over registrable domains, so
    a wide host gets one turn in N, not N − 1 in N. Each host may hold at most
    ``FRONTIER_HOST_QUEUE_CAP`` (1,000) queued requests and each registrable domain
    ``FRONTIER_DOMAIN_QUEUE_CAP`` (2,000); further requests are dropped and counted
    (``frontier/dropped/queue-host-cap``, ``.../queue-domain-cap``). The store keeps every
    link, so a dropped URL is parked on disk, not lost: when the crawl runs dry the
    middleware refills the queue from the stored links without a page (and so does a
    resumed crawl). RAM is bounded by the caps times the hosts with queued requests,
    however many links a host emits. 1,000 is minutes of one host's work at two requests
    in flight, enough to keep it busy until its pages yield more.

    It is also where URLs are admitted (:class:`FrontierPolicy`), because every request
    passes through it exactly once — the spider's, the duplicate pipeline's
    ``engine.crawl()``, redirects, retries — while spider middlewares miss the last three.

    With ``JOBDIR`` the downstream queues are disk queues (``SCHEDULER_DISK_QUEUE``), and
    each holds two open files; one per domain would exhaust file descriptors in a broad
    crawl, so on disk domains are hashed into ``FRONTIER_DISK_SLOTS`` (64) round-robin
    slots (a slot's domains share its turns, in FIFO order). ``close()`` returns the
    slots, priorities and counters as JSON for Scrapy's ``active.json``, and a queue
    built with that state resumes them; state of another priority queue class is
    refused. Start requests are queued like any other (a seed is a request at depth 0).

    It pops only what the downloader can send: a request whose host already has
    ``CONCURRENT_REQUESTS_PER_DOMAIN`` requests in the downloader (in flight, queued at
    its slot or waiting for robots.txt) is left in place and the next domain takes the
    turn; when every host of the shallowest level is busy, the next
    ``FRONTIER_DEPTH_LOOKAHEAD`` levels are tried in order. Otherwise requests of the
    one or two hosts left at a level filled the downloader's ``CONCURRENT_REQUESTS``,
    waiting in their host's slot while every other host idled (measured on the
    real-page world: 32 requests in the downloader, 1 to 3 in flight, for most of the
    crawl). Within a host, and across hosts within the lookahead, order stays breadth-first.

:class:`FrontierPolicy` (one per crawl, :meth:`FrontierPolicy.of`)
    Admission: trap URLs (``detectors.traps``), blocked hosts, and the host / domain / IP
    budgets of ``detectors.budget``, charged when a request is queued. It learns each
    host's address from the pages fetched (or ``HOSTS_FILE``) and every page's in-links
    to other domains, which raise their budgets. Drops are counted as
    ``frontier/dropped/<reason>`` (``trap-<code>``, ``blocked-host``, ``budget-domain``,
    ...), admissions as ``frontier/admitted``; the first drop of a host for a reason is
    logged. Spam and trap verdicts reach it through ``FrontierPolicy.of(crawler).budget
    .block(host, reason)``.

:class:`FrontierMiddleware` (``SPIDER_MIDDLEWARES``)
    Feeds the policy what pages teach (address, in-links) and drops refused requests and
    refused ``PageItem.outlinks`` before the spider turns them into requests — so a URL
    over budget now stays unseen by the spider and can be admitted later, when in-links
    have raised the budget. A host whose queue is full refuses here too, so the spider's
    seen-set grows with what is queued, not with what a farm emits. It drops a calendar's
    walk through its own dates (``detectors.traps``: calendar-walk). Start requests at
    depth 0 are the seeds: trusted (``HostBudget.trust``: no budget but the ceiling, their
    votes always count). On a resumed crawl it rebuilds the budgets from the store (pages
    per host and the host graph) and trusts the seeds again.

Blocked hosts (spam verdicts of ``crawler.spam``) admit nothing more, and what they had
queued is dropped when popped (``frontier/dropped/queued-blocked``).

Settings: ``FRONTIER_HOST_QUEUE_CAP``, ``FRONTIER_DOMAIN_QUEUE_CAP``,
``FRONTIER_DISK_SLOTS``, ``FRONTIER_ADMISSION``, the budgets ``FRONTIER_HOST_BUDGET``,
``FRONTIER_DOMAIN_BUDGET``, ``FRONTIER_IP_BUDGET``, ``FRONTIER_BUDGET_PER_INLINK_DOMAIN``,
``FRONTIER_HOST_MAX_PAGES`` and the trap limits ``FRONTIER_TRAP_*``; their defaults and
reasons are in ``settings``.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from itertools import groupby
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from scrapy.pqueues import QueueProtocol
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.hosts import host_key, registrable_domain
from mirrorscope.crawler.items import PageItem
from mirrorscope.crawler.shared import SharedQueue, forget_request
from mirrorscope.detectors.budget import BUDGET_REFUSALS, BudgetPolicy, HostBudget
from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.traps import TrapLimits, TrapMonitor, calendar_like
from mirrorscope.storage.records import PageRecord
from mirrorscope.storage.store import Store

logger = logging.getLogger(__name__)

__all__ = ["FrontierMiddleware", "FrontierPolicy", "HostFairQueue"]

def _keys(url: str) -> tuple[str, str, str]:
    """(host key, hostname, registrable domain) of a URL."""
    hostname = urlsplit(url).hostname or ""
    return host_key(url) or hostname, hostname, registrable_domain(hostname)


class FrontierPolicy:
    """Admission to the frontier: traps, blocks and budgets (see the module docstring)."""

    def __init__(self, budget: HostBudget, traps: TrapMonitor, stats: Any, addresses: dict[str, str] | None = None) -> None:
        self.budget = budget
        self.traps = traps
        self.stats = stats
        self.addresses = addresses or {}
        self._logged: set[tuple[str, str]] = set()
        # The crawl's queue, once built: a full host queue refuses too, so that the spider
        # never marks as seen (and keeps in memory) a URL the queue would drop.
        self.queue: HostFairQueue | None = None

    @classmethod
    def from_settings(
        cls, settings: Any, stats: Any, addresses: dict[str, str],
        budget_cls: Callable[[BudgetPolicy], HostBudget] = HostBudget,
        traps_cls: Callable[[TrapLimits], TrapMonitor] = TrapMonitor,
    ) -> FrontierPolicy:
        """The policy of ``settings``; ``budget_cls`` and ``traps_cls`` build its state
        (the shared frontier's record their changes: ``crawler.shared``)."""
        budget = BudgetPolicy(
            host_base=settings.getint("FRONTIER_HOST_BUDGET"),
            domain_base=settings.getint("FRONTIER_DOMAIN_BUDGET"),
            ip_base=settings.getint("FRONTIER_IP_BUDGET"),
            per_inlink_domain=settings.getint("FRONTIER_BUDGET_PER_INLINK_DOMAIN"),
            ceiling=settings.getint("FRONTIER_HOST_MAX_PAGES"),
        )
        traps = TrapLimits(
            max_url_length=settings.getint("FRONTIER_TRAP_MAX_URL_LENGTH"),
            max_path_segments=settings.getint("FRONTIER_TRAP_MAX_PATH_SEGMENTS"),
            max_calendar_urls=settings.getint("FRONTIER_TRAP_MAX_CALENDAR_URLS"),
            max_host_pages=budget.ceiling,
        )
        return cls(budget_cls(budget), traps_cls(traps), stats, addresses)

    def refusal(self, url: str, *, budget: bool = True) -> str | None:
        """Why ``url`` may not be queued now (counted and logged), or None; charges nothing.
        Without ``budget`` only blocks, traps and full queues refuse."""
        host, hostname, domain = _keys(url)
        if budget:
            # The budget first: it is the cheaper check and refuses most under a farm.
            reason = self.budget.refusal(host, domain, self.addresses.get(hostname))
        else:
            reason = "blocked-host" if self.budget.blocked(host, domain, self.addresses.get(hostname)) else None
        if reason is None and self.queue is not None:
            reason = self.queue.full(host, domain)
        detail: object = reason
        if reason is None and (trap := self.traps.refusal(host, url)) is not None:
            reason, detail = f"trap-{trap.code}", trap
        if reason is not None:
            self.stats.inc_value(f"frontier/dropped/{reason}")
            if (host, reason) not in self._logged:
                self._logged.add((host, reason))
                logger.info("frontier: dropping URLs of %s: %s (first: %s)", host, detail, url)
        return reason

    def restore(self, store: Store) -> None:
        """A resumed crawl: the budgets spent and earned so far, from the store (the
        requests still queued are charged again as the spider re-queues them)."""
        for host in store.hosts():
            name, domain = host["name"], host["registrable_domain"] or registrable_domain(strip_port(host["name"]))
            if host["ip"]:
                self.budget.record_ip(name, host["ip"])
            if host["pages"]:
                self.budget.record_fetch(name, domain, count=host["pages"])
        for source, ip, domain, target in store.host_graph():
            target_domain = registrable_domain(strip_port(target))
            self.budget.record_inlink(domain or registrable_domain(strip_port(source)), target, target_domain, source_ip=ip)
        self._restore_traps(store)

    def _restore_traps(self, store: Store) -> None:
        """The calendar URLs admitted so far and the calendar walks refused, replayed from
        the stored pages and their links (as ``walking_calendar`` saw them)."""
        for url in store.fetched_urls():
            if calendar_like(url):
                self.traps.admit(_keys(url)[0], url)
        for (host, source), links in groupby(store.same_host_links(), key=lambda row: row[:2]):
            self.traps.walking_calendar(host, source, [target for _, _, target in links])

    def request_refusal(self, request: Request) -> str | None:
        """Why the queue may not hold ``request`` now (counted and logged), or None."""
        # A mirror validation fetch is one of a sample bounded per candidate pair: it is
        # what spares the mirror's other pages, so budgets do not refuse it.
        return self.refusal(request.url, budget=not request.meta.get("mirror_validation"))

    def trust(self, url: str) -> None:
        """``url`` is a seed: its host's budget is the ceiling (``HostBudget.trust``)."""
        host, _, domain = _keys(url)
        self.budget.trust(host, domain)

    def blocked(self, url: str) -> str | None:
        """The spam or trap verdict that took ``url``'s host out of the crawl, or None."""
        host, hostname, domain = _keys(url)
        return self.budget.blocked(host, domain, self.addresses.get(hostname))

    def walking_calendar(self, record: PageRecord, urls: list[str]) -> set[str]:
        """The links of the page ``record`` that walk its own calendar (not followed:
        ``detectors.traps``, calendar-walk), counted and logged."""
        dates = [u for u in urls if calendar_like(u) and host_key(u) == record.host]
        steps = self.traps.walking_calendar(record.host, record.url, dates) if dates else []
        if steps:
            self.stats.inc_value("frontier/dropped/trap-calendar-walk", len(steps))
            if (record.host, "trap-calendar-walk") not in self._logged:
                self._logged.add((record.host, "trap-calendar-walk"))
                logger.info("frontier: not walking the calendar of %s (first: %s)", record.host, steps[0])
        return set(steps)

    def charge(self, url: str) -> None:
        """``url`` was queued: one fetch off its host's, domain's and IP's budgets."""
        host, hostname, domain = _keys(url)
        self.budget.record_fetch(host, domain, self.addresses.get(hostname))
        self.traps.admit(host, url)
        self.stats.inc_value("frontier/admitted")

    def learn(self, record: PageRecord) -> None:
        """A page was fetched: its host's address, and its links as votes for other hosts."""
        if record.ip:
            self.budget.record_ip(record.host, record.ip)
        source = record.registrable_domain or registrable_domain(record.hostname)
        if not record.links or self.budget.blocked(record.host, source):
            return
        # One vote per target host; keys as the queue computes them (the link's netloc is not).
        for target_url in {link.target_host: link.target_url for link in record.links}.values():
            target_host, _, target_domain = _keys(target_url)
            self.budget.record_inlink(source, target_host, target_domain, source_ip=record.ip)


class HostFairQueue:
    """Breadth-first across the crawl, round-robin across domains, capped per host and domain."""

    @classmethod
    def from_crawler(
        cls,
        crawler: Any,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        startprios: Any = (),
        *,
        start_queue_cls: type[QueueProtocol] | None = None,
    ) -> HostFairQueue | SharedQueue:
        # start_queue_cls: start requests share the depth-0 level with the others.
        settings = crawler.settings
        context = CrawlContext.of(crawler)
        if context.shared is not None:
            # FRONTIER_REDIS_URL: the same policy over the queue in Redis (crawler.shared).
            policy = context.policy if settings.getbool("FRONTIER_ADMISSION") else None
            return SharedQueue(crawler, context.shared, policy)
        return cls(
            crawler,
            downstream_queue_cls,
            key,
            startprios,
            host_cap=settings.getint("FRONTIER_HOST_QUEUE_CAP"),
            domain_cap=settings.getint("FRONTIER_DOMAIN_QUEUE_CAP"),
            disk_slots=settings.getint("FRONTIER_DISK_SLOTS"),
            depth_lookahead=settings.getint("FRONTIER_DEPTH_LOOKAHEAD"),
            per_host=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            policy=CrawlContext.of(crawler).policy if settings.getbool("FRONTIER_ADMISSION") else None,
        )

    def __init__(
        self,
        crawler: Any,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        startprios: Any = (),
        *,
        host_cap: int,
        domain_cap: int,
        disk_slots: int,
        depth_lookahead: int = 0,
        per_host: int = 0,
        policy: FrontierPolicy | None = None,
    ) -> None:
        if min(host_cap, domain_cap, disk_slots) < 1:
            raise ValueError("FRONTIER_HOST_QUEUE_CAP, FRONTIER_DOMAIN_QUEUE_CAP and FRONTIER_DISK_SLOTS must be positive")
        self.crawler = crawler
        self.stats = crawler.stats
        self.downstream_queue_cls = downstream_queue_cls
        self.key = key
        self.host_cap = host_cap
        self.domain_cap = domain_cap
        self.depth_lookahead = depth_lookahead
        self.per_host = per_host
        self.policy = policy
        # In memory every domain is its own slot; on disk, one of disk_slots (open files).
        self.disk_slots = disk_slots if key else 0
        self.queues: dict[tuple[int, str], QueueProtocol] = {}
        # priority -> slots holding requests at that priority, in round-robin order
        # (a level is removed when its last slot empties).
        self.levels: dict[int, OrderedDict[str, None]] = {}
        # (priority, slot) -> hostname of the request at its head (a disk queue's peek unpickles).
        self.heads: dict[tuple[int, str], str] = {}
        self.host_len: Counter[str] = Counter()
        self.domain_len: Counter[str] = Counter()
        self._len = 0
        self._logged: set[tuple[str, str]] = set()
        if policy is not None:
            policy.queue = self
        if startprios:
            self._resume(startprios)

    # -- persistence --------------------------------------------------------------------

    def _resume(self, state: Any) -> None:
        if not isinstance(state, dict) or "slots" not in state:
            raise ValueError(
                f"{type(self).__name__} cannot resume the queue state {type(state).__name__} of another "
                "SCHEDULER_PRIORITY_QUEUE: resume a crawl with the priority queue it started with"
            )
        for slot, priorities in state["slots"].items():
            for priority in priorities:
                queue = self._factory(priority, slot)
                if queue:
                    self._register(priority, slot, queue)
                    self._len += len(queue)
                else:
                    queue.close()
        self.host_len.update(state.get("hosts", {}))
        self.domain_len.update(state.get("domains", {}))

    def close(self) -> dict[str, Any]:
        """Close the downstream queues; the state to resume from (JSON)."""
        slots: dict[str, list[int]] = {}
        for (priority, slot), queue in self.queues.items():
            slots.setdefault(slot, []).append(priority)
            queue.close()
        self.queues.clear()
        self.levels.clear()
        self.heads.clear()
        return {"slots": slots, "hosts": dict(+self.host_len), "domains": dict(+self.domain_len)}

    # -- the queue ----------------------------------------------------------------------

    def _slot(self, domain: str) -> str:
        if not self.disk_slots:
            return domain
        digest = hashlib.blake2b(domain.encode("utf-8"), digest_size=8).digest()
        return f"{int.from_bytes(digest, 'big') % self.disk_slots:03d}"

    def _factory(self, priority: int, slot: str) -> QueueProtocol:
        return build_from_crawler(self.downstream_queue_cls, self.crawler, f"{self.key}/{slot}/{priority}")

    def _register(self, priority: int, slot: str, queue: QueueProtocol) -> None:
        self.queues[(priority, slot)] = queue
        self.levels.setdefault(priority, OrderedDict())[slot] = None

    def _drop(self, reason: str, host: str, request: Request) -> None:
        self.stats.inc_value(f"frontier/dropped/{reason}")
        if (host, reason) not in self._logged:
            self._logged.add((host, reason))
            logger.info("frontier: %s has its share of the queue (%s); dropping more, first %s", host, reason, request.url)

    def full(self, host: str, domain: str) -> str | None:
        """``queue-host-cap`` or ``queue-domain-cap`` when ``host``'s share is taken, else None."""
        if self.host_len[host] >= self.host_cap:
            return "queue-host-cap"
        if self.domain_len[domain] >= self.domain_cap:
            return "queue-domain-cap"
        return None

    def _forget(self, request: Request) -> None:
        forget_request(self.crawler, request)

    def push(self, request: Request) -> None:
        if self.policy is not None and self.policy.request_refusal(request) is not None:
            return self._forget(request)
        host, _, domain = _keys(request.url)
        if (cap := self.full(host, domain)) is not None:
            self._forget(request)
            return self._drop(cap, host, request)
        priority = -request.priority
        slot = self._slot(domain)
        queue = self.queues.get((priority, slot))
        if queue is None:
            queue = self._factory(priority, slot)
            try:
                queue.push(request)  # may raise ValueError: not serialisable
            except ValueError:
                queue.close()
                raise
            self._register(priority, slot, queue)
        else:
            queue.push(request)
        if self.policy is not None:
            self.policy.charge(request.url)
        self.host_len[host] += 1
        self.domain_len[domain] += 1
        self._len += 1

    def _busy_hosts(self) -> set[str]:
        """Hostnames with ``per_host`` requests in the downloader already (none without
        an engine, or without a per-host limit)."""
        try:
            downloader = self.crawler.engine.downloader
        except RuntimeError:  # no engine: a queue used on its own
            return set()
        if not self.per_host:
            return set()
        held = Counter(urlparse_cached(r).hostname for r in downloader.active)
        return {host for host, n in held.items() if n >= self.per_host}

    def _head_host(self, key: tuple[int, str]) -> str:
        host = self.heads.get(key)
        if host is None:
            head = self.queues[key].peek()  # type: ignore[attr-defined]
            host = self.heads[key] = (urlparse_cached(head).hostname or "") if head is not None else ""
        return host

    def _next(self) -> tuple[int, str] | None:
        """(priority, slot) of the request to pop: the first slot in round-robin order of
        the shallowest level whose head's host is not busy, looking up to
        ``depth_lookahead`` levels deeper; None when every host in reach is busy."""
        busy = self._busy_hosts()
        for priority in heapq.nsmallest(self.depth_lookahead + 1, self.levels):
            for slot in self.levels[priority]:
                if not busy or self._head_host((priority, slot)) not in busy:
                    return priority, slot
        return None

    def pop(self) -> Request | None:
        # Requests queued before their host was blocked are dropped on the way out.
        while (request := self._pop()) is not None:
            if self.policy is None or (reason := self.policy.blocked(request.url)) is None:
                return request
            self.stats.inc_value("frontier/dropped/queued-blocked")
            host = _keys(request.url)[0]
            if (host, "queued-blocked") not in self._logged:
                self._logged.add((host, "queued-blocked"))
                logger.info("frontier: dropping queued URLs of %s (%s)", host, reason)
        return None

    def _pop(self) -> Request | None:
        found = self._next()
        if found is None:
            return None
        priority, slot = found
        level = self.levels[priority]
        queue = self.queues[(priority, slot)]
        request = queue.pop()
        self.heads.pop((priority, slot), None)
        if queue:
            level.move_to_end(slot)
        else:
            del level[slot], self.queues[(priority, slot)]
            if not level:
                del self.levels[priority]
            queue.close()
            if self.key:
                # The slot's directory, once its last priority queue has removed its files.
                with suppress(OSError):
                    Path(self.key, slot).rmdir()
        if request is not None:
            host, _, domain = _keys(request.url)
            self.host_len[host] -= 1
            self.domain_len[domain] -= 1
            if self.host_len[host] <= 0:
                del self.host_len[host]
            if self.domain_len[domain] <= 0:
                del self.domain_len[domain]
            self._len -= 1
        return request

    def peek(self) -> Request | None:
        """The request :meth:`pop` would return now, left in place (if the queues can peek)."""
        found = self._next()
        return None if found is None else self.queues[found].peek()  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return self._len


class FrontierMiddleware(BaseSpiderMiddleware):
    """Teaches the policy from fetched pages and drops refused requests and outlinks early."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.context = CrawlContext.of(crawler)
        self.policy = self.context.policy
        self.refilled_at = 0
        self.budget_drops = 0
        self.truncated = False
        self.waiting = False
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    def _drops(self, *reasons: str) -> int:
        stats = self.crawler.stats
        return sum(stats.get_value(f"frontier/dropped/{reason}", 0) for reason in reasons)

    def _parked(self) -> int:
        """URLs dropped so far that wait in the store: queue caps and budgets refused them."""
        return self._drops("queue-host-cap", "queue-domain-cap", *BUDGET_REFUSALS)

    def spider_idle(self) -> None:
        """URLs dropped because their host's queue was full are parked in the store (the
        links without a page): when the crawl runs dry, the frontier is refilled from it,
        up to the caps again, until nothing more is admitted. The last pages' links may
        not be stored yet: the crawl then stays open and refills once they are."""
        spider = self.crawler.spider
        if (self._parked() == self.refilled_at and not self.truncated) or not hasattr(spider, "unfetched"):
            return
        if self.context.unwritten_pages():
            if not self.waiting:
                self.waiting = True
                deferred_from_coro(self._refill_once_written()).addErrback(
                    lambda failure: logger.error("frontier: refill failed: %s", failure.getErrorMessage())
                )
            raise DontCloseSpider
        if self._refill():
            raise DontCloseSpider

    async def _refill_once_written(self) -> None:
        try:
            await self.context.store_written()
        finally:
            self.waiting = False
        # Requests scheduled here wake the engine; with none, its next idle check closes.
        self._refill()

    def _admit_unfetched(self) -> int:
        spider = self.crawler.spider
        admitted = 0
        for url, depth in spider.unfetched():
            if self.policy.traps.was_walked(_keys(url)[0], url):
                continue
            # One at a time: each admission fills the queue the next refusal looks at.
            # Counted only when a request was made: with max_pages spent none is, and a
            # refill that counted admissions kept the crawl open for ever.
            if self.policy.refusal(url) is None:
                admitted += spider.expand([(url, depth)])
        return admitted

    def _refill(self) -> int:
        drops = self._parked()
        admitted = self._admit_unfetched()
        # Nothing else left: what budgets alone refused gets larger budgets
        # (detectors.budget: budgets order the crawl, they do not end it).
        while not admitted and self._drops(*BUDGET_REFUSALS) > self.budget_drops and self.policy.budget.extend():
            self.budget_drops = self._drops(*BUDGET_REFUSALS)
            self.crawler.stats.set_value("frontier/budget_rounds", self.policy.budget.rounds)
            logger.info("frontier: every crawl budget doubled (round %d): only budgets refused what is left", self.policy.budget.rounds)
            admitted = self._admit_unfetched()
        self.refilled_at = self._parked()
        self.truncated = self.refilled_at > drops
        self.crawler.stats.inc_value("frontier/refilled", admitted)
        if admitted:
            logger.info("frontier: refilled %d URLs from the store", admitted)
        return admitted

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        spider = self.crawler.spider
        if self.context.resumed:
            self.policy.restore(self.context.store)
            # Seeds fetched before the restart are not requested again, but stay trusted.
            for url in getattr(spider, "seed_urls", ()):
                self.policy.trust(url)
        # Start requests are the user's seeds: trusted (``FrontierPolicy.trust``).
        async for request in start:
            if isinstance(request, Request) and (request.meta.get("depth", 0) == 0 or request.meta.get("recrawl")):
                # A re-crawl's stored pages were admitted by the crawls that fetched them.
                self.policy.trust(request.url)
            elif isinstance(request, Request) and self.policy.traps.was_walked(_keys(request.url)[0], request.url):
                # A resumed crawl's frontier is the stored links: a calendar's walk is
                # among them, and refused again (as the refill does).
                if hasattr(spider, "forget"):
                    spider.forget(request.url)
                continue
            yield request

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        return request if self.policy.refusal(request.url) is None else None

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if isinstance(item, PageItem):
            record = item.record
            self.policy.learn(record)
            if item.outlinks:
                walk = self.policy.walking_calendar(record, [url for url, _ in item.outlinks])
                item.outlinks = [
                    (url, depth) for url, depth in item.outlinks if url not in walk and self.policy.refusal(url) is None
                ]
        return item
