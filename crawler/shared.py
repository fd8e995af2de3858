"""A frontier shared by N crawl processes on one or many machines, its state in Redis.

Set ``FRONTIER_REDIS_URL`` (``redis://host:6379/0``) and start ``scrapy crawl web`` as many
times as wanted, on as many machines, against one Redis and one PostgreSQL store. Unset,
nothing here is built and the crawl keeps its in-process frontier (``crawler.frontier``).

The policy is the single-process frontier's, unchanged; the state is Redis's:

:class:`SharedQueue` (built by ``HostFairQueue.from_crawler`` when the setting is on)
    Breadth-first by level, round-robin over registrable domains within a level, per-host
    and per-domain queue caps counted for the whole crawl, one seen-set; pushed and popped
    by the Lua scripts of ``crawler.shared_scripts``, so two processes never pop the same
    URL and a URL is queued once. A pop skips a host with ``CONCURRENT_REQUESTS_PER_DOMAIN``
    requests in flight anywhere and looks ``FRONTIER_DEPTH_LOOKAHEAD`` levels deeper when
    every head of the shallowest is busy, as ``HostFairQueue`` does with its own downloader.

Leases
    A popped URL is leased to its process until its page is stored (``StorePipeline``
    reports each written batch, :meth:`SharedFrontier.done`). Each process renews a
    heartbeat key every ``FRONTIER_HEARTBEAT_INTERVAL`` seconds that expires after
    ``FRONTIER_LEASE_TIMEOUT``; any process finding a dead owner puts its leased URLs back
    at the front of their queues and frees its in-flight slots. A URL is fetched twice
    only when its holder died after fetching it and before storing it.

In-flight slots
    ``PoliteDownloader`` takes one of the host's ``CONCURRENT_REQUESTS_PER_DOMAIN`` slots
    in Redis before it sends any request (robots.txt, cloaking checks and mirror samples
    included) and frees it when the download ends: the limit holds for the whole crawl.

The policy's state (:class:`PolicyLog`)
    Budgets, in-link votes, trusted seeds, trap counts and blocked hosts change only by a
    few calls (``HostBudget.record_fetch`` ...); each process appends the calls it makes
    to one Redis stream and replays the others', every ``FRONTIER_HEARTBEAT_INTERVAL``:
    every process's ``FrontierPolicy`` converges to the one a single process would hold,
    and a spam verdict reached by one process blocks its host in all within one interval.

The end
    A process whose crawl goes idle (its downloader, scraper and store writer empty)
    closes only when nothing is queued and nothing is leased anywhere
    (``FINISHED``); until then it polls. No timer counts from the process's start
    (scrapy-redis's ``MAX_IDLE_TIME_BEFORE_CLOSE`` does: SCRAPY-NOTES).

Why not scrapy-redis: its priority queue pops equal priorities in the byte order of the
pickled request (grouped by host, not round-robin), its per-host limit is per process, its
seen-set never forgets a URL that a queue cap dropped, and ending a shared crawl with it
needs an idle timer counted from import. Only its idea (a Redis queue and a Redis seen-set
used through Scrapy's scheduler) is kept; the redis client is the dependency.

Known limits: each process's near-duplicate index holds the pages it fetched (more pages
are stored as non-duplicates with more processes); ``max_pages`` counts per process; mirror
rounds judge the pages their process fetched (``mirror-report detect`` judges the whole
store); a shared crawl does not resume from a ``JOBDIR`` (the queue is in Redis already).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

import redis
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.request import request_from_dict
from twisted.internet import task

from mirrorscope.crawler import shared_scripts as lua
from mirrorscope.crawler.context import CrawlContext, CrawlSetupError
from mirrorscope.crawler.hosts import registrable_domain
from mirrorscope.detectors.budget import HostBudget
from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.traps import TrapMonitor

logger = logging.getLogger(__name__)

__all__ = ["forget_request", "PolicyLog", "SharedCrawl", "SharedFrontier", "SharedHostBudget", "SharedQueue", "SharedTrapMonitor", "connect"]

#: Domains a pop looks at per level: a bound on one script's work (Redis runs one script
#: at a time); the busy ones rotate out as their requests are popped.
POP_WIDTH = 256
#: Ticks between idle checks while nothing is queued anywhere (2 s at the default interval).
IDLE_TICKS = 8
#: Policy events read per replay.
EVENTS_PER_READ = 20_000


def connect(url: str) -> redis.Redis:
    """A client of ``url``, answering a ping; an unreachable Redis is a one-line
    :class:`CrawlSetupError`."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5)
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        raise CrawlSetupError(f"cannot reach Redis at {url}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return client


class SharedFrontier:
    """The frontier's state in Redis under one key prefix (see the module docstring)."""

    def __init__(self, client: redis.Redis, prefix: str, *, per_host: int, host_cap: int, domain_cap: int,
                 lookahead: int, lease_timeout: float, owner: str | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.per_host = per_host
        self.host_cap, self.domain_cap = host_cap, domain_cap
        self.lookahead = lookahead
        self.lease_ms = max(1, int(lease_timeout * 1000))
        self.owner = owner or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._push = client.register_script(lua.PUSH)
        self._pop = client.register_script(lua.POP)
        self._done = client.register_script(lua.DONE)
        self._acquire = client.register_script(lua.ACQUIRE)
        self._free = client.register_script(lua.FREE)
        self._reclaim = client.register_script(lua.RECLAIM)
        self._finished = client.register_script(lua.FINISHED)

    @classmethod
    def from_settings(cls, settings: Any) -> SharedFrontier | None:
        url = settings.get("FRONTIER_REDIS_URL")
        if not url:
            return None
        return cls(
            connect(url), settings.get("FRONTIER_REDIS_PREFIX"),
            per_host=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            host_cap=settings.getint("FRONTIER_HOST_QUEUE_CAP"), domain_cap=settings.getint("FRONTIER_DOMAIN_QUEUE_CAP"),
            lookahead=settings.getint("FRONTIER_DEPTH_LOOKAHEAD"), lease_timeout=settings.getfloat("FRONTIER_LEASE_TIMEOUT"),
        )

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    # -- liveness ----------------------------------------------------------------------

    def heartbeat(self) -> None:
        """This process lives: its leases and slots stay its own for another lease timeout."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self.key(f"alive:{self.owner}"), "1", px=self.lease_ms)
        pipe.sadd(self.key("owners"), self.owner)
        pipe.execute()

    def leave(self) -> None:
        """This process ends: what it still holds is handed back now, not after the timeout."""
        self.client.delete(self.key(f"alive:{self.owner}"))
        self.reclaim()

    def reclaim(self) -> int:
        """Hand the leases and slots of dead processes to the others; the URLs requeued."""
        return int(self._reclaim(args=[self.prefix]))

    # -- the queue ---------------------------------------------------------------------

    def push(self, entries: Iterable[tuple[bool, int, str, str, str, bytes]]) -> list[str | None]:
        """Queue (claim, level, domain, host, url, payload) entries; per entry None when
        queued, else why not (``seen``, ``queue-host-cap``, ``queue-domain-cap``)."""
        args: list[Any] = [self.prefix, self.host_cap, self.domain_cap]
        for claim, level, domain, host, url, payload in entries:
            args += ["1" if claim else "0", level, domain, host, url, payload]
        return [r.decode() or None for r in self._push(args=args)]

    def pop(self) -> tuple[str, bytes] | None:
        """(url, payload) of the next request in the crawl's order, leased to this process."""
        found = self._pop(args=[self.prefix, self.owner, self.per_host, self.lookahead, POP_WIDTH])
        return None if found is None else (found[0].decode(), found[1])

    def done(self, urls: Iterable[str]) -> int:
        """The pages of ``urls`` are stored (or will never be): their leases end."""
        urls = list(dict.fromkeys(urls))
        return int(self._done(args=[self.prefix, self.owner, *urls])) if urls else 0

    def release_all(self) -> int:
        """End every lease this process holds (at idle: nothing more will store them)."""
        return self.done(u.decode() for u in self.client.smembers(self.key(f"held:{self.owner}")))

    def claim(self, kind: str, key: str) -> bool:
        """True for the first process to claim ``key`` among ``kind`` (once per crawl)."""
        return bool(self.client.sadd(self.key(f"once:{kind}"), key))

    def queued(self) -> int:
        return int(self.client.get(self.key("len")) or 0)

    def leased(self) -> int:
        return int(self.client.hlen(self.key("leases")))

    def full(self, host: str, domain: str) -> str | None:
        """``queue-host-cap`` or ``queue-domain-cap`` when the share is taken crawl-wide
        (hosts are counted by name, as the downloader's slots are)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(self.key("hlen"), strip_port(host))
        pipe.hget(self.key("dlen"), domain)
        host_len, domain_len = pipe.execute()
        if int(host_len or 0) >= self.host_cap:
            return "queue-host-cap"
        if int(domain_len or 0) >= self.domain_cap:
            return "queue-domain-cap"
        return None

    def finished(self) -> bool:
        """Nothing queued and nothing leased anywhere (dead processes' leases reclaimed)."""
        self.reclaim()
        return bool(self._finished(args=[self.prefix]))

    # -- requests in flight per host -----------------------------------------------------

    def acquire(self, host: str, token: str) -> bool:
        """One of ``host``'s in-flight slots for the whole crawl; False when all are taken."""
        return bool(self._acquire(args=[self.prefix, self.owner, host, token, self.per_host]))

    def free(self, host: str, token: str) -> None:
        self._free(args=[self.prefix, self.owner, host, token])

    def in_flight(self, host: str) -> int:
        return int(self.client.hlen(self.key(f"inflight:{host}")))

    # -- the crawl run ---------------------------------------------------------------------

    def shared_run(self, start: Any) -> int:
        """The crawl run all processes write to: the first process starts it (``start()``
        returns its id), the others wait for its id."""
        key = self.key("run")
        deadline = time.monotonic() + 60
        while (run := self.client.get(key)) is None:
            if self.client.set(self.key("run-lock"), self.owner, nx=True, ex=60):
                run_id = int(start())
                self.client.set(key, run_id)
                return run_id
            if time.monotonic() > deadline:
                raise CrawlSetupError(f"no crawl run appeared in Redis under {key} within 60 s")
            time.sleep(0.05)
        return int(run)

    def clear(self) -> None:
        """Delete every key of this frontier (a crawl to start from nothing)."""
        keys = list(self.client.scan_iter(match=f"{self.prefix}*", count=1000))
        for start in range(0, len(keys), 1000):
            self.client.delete(*keys[start:start + 1000])


class PolicyLog:
    """The policy's changes, one Redis stream for the crawl: each process appends its own
    (batched) and replays the others' (see the module docstring)."""

    def __init__(self, frontier: SharedFrontier) -> None:
        self.frontier = frontier
        self.client = frontier.client
        self.stream = frontier.key("policy")
        self.outbox: list[bytes] = []
        self.last_id = "0-0"
        self.members: list[Any] = []

    def attach(self, member: Any) -> None:
        self.members.append(member)

    def record(self, *event: Any) -> None:
        self.outbox.append(pickle.dumps(event, protocol=pickle.HIGHEST_PROTOCOL))

    def sync(self) -> int:
        """Send this process's events, apply the others'; the events applied."""
        if self.outbox:
            pipe = self.client.pipeline(transaction=False)
            for event in self.outbox:
                pipe.xadd(self.stream, {"o": self.frontier.owner, "e": event})
            pipe.execute()
            self.outbox = []
        applied = 0
        while True:
            entries = self.client.xrange(self.stream, min=f"({self.last_id}", count=EVENTS_PER_READ)
            if not entries:
                return applied
            for entry_id, fields in entries:
                self.last_id = entry_id.decode()
                if fields[b"o"].decode() == self.frontier.owner:
                    continue
                event = pickle.loads(fields[b"e"])
                for member in self.members:
                    member.replay(event)
                applied += 1


class SharedHostBudget(HostBudget):
    """A :class:`HostBudget` whose changes are recorded in a :class:`PolicyLog` and
    replayed from the other processes'."""

    def __init__(self, *args: Any, log: PolicyLog, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log = log
        self._replaying = False
        log.attach(self)

    def _record(self, *event: Any) -> None:
        if not self._replaying:
            self.log.record(*event)

    def replay(self, event: tuple[Any, ...]) -> None:
        kind, args = event[0], event[1:]
        method = {"fetch": HostBudget.record_fetch, "ip": HostBudget.record_ip, "inlink": HostBudget.record_inlink,
                  "block": HostBudget.block, "trust": HostBudget.trust}.get(kind)
        self._replaying = True
        try:
            if method is not None:
                *positional, keywords = args
                method(self, *positional, **keywords)
            elif kind == "rounds":
                self.rounds = max(self.rounds, args[0])
        finally:
            self._replaying = False

    def record_fetch(self, host: str, domain: str, ip: str | None = None, count: int = 1) -> None:
        self._record("fetch", host, domain, ip, count, {})
        super().record_fetch(host, domain, ip, count)

    def record_ip(self, host: str, ip: str) -> None:
        if host not in self.ip_of:
            self._record("ip", host, ip, {})
        super().record_ip(host, ip)

    def record_inlink(self, source_domain: str, target_host: str, target_domain: str, *, source_ip: str | None = None) -> None:
        self._record("inlink", source_domain, target_host, target_domain, {"source_ip": source_ip})
        super().record_inlink(source_domain, target_host, target_domain, source_ip=source_ip)

    def block(self, host: str, reason: str, *, domain: str | None = None, ip: str | None = None) -> None:
        self._record("block", host, reason, {"domain": domain, "ip": ip})
        super().block(host, reason, domain=domain, ip=ip)

    def trust(self, host: str, domain: str) -> None:
        self._record("trust", host, domain, {})
        super().trust(host, domain)

    def extend(self) -> bool:
        extended = super().extend()
        if extended:
            self._record("rounds", self.rounds)
        return extended


class SharedTrapMonitor(TrapMonitor):
    """A :class:`TrapMonitor` whose calendar counts and walks are shared like the budgets."""

    def __init__(self, *args: Any, log: PolicyLog, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log = log
        log.attach(self)

    def replay(self, event: tuple[Any, ...]) -> None:
        if event[0] == "admit":
            super().admit(event[1], event[2])
        elif event[0] == "walk":
            super().walking_calendar(event[1], event[2], event[3])

    def admit(self, host: str, url: str) -> None:
        self.log.record("admit", host, url)
        super().admit(host, url)

    def walking_calendar(self, host: str, source_url: str, urls: list[str]) -> list[str]:
        steps = super().walking_calendar(host, source_url, urls)
        if steps:
            self.log.record("walk", host, source_url, urls)
        return steps


def forget_request(crawler: Any, request: Request) -> None:
    """The spider marked ``request``'s URL seen when it built the request; a URL a queue
    drops must stay admissible later (the frontier middleware's refill from the store)."""
    forget = getattr(crawler.spider, "forget", None)
    if forget is not None:
        forget(request.url)


class SharedQueue:
    """Scrapy's priority queue on the shared frontier (``SCHEDULER_PRIORITY_QUEUE`` is
    ``HostFairQueue``, which builds this one when ``FRONTIER_REDIS_URL`` is set)."""

    def __init__(self, crawler: Any, frontier: SharedFrontier, policy: Any | None) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.frontier = frontier
        self.policy = policy
        self._logged: set[tuple[str, str]] = set()
        #: Requests only this process can handle (their callback is not the spider's).
        self.local: deque[Request] = deque()
        if policy is not None:
            policy.queue = self

    def full(self, host: str, domain: str) -> str | None:
        return self.frontier.full(host, domain)

    def push(self, request: Request) -> None:
        if self.policy is not None and self.policy.request_refusal(request) is not None:
            return forget_request(self.crawler, request)
        hostname = urlsplit(request.url).hostname or ""
        domain = registrable_domain(hostname)
        host = hostname
        # Only a URL's own request claims it: a retry, a redirect's next hop (which records
        # its chain, as in one process) and a cloaking check are requests for it again.
        meta = request.meta
        claim = not (meta.get("retry_times") or meta.get("spam_probe") or meta.get("redirect_urls"))
        key = request.url if claim else f"{request.url}{lua.KEY_SEP}{uuid.uuid4().hex[:12]}"
        try:
            payload = pickle.dumps(request.to_dict(spider=self.crawler.spider), protocol=pickle.HIGHEST_PROTOCOL)
        except ValueError:
            # A callback of another component than the spider (the cloaking check's):
            # only this process can run it, and its request is that component's own.
            self.local.append(request)
            return None
        (reason,) = self.frontier.push([(claim, -request.priority, domain, hostname, key, payload)])
        if reason is None:
            if self.policy is not None:
                self.policy.charge(request.url)
            return None
        self.stats.inc_value(f"frontier/dropped/{reason}")
        if reason != "seen":
            # Dropped by a cap: the store keeps the link, the refill may admit it later.
            forget_request(self.crawler, request)
            if (host, reason) not in self._logged:
                self._logged.add((host, reason))
                logger.info("frontier: %s has its share of the shared queue (%s); dropping more, first %s", host, reason, request.url)
        return None

    def pop(self) -> Request | None:
        if self.local:
            return self.local.popleft()
        while (found := self.frontier.pop()) is not None:
            key, payload = found
            request = request_from_dict(pickle.loads(payload), spider=self.crawler.spider)
            if self.policy is None or self.policy.blocked(request.url) is None:
                return request
            # Queued before its host was blocked: never fetched, so its lease ends now.
            self.frontier.done([key])
            self.stats.inc_value("frontier/dropped/queued-blocked")
        return None

    def peek(self) -> Request | None:
        return None

    def close(self) -> dict[str, Any]:
        # The state is Redis's; JOBDIR keeps nothing of it.
        return {}

    def __len__(self) -> int:
        return len(self.local) + self.frontier.queued()


class SharedCrawl:
    """The shared frontier's life in one process (an extension; ``NotConfigured`` when
    ``FRONTIER_REDIS_URL`` is unset): heartbeats, policy sync, leases ended as pages are
    stored, and the crawl's end when nothing is queued or leased anywhere."""

    def __init__(self, crawler: Any, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self.timer = task.LoopingCall(self.tick)
        self.beating = threading.Event()
        self.ticks = 0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SharedCrawl:
        if not crawler.settings.get("FRONTIER_REDIS_URL"):
            raise NotConfigured  # the default, in-process frontier: no warning in the log
        return cls(crawler, crawler.settings.getfloat("FRONTIER_HEARTBEAT_INTERVAL"))

    @cached_property
    def context(self) -> CrawlContext:
        return CrawlContext.of(self.crawler)

    @cached_property
    def frontier(self) -> SharedFrontier:
        frontier = self.context.shared
        assert frontier is not None  # FRONTIER_REDIS_URL is set
        return frontier

    def spider_opened(self) -> None:
        self.frontier.heartbeat()
        # The heartbeat beats on a thread of its own: a reactor busy for seconds (a large
        # page's parse, a mirror round, a loaded machine) is alive, and its leases are not
        # to be handed to another process, which would fetch their URLs a second time.
        self.beating.clear()
        threading.Thread(target=self._beat, name="mirrorscope-heartbeat", daemon=True).start()
        self.timer.start(self.interval, now=False)

    def _beat(self) -> None:
        while not self.beating.wait(self.interval):
            try:
                self.frontier.heartbeat()
            except redis.RedisError as exc:
                logger.error("frontier: heartbeat to Redis failed: %s", exc)

    def tick(self) -> None:
        """Policy sync, dead processes' leases reclaimed, and a nudge to the engine: another
        process may have queued what this one can pop (Scrapy's own poll is every 5 s)."""
        try:
            if (log := self.context.policy_log) is not None:
                log.sync()
            requeued = self.frontier.reclaim()
            if requeued:
                self.crawler.stats.inc_value("frontier/shared/reclaimed", requeued)
                logger.warning("frontier: %d URLs leased by a crawl process that stopped beating requeued", requeued)
        except redis.RedisError as exc:
            logger.error("frontier: Redis: %s", exc)
            return
        # Every tick while the shared queue holds requests; else every IDLE_TICKS ticks,
        # for the idle check (which runs the other components' idle work: refills, rounds).
        self.ticks += 1
        engine = self.crawler.engine
        slot = getattr(engine, "_slot", None)
        if slot is not None and not engine.needs_backout() and (self.ticks % IDLE_TICKS == 0 or self.frontier.queued()):
            slot.nextcall.schedule()

    def stored(self, urls: Iterable[str]) -> None:
        """A batch of pages is in the store: their leases end."""
        self.frontier.done(urls)

    def spider_idle(self) -> None:
        """Nothing to do here: close only when nothing is queued or leased anywhere."""
        if self.context.unwritten_pages():
            raise DontCloseSpider
        # What this process still holds cannot be stored by it any more (it is idle).
        self.frontier.release_all()
        if (log := self.context.policy_log) is not None:
            log.sync()
        if not self.frontier.finished():
            raise DontCloseSpider

    def spider_closed(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self.beating.set()
        try:
            if (log := self.context.policy_log) is not None:
                log.sync()
            self.frontier.leave()
        except redis.RedisError as exc:
            logger.error("frontier: Redis at close: %s", exc)
