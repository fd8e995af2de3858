"""Host spam verdicts from what a crawl saw of its hosts, without Scrapy.

:class:`HostJudge` keeps per host the evidence of ``detectors.spam.HostEvidence``: the
scores, word counts and out-degrees of its last ``sample`` (200) scored pages, its
near-duplicate share, the hosts on its address, the host graph for
``detectors.spam_links.link_farms``, the links spam pages make to it (their anchors,
``detectors.anchor_spam``) and its cloaking check; and it judges hosts on it
(``detectors.spam.host_verdict``). It is fed in two ways:

* page by page during a crawl, by ``crawler.spam.SpamMonitor``, which adds the cloaking
  checks and acts on the verdicts (blocks, gated outlinks);
* from the store (:meth:`HostJudge.restore`): a resumed crawl's monitor, and
  :func:`rejudge_spam` (``mirror-report detect``), which judges every host again on what
  the store holds. A crawl writes its verdicts when it goes idle and when it closes, so a
  crawl killed and never resumed left verdicts older than its last pages; and verdicts
  made by an older version of these rules are brought up to date without a new crawl.
  That judgement adds each host's place in the link graph (:func:`judge_on_links`:
  trust from the crawl's seed hosts, distrust from the condemned hosts, ranks and
  supporters), which a crawl's monitor does not compute.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mirrorscope.crawler.hosts import registrable_domain
from mirrorscope.detectors.anchor_spam import AnchorSpamVerdict, anchor_spam
from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.linkgraph import host_of
from mirrorscope.detectors.spam import SPAM_SCORE, FarmGroup, HostEvidence, Verdict, host_verdict, link_farms
from mirrorscope.detectors.spam_links import LinkEvidence, link_evidence
from mirrorscope.jobs.changes import rapid_change_shares
from mirrorscope.jobs.linkgraph import build_link_graph
from mirrorscope.storage.records import PageRecord

__all__ = ["HOST_SAMPLE", "HostJudge", "HostState", "judge_on_links", "rejudge_spam"]

#: Scored pages per host whose scores, word counts and out-degrees a verdict weighs
#: (``SPAM_HOST_SAMPLE`` in a crawl): enough for stable shares, bounded per host.
HOST_SAMPLE = 200
#: Distinct target hosts kept per source host for the link-farm graph.
MAX_TARGETS_PER_HOST = 2000
#: Links from spam pages kept per host they point at (enough for their anchors' statistics).
MAX_SPAM_LINKS = 1000


@dataclass
class HostState:
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

    def add_scored(self, score: float, words: int, degree: int) -> None:
        self.scores.append(score)
        self.words.append(words)
        self.degrees.append(degree)


class HostJudge:
    """The evidence about hosts and their spam verdicts (see the module docstring).

    ``on_flagged(host)`` is called the first time a host is judged spam; the
    hosts flagged so far (``flagged``: host to reason) count as spam in-links of the
    hosts they link to.
    """

    def __init__(self, sample: int = HOST_SAMPLE, on_flagged: Callable[[str], None] | None = None) -> None:
        self.sample = sample
        self.on_flagged = on_flagged
        self.hosts: dict[str, HostState] = {}
        self.graph: dict[str, set[str]] = {}
        self.ip_hosts: dict[str, set[str]] = {}
        # Per host linked from spam pages: (source host, target URL, anchor) of those links (bounded).
        self.spam_links: dict[str, list[tuple[str, str, str]]] = {}
        self.anchor_verdicts: dict[str, AnchorSpamVerdict] = {}
        self.farm_of: dict[str, FarmGroup] = {}
        self.flagged: dict[str, str] = {}
        #: Per host, its trust, distrust and ranks in the link graph (offline only).
        self.links: dict[str, LinkEvidence] = {}
        #: Host -> share of its re-crawled pages that changed completely (``jobs.changes``).
        self.change_shares: dict[str, float] = {}
        #: The host graph gained an edge since the last farm search.
        self.graph_grew = False

    # -- evidence ----------------------------------------------------------------------------

    def host(self, name: str, domain: str | None = None, ip: str | None = None) -> HostState:
        """The state of host ``name`` (``host:port``), made on first sight."""
        state = self.hosts.get(name)
        if state is None:
            state = self.hosts[name] = HostState(domain or registrable_domain(strip_port(name)), self.sample)
        if ip and state.ip is None:
            state.ip = ip
            self.ip_hosts.setdefault(ip, set()).add(name)
        return state

    def add_page(self, record: PageRecord) -> HostState:
        """Record a fetched page: its host's page count, links to other hosts, and its
        score's evidence when it was scored."""
        state = self.host(record.host, record.registrable_domain, record.ip)
        state.pages += 1
        self.add_links(record)
        if record.spam_score is not None:
            state.add_scored(record.spam_score, record.word_count or 0, len({link.target_url for link in record.links}))
            if record.spam_score >= SPAM_SCORE:
                for link in record.links:
                    self.add_spam_link(record.host, link.target_host, link.target_url, link.anchor)
        return state

    def add_links(self, record: PageRecord) -> None:
        """Add the page's links to other hosts to the host graph."""
        targets = {link.target_host for link in record.links if link.target_host and link.target_host != record.host}
        if targets:
            known = self.graph.setdefault(record.host, set())
            if len(known) < MAX_TARGETS_PER_HOST:
                before = len(known)
                known.update(targets)
                self.graph_grew |= len(known) > before

    def add_spam_link(self, source: str, target_host: str | None, target_url: str, anchor: str) -> None:
        if target_host and target_host != source:
            links = self.spam_links.setdefault(target_host, [])
            if len(links) < MAX_SPAM_LINKS:
                links.append((source, target_url, anchor.lower()))

    def restore(self, store: Any, flags: bool = True) -> None:
        """Take what ``store`` holds: its pages' scores, word counts and out-degrees, its
        hosts' addresses and same-host duplicates, the links of spam pages, the host graph,
        and from its stored spam verdicts the cloaking checks (and, with ``flags``, which
        hosts were flagged)."""
        for host, score, words, degree in store.page_spam_evidence():
            state = self.host(host)
            state.pages += 1
            if score is not None:
                state.add_scored(score, words or 0, degree)
        for row in store.hosts():
            if row["ip"] and row["name"] in self.hosts:
                self.host(row["name"], ip=row["ip"])
        for host, count in store.same_host_duplicates().items():
            if host in self.hosts:
                self.hosts[host].duplicates = count
        for source, target_host, target_url, anchor in store.spam_page_links(SPAM_SCORE):
            self.add_spam_link(source, target_host, target_url, anchor)
        for verdict in store.host_verdicts("spam"):
            state = self.hosts.get(verdict["host"])
            if state is not None:
                state.cloak = verdict["features"].get("cloak_resemblance")
                state.refetch = verdict["features"].get("refetch_resemblance")
                state.checked = state.cloak is not None
            if flags and verdict["flagged"]:
                self.flagged[verdict["host"]] = "; ".join(verdict["reasons"][:3])
        for source, _, _, target in store.host_graph():
            self.graph.setdefault(source, set()).add(target)
        self.change_shares = rapid_change_shares(store)

    def evidence(self, host: str, inlinks: set[str] | None = None) -> HostEvidence:
        """Everything known about ``host`` for ``detectors.spam.host_verdict``
        (``inlinks``: the hosts seen linking to it, when known)."""
        inlinks = inlinks or set()
        spam_inlinks = sum(1 for source in inlinks if source in self.flagged)
        links = self.spam_links.get(host, ())
        anchors = tuple(anchor for _, _, anchor in links)
        urls = len({url for _, url, _ in links})
        anchor_verdict = self.anchor_verdicts.get(host)
        anchor_score = anchor_verdict.score if anchor_verdict is not None and anchor_verdict.flagged else None
        state = self.hosts.get(host)
        if state is None:
            return HostEvidence(host=host, link_farm=self.farm_of.get(host), inlink_hosts=len(inlinks),
                                spam_inlink_hosts=spam_inlinks, spam_inlink_anchors=anchors, spam_inlink_urls=urls,
                                anchor_spam_score=anchor_score, links=self.links.get(host),
                                rapid_change_share=self.change_shares.get(host))
        return HostEvidence(
            host=host, page_scores=tuple(state.scores), word_counts=tuple(state.words),
            out_degrees=tuple(state.degrees),
            hosts_on_ip=len(self.ip_hosts.get(state.ip, ())) if state.ip else 1,
            near_duplicate_fraction=state.duplicates / state.pages if state.pages >= 10 else None,
            link_farm=self.farm_of.get(host), cloak_resemblance=state.cloak, refetch_resemblance=state.refetch,
            inlink_hosts=len(inlinks), spam_inlink_hosts=spam_inlinks,
            spam_inlink_anchors=anchors, spam_inlink_urls=urls, anchor_spam_score=anchor_score,
            links=self.links.get(host), rapid_change_share=self.change_shares.get(host),
        )

    # -- verdicts ------------------------------------------------------------------------------

    def judge(self, host: str, inlinks: set[str] | None = None) -> Verdict:
        verdict = host_verdict(self.evidence(host, inlinks))
        if host in self.hosts:
            self.hosts[host].verdict = verdict
        if verdict.is_spam and host not in self.flagged:
            self.flagged[host] = f"spam {verdict.score:.2f}: " + "; ".join(verdict.messages[:3])
            if self.on_flagged is not None:
                self.on_flagged(host)
        return verdict

    def search_farms(self) -> None:
        """Find the link farms in the host graph; judge the hosts whose farm changed."""
        self.graph_grew = False
        names = sorted(set(self.graph).union(*self.graph.values()))
        index = {name: i for i, name in enumerate(names)}
        src = np.fromiter((index[s] for s, ts in self.graph.items() for _ in ts), dtype=np.int64)
        dst = np.fromiter((index[t] for ts in self.graph.values() for t in ts), dtype=np.int64)
        domains = [self.hosts[n].domain if n in self.hosts else registrable_domain(strip_port(n)) for n in names]
        for group in link_farms(len(names), src, dst, domains=domains):
            for member in group.members:
                host = names[member]
                if self.farm_of.get(host) != group:
                    self.farm_of[host] = group
                    self.judge(host)

    def spam_rows(self, settle: bool = False) -> list[dict[str, Any]]:
        """Every host's spam verdict as a ``host_verdicts`` row: the fetched hosts, then
        the hosts only linked from spam pages (judged by their sources). With ``settle``
        the hosts are judged again until the flagged hosts stop changing."""
        self.search_farms()
        inlinks: dict[str, set[str]] = {}
        for source, targets in self.graph.items():
            for target in targets:
                inlinks.setdefault(target, set()).add(source)
        links = [(target, *link) for target, found in self.spam_links.items() for link in found]
        self.anchor_verdicts = anchor_spam(
            [t for t, _, _, _ in links], [u for _, _, u, _ in links], [s for _, s, _, _ in links], [a for _, _, _, a in links]
        ) if links else {}
        hosts = [*self.hosts, *(h for h in self.spam_links if h not in self.hosts)]
        while True:
            flagged = len(self.flagged)
            rows = [self._row(host, inlinks.get(host, set())) for host in hosts]
            if not settle or len(self.flagged) == flagged:  # flags are only ever added
                return rows

    def _row(self, host: str, inlinks: set[str]) -> dict[str, Any]:
        verdict = self.judge(host, inlinks)
        state = self.hosts.get(host)
        scores = state.scores if state is not None else ()
        # Flags are never withdrawn: a host a crawl blocked stays flagged, with the reason it
        # was flagged for when its evidence no longer holds it (a page lost to a kill).
        earlier = not verdict.is_spam and host in self.flagged
        return {
            "host": host, "kind": "spam", "flagged": verdict.is_spam or earlier, "score": verdict.score,
            "pages": state.pages if state is not None else 0, "reasons": [self.flagged[host]] if earlier else verdict.messages,
            "features": {
                "scored_pages": len(scores), "spam_pages": int(sum(s >= SPAM_SCORE for s in scores)),
                "cloak_resemblance": state.cloak if state is not None else None,
                "refetch_resemblance": state.refetch if state is not None else None,
                "link_farm": len(self.farm_of[host].members) if host in self.farm_of else None,
                "inlink_hosts": len(inlinks), "spam_links_in": len(self.spam_links.get(host, ())),
                "rapid_change_share": self.change_shares.get(host),
                **(asdict(self.links[host]) if host in self.links else {}),
            },
        }


def rejudge_spam(store: Any, sample: int = HOST_SAMPLE, link_features: bool = True) -> dict[str, int]:
    """Judge every host again on what ``store`` holds and replace its spam verdicts
    (trap verdicts, which rest on the crawl's own URL counts, are kept).

    Starts with no host flagged and repeats until the flagged hosts stop changing: a
    host's verdict weighs how many of the hosts linking to it are spam, and a crawl had
    flagged those over its course, before its last judgement. With ``link_features`` the
    hosts are then judged again with their place in the link graph
    (:func:`judge_on_links`).
    """
    judge = HostJudge(sample)
    judge.restore(store, flags=False)
    rows = judge.spam_rows(settle=True)
    if link_features:
        rows = judge_on_links(judge, store)
    store.replace_host_verdicts(rows, kind="spam")
    return {"hosts": len(rows), "flagged": sum(r["flagged"] for r in rows)}


def judge_on_links(judge: HostJudge, store: Any) -> list[dict[str, Any]]:
    """The hosts' verdict rows judged with their trust, distrust and ranks in the store's
    host graph (``detectors.spam_links.link_evidence``), trust from the crawl's seed hosts
    and distrust from the hosts ``judge`` has flagged; again while new hosts are flagged,
    since they are distrust's sources."""
    graph = build_link_graph(store).host_graph()
    index = graph.index()
    trusted = sorted({index[h] for run in store.runs() for h in map(host_of, run["seeds"]) if h in index})
    while True:
        flagged = len(judge.flagged)
        condemned = [index[h] for h in judge.flagged if h in index]
        found = link_evidence(len(graph.names), graph.src, graph.dst, graph.weight, trusted, condemned)
        judge.links = dict(zip(graph.names, found))
        rows = judge.spam_rows(settle=True)
        if len(judge.flagged) == flagged:
            return rows
