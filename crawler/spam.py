"""Web spam inside the crawl: host verdicts, fed back to the frontier, and persisted.

Page scores come from ``crawler.pipelines.SpamScorePipeline`` (``detectors.spam``); this
module turns them, the host graph and cloaking checks into host verdicts while the crawl
runs, and acts on them:

:class:`SpamMonitor` (one per crawl, :meth:`SpamMonitor.of`)
    Keeps per host the evidence of ``detectors.spam.HostEvidence``: the scores, word
    counts and out-degrees of its last ``SPAM_HOST_SAMPLE`` (200) pages, its near-duplicate
    share, hosts on its address, the host graph for ``detectors.spam_links.link_farms``,
    and its cloaking check. A host is judged whenever new evidence may change its
    verdict (a spam page, a farm, a cloaking check); once spam, it is blocked in the
    frontier (``FrontierPolicy.budget.block``): nothing more of it is queued, and what
    is queued is dropped when popped.

    **Cloaking.** The first HTML page of every host that is not spam to the crawler's eyes
    is fetched a second time with a browser's User-Agent (``CLOAKING_CHECK_ENABLED``) and
    the two sketches are compared. When they resemble each other less than 0.5, the
    crawler's User-Agent fetches the page once more: a page that changes by itself (dates,
    ads) is told apart from one that answers crawlers differently (Wu and Davison, AIRWeb
    2005). One extra fetch per host (two for a suspect) is the price; a crawl of N hosts
    fetches N more pages. A host whose pages are spam to the crawler is condemned by them
    (cloaking or not) and not spent on: the check is for the cloakers the content would
    not catch, the ones that show crawlers a page people never see.

:class:`SpamPipeline` (``ITEM_PIPELINES``, after the page scores and sketches, before
the duplicate pipeline expands a page)
    Feeds the monitor and decides what a page's outlinks may do. The outlinks of a page
    scored as spam are not followed, but for links to its own host until that host has
    ``SPAM_CONFIRM_PAGES`` (2) scored pages: a host is not condemned on one page
    (``detectors.spam``). The hosts a spam page links to are judged without a fetch, on
    who links to them and with which anchors (spam in-links, farm anchors): a link
    farm's other members are known by the thousand links its first page shows, and
    fetching them would only confirm it.

Verdicts are written to ``host_verdicts`` (spam, and trap verdicts of
``detectors.traps`` from the frontier's trap monitor) when the crawl goes idle and when
it closes. ``SPAM_DETECTION_ENABLED`` switches the host verdicts and the gating off (page
scores are the ``SpamScorePipeline``'s).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse
from twisted.internet import task
from twisted.python.failure import Failure

from crawler.frontier import FrontierPolicy
from crawler.hosts import host_key, registrable_domain
from crawler.items import PageItem
from detectors.anchor_spam import AnchorSpamVerdict, anchor_spam
from detectors.canonical import canonical_document
from detectors.sketch import DocumentSketch, SketchParams, resemblance_min_s, sketch_many
from detectors.spam import SPAM_SCORE, FarmGroup, HostEvidence, Verdict, host_verdict, link_farms
from storage.records import PageRecord

logger = logging.getLogger(__name__)

__all__ = ["BROWSER_USER_AGENT", "SpamMonitor", "SpamPipeline"]

#: What a cloaker must take for a person's browser.
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
#: Crawler/browser resemblance below which the crawler's User-Agent fetches the page again.
CLOAK_SUSPECT = 0.5
#: Distinct target hosts kept per source host for the link-farm graph.
MAX_TARGETS_PER_HOST = 2000
#: Seconds between link-farm searches while spam pages keep arriving.
FARM_SEARCH_INTERVAL = 0.25
#: Links from spam pages kept per host they point at (enough for their anchors' statistics).
MAX_SPAM_LINKS = 1000


_MONITORS: WeakKeyDictionary[Any, SpamMonitor] = WeakKeyDictionary()


@dataclass
class _HostState:
    """What the crawl has seen of one host."""

    domain: str
    sample: int
    ip: str | None = None
    pages: int = 0
    duplicates: int = 0
    scores: deque[float] = field(init=False)
    words: deque[int] = field(init=False)
    degrees: deque[int] = field(init=False)
    cloak: float | None = None
    refetch: float | None = None
    checked: bool = False
    verdict: Verdict | None = None

    def __post_init__(self) -> None:
        self.scores = deque(maxlen=self.sample)
        self.words = deque(maxlen=self.sample)
        self.degrees = deque(maxlen=self.sample)


class SpamMonitor:
    """Host spam verdicts during the crawl (see the module docstring)."""

    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.policy = FrontierPolicy.of(crawler)
        self.confirm_pages = settings.getint("SPAM_CONFIRM_PAGES", 2)
        self.sample = settings.getint("SPAM_HOST_SAMPLE", 200)
        self.cloaking = settings.getbool("CLOAKING_CHECK_ENABLED", True)
        self.params = SketchParams(
            seed=settings.getint("SKETCH_SEED"), w=settings.getint("SHINGLE_SIZE"),
            s=settings.getint("SKETCH_MIN_S"), m=settings.getint("SKETCH_MOD_M"),
        )
        self.hosts: dict[str, _HostState] = {}
        self.graph: dict[str, set[str]] = {}
        self.ip_hosts: dict[str, set[str]] = {}
        # Per host linked from spam pages: (source host, target URL, anchor) of those links (bounded).
        self.spam_links: dict[str, list[tuple[str, str, str]]] = {}
        self.anchor_verdicts: dict[str, AnchorSpamVerdict] = {}
        self.farm_of: dict[str, FarmGroup] = {}
        self.blocked: dict[str, str] = {}
        self.cloak_pending: dict[str, tuple[str, DocumentSketch, float | None]] = {}
        self.farms_dirty = False
        self.last_farm_search = 0.0
        self.timer = task.LoopingCall(self._search_farms)

    @classmethod
    def of(cls, crawler: Any) -> SpamMonitor:
        """The crawl's one monitor."""
        monitor = _MONITORS.get(crawler)
        if monitor is None:
            monitor = _MONITORS[crawler] = cls(crawler)
            crawler.signals.connect(monitor.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(monitor.item_scraped, signal=signals.item_scraped)
            crawler.signals.connect(monitor.spider_idle, signal=signals.spider_idle)
            crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    # -- what the crawl tells the monitor ---------------------------------------------

    def _host(self, record: PageRecord) -> _HostState:
        state = self.hosts.get(record.host)
        if state is None:
            domain = record.registrable_domain or registrable_domain(record.hostname)
            state = self.hosts[record.host] = _HostState(domain, self.sample)
        if record.ip and state.ip is None:
            state.ip = record.ip
            self.ip_hosts.setdefault(record.ip, set()).add(record.host)
        return state

    def page(self, item: PageItem) -> None:
        """A page arrived: record its evidence, judge its host if needed, gate its outlinks."""
        record = item.record
        state = self._host(record)
        state.pages += 1
        targets = {link.target_host for link in record.links if link.target_host and link.target_host != record.host}
        if targets:
            known = self.graph.setdefault(record.host, set())
            if len(known) < MAX_TARGETS_PER_HOST:
                known.update(targets)
        if record.spam_score is None:
            return
        state.scores.append(record.spam_score)
        state.words.append(record.word_count or 0)
        state.degrees.append(len({link.target_url for link in record.links}))
        spam_page = record.spam_score >= SPAM_SCORE
        if spam_page:
            self.stats.inc_value("spam/pages")
            self._spam_links(record)
            self.farms_dirty = True
            self._search_farms()
            self._judge(record.host)
            item.outlinks = self._gate(record, state, item.outlinks)
        elif state.verdict is not None or len(state.scores) % 50 == 0:
            self._judge(record.host)
        if record.host in self.blocked and item.outlinks:
            self.stats.inc_value("spam/outlinks_not_followed", len(item.outlinks))
            item.outlinks = []
        # Checked on the host's first page that is not spam (see the module docstring).
        if self.cloaking and not state.checked and not spam_page and record.host not in self.blocked and item.sketch is not None:
            state.checked = True
            self._check_cloaking(record.url, record.host, record.depth, item.sketch, None)

    def item_scraped(self, item: Any) -> None:
        if isinstance(item, PageItem) and item.record.duplicate_of:
            if host_key(item.record.duplicate_of) == item.record.host and item.record.host in self.hosts:
                self.hosts[item.record.host].duplicates += 1

    def _spam_links(self, record: PageRecord) -> None:
        for link in record.links:
            self._spam_link(record.host, link.target_host, link.target_url, link.anchor)

    def _spam_link(self, source: str, target_host: str | None, target_url: str, anchor: str) -> None:
        if target_host and target_host != source:
            links = self.spam_links.setdefault(target_host, [])
            if len(links) < MAX_SPAM_LINKS:
                links.append((source, target_url, anchor.lower()))

    def _anchors(self, host: str) -> tuple[str, ...]:
        return tuple(anchor for _, _, anchor in self.spam_links.get(host, ()))

    def _gate(self, record: PageRecord, state: _HostState, outlinks: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The outlinks of a spam page that are followed: links to confirm its host."""
        own = 0 if record.host in self.blocked else max(0, self.confirm_pages - len(state.scores))
        kept = [(url, depth) for url, depth in outlinks if own and host_key(url) == record.host][:own]
        self.stats.inc_value("spam/outlinks_not_followed", len(outlinks) - len(kept))
        return kept

    # -- verdicts ------------------------------------------------------------------------

    def evidence(self, host: str, inlinks: set[str] | None = None) -> HostEvidence:
        """Everything the crawl knows about ``host`` for ``detectors.spam.host_verdict``
        (``inlinks``: the hosts seen linking to it, when known)."""
        inlinks = inlinks or set()
        spam_inlinks = sum(1 for source in inlinks if source in self.blocked)
        state = self.hosts.get(host)
        if state is None:
            return HostEvidence(host=host, inlink_hosts=len(inlinks), spam_inlink_hosts=spam_inlinks,
                                spam_inlink_anchors=self._anchors(host), anchor_spam_score=self._anchor_score(host))
        return HostEvidence(
            host=host, page_scores=tuple(state.scores), word_counts=tuple(state.words),
            out_degrees=tuple(state.degrees),
            hosts_on_ip=len(self.ip_hosts.get(state.ip, ())) if state.ip else 1,
            near_duplicate_fraction=state.duplicates / state.pages if state.pages >= 10 else None,
            link_farm=self.farm_of.get(host), cloak_resemblance=state.cloak, refetch_resemblance=state.refetch,
            inlink_hosts=len(inlinks), spam_inlink_hosts=spam_inlinks,
            spam_inlink_anchors=self._anchors(host), anchor_spam_score=self._anchor_score(host),
        )

    def _anchor_score(self, host: str) -> float | None:
        verdict = self.anchor_verdicts.get(host)
        return verdict.score if verdict is not None and verdict.flagged else None

    def _judge(self, host: str, inlinks: set[str] | None = None) -> Verdict:
        verdict = host_verdict(self.evidence(host, inlinks))
        if host in self.hosts:
            self.hosts[host].verdict = verdict
        if verdict.is_spam and host not in self.blocked:
            reason = f"spam {verdict.score:.2f}: " + "; ".join(verdict.messages[:3])
            self.blocked[host] = reason
            self.policy.budget.block(host, "spam")
            self.stats.inc_value("spam/hosts_blocked")
            logger.info("spam: %s blocked (%s)", host, reason)
        return verdict

    def _search_farms(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.farms_dirty or (not force and now - self.last_farm_search < FARM_SEARCH_INTERVAL):
            return
        self.farms_dirty, self.last_farm_search = False, now
        names = sorted(set(self.graph).union(*self.graph.values()))
        index = {name: i for i, name in enumerate(names)}
        src = np.fromiter((index[s] for s, ts in self.graph.items() for _ in ts), dtype=np.int64)
        dst = np.fromiter((index[t] for ts in self.graph.values() for t in ts), dtype=np.int64)
        domains = [self.hosts[n].domain if n in self.hosts else registrable_domain(n.rsplit(":", 1)[0]) for n in names]
        for group in link_farms(len(names), src, dst, domains=domains):
            for member in group.members:
                host = names[member]
                if host in self.hosts and self.farm_of.get(host) != group:
                    self.farm_of[host] = group
                    self._judge(host)

    # -- cloaking --------------------------------------------------------------------------

    def _check_cloaking(self, url: str, host: str, depth: int, sketch: DocumentSketch, browser: float | None) -> None:
        """Fetch ``url`` as a browser (``browser`` None) or, after a browser fetch that
        resembled the crawler's ``browser``, as the crawler again."""
        self.cloak_pending[url] = (host, sketch, browser)
        as_browser = browser is None
        headers = {"User-Agent": BROWSER_USER_AGENT} if as_browser else {}
        request = Request(
            url, headers=headers, callback=self._cloak_response, errback=self._cloak_failed,
            priority=-depth, dont_filter=True, meta={"depth": depth, "spam_probe": "browser" if as_browser else "crawler", "cloak_url": url},
        )
        self.stats.inc_value("spam/cloaking_fetches")
        self.crawler.engine.crawl(request)

    def _cloak_response(self, response: Response) -> None:
        url = response.meta.get("cloak_url", response.url)
        pending = self.cloak_pending.pop(url, None)
        if pending is None or not isinstance(response, TextResponse) or response.status >= 300:
            return
        host, crawler_sketch, browser = pending
        sketch = sketch_many([canonical_document(response.text).tokens], self.params)[0]
        resemblance = resemblance_min_s(crawler_sketch, sketch)
        state = self.hosts.get(host)
        if state is None:
            return
        if browser is None:
            state.cloak = resemblance
            if resemblance < CLOAK_SUSPECT:
                # Judged once the crawler's second fetch tells whether the page changes by itself.
                self._check_cloaking(url, host, response.meta.get("depth", 0), crawler_sketch, resemblance)
                return
        else:
            state.refetch = resemblance
        self._judge(host)

    def _cloak_failed(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        if request is not None:
            self.cloak_pending.pop(request.meta.get("cloak_url", request.url), None)
        logger.info("spam: cloaking check failed: %s", failure.getErrorMessage())

    # -- the verdicts' home -------------------------------------------------------------

    def spider_opened(self) -> None:
        spider = self.crawler.spider
        if getattr(spider, "resumed", False):
            self._restore(spider.store)
        self.timer.start(FARM_SEARCH_INTERVAL, now=False)

    def _restore(self, store: Any) -> None:
        """A resumed crawl gets back what the monitor knew: its pages' scores, word counts
        and out-degrees, its hosts' addresses, duplicates and cloaking checks, the links of
        spam pages, the host graph, and the blocks of flagged hosts."""
        for host, score, words, degree in store.page_spam_evidence():
            state = self.hosts.get(host)
            if state is None:
                state = self.hosts[host] = _HostState(registrable_domain(host.rsplit(":", 1)[0]), self.sample)
            state.pages += 1
            if score is not None:
                state.scores.append(score)
                state.words.append(words or 0)
                state.degrees.append(degree)
        for row in store.hosts():
            if row["ip"] and row["name"] in self.hosts:
                self.hosts[row["name"]].ip = row["ip"]
                self.ip_hosts.setdefault(row["ip"], set()).add(row["name"])
        for host, count in store.same_host_duplicates().items():
            if host in self.hosts:
                self.hosts[host].duplicates = count
        for source, target_host, target_url, anchor in store.spam_page_links(SPAM_SCORE):
            self._spam_link(source, target_host, target_url, anchor)
        for verdict in store.host_verdicts("spam"):
            state = self.hosts.get(verdict["host"])
            if state is not None:
                state.cloak = verdict["features"].get("cloak_resemblance")
                state.refetch = verdict["features"].get("refetch_resemblance")
                state.checked = state.cloak is not None
            if verdict["flagged"]:
                self.blocked[verdict["host"]] = "; ".join(verdict["reasons"][:3])
                self.policy.budget.block(verdict["host"], "spam")
        for source, _, _, target in store.host_graph():
            self.graph.setdefault(source, set()).add(target)

    def spider_idle(self) -> None:
        self._persist()

    def spider_closed(self) -> None:
        if self.timer.running:
            self.timer.stop()
        self._persist()

    def rows(self) -> list[dict[str, Any]]:
        """Every host's spam verdict and every trap verdict, as ``host_verdicts`` rows."""
        self.farms_dirty = True
        self._search_farms(force=True)
        inlinks: dict[str, set[str]] = {}
        for source, targets in self.graph.items():
            for target in targets:
                inlinks.setdefault(target, set()).add(source)
        links = [(target, *link) for target, found in self.spam_links.items() for link in found]
        self.anchor_verdicts = anchor_spam(
            [t for t, _, _, _ in links], [u for _, _, u, _ in links], [s for _, s, _, _ in links], [a for _, _, _, a in links]
        ) if links else {}
        rows = []
        # Fetched hosts first: the hosts linked from spam pages are judged by their sources.
        for host in [*self.hosts, *(h for h in self.spam_links if h not in self.hosts)]:
            verdict = self._judge(host, inlinks.get(host))
            state = self.hosts.get(host)
            scores = state.scores if state is not None else ()
            rows.append({
                "host": host, "kind": "spam", "flagged": verdict.is_spam, "score": verdict.score,
                "pages": state.pages if state is not None else 0, "reasons": verdict.messages,
                "features": {
                    "scored_pages": len(scores), "spam_pages": int(sum(s >= SPAM_SCORE for s in scores)),
                    "cloak_resemblance": state.cloak if state is not None else None,
                    "refetch_resemblance": state.refetch if state is not None else None,
                    "link_farm": len(self.farm_of[host].members) if host in self.farm_of else None,
                    "inlink_hosts": len(inlinks.get(host, ())), "spam_links_in": len(self.spam_links.get(host, ())),
                },
            })
        traps = self.policy.traps
        for host in sorted(traps.hosts() | {h for h, s in self.hosts.items() if s.pages >= traps.limits.max_host_pages}):
            trap = traps.verdict(host, self.hosts[host].pages if host in self.hosts else 0)
            if trap.is_trap:
                rows.append({
                    "host": host, "kind": "trap", "flagged": True, "score": 1.0,
                    "pages": self.hosts[host].pages if host in self.hosts else 0, "reasons": trap.messages,
                    "features": {"calendar_urls": traps.calendar_urls[host], "calendar_walk_refused": traps.calendar_walk[host]},
                })
        return rows

    def _persist(self) -> None:
        rows = self.rows()
        self.crawler.spider.store.replace_host_verdicts(rows)
        self.stats.set_value("spam/hosts_flagged", sum(r["flagged"] for r in rows if r["kind"] == "spam"))
        self.stats.set_value("spam/trap_hosts", sum(r["kind"] == "trap" for r in rows))


class SpamPipeline:
    """Feeds each page to the crawl's :class:`SpamMonitor`, which gates its outlinks."""

    def __init__(self, monitor: SpamMonitor):
        self.monitor = monitor

    @classmethod
    def from_crawler(cls, crawler: Any) -> SpamPipeline:
        if not crawler.settings.getbool("SPAM_DETECTION_ENABLED", True):
            raise NotConfigured("SPAM_DETECTION_ENABLED is off")
        return cls(SpamMonitor.of(crawler))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem):
            self.monitor.page(item)
        return item
