"""Crawl budgets: how many fetches a host may have, earned from outside.

Lee, Leonard, Wang and Loguinov, "IRLbot: scaling to 6 billion pages and beyond" (WWW
2008): BFS with per-host rate limits cannot cope with spam that branches without end —
the CS276 notes' worst case, a spam host emitting 1,000 links a page, owns 99% of the
queue by depth 4. IRLbot's fix is a budget per pay-level (registrable) domain that grows
with the domain's in-degree from *other* domains, which a spammer can only raise by
buying domains. Here a budget is the number of fetches admitted to the frontier (charged
when a URL is admitted, as IRLbot admits URLs to its queue, so a page's thousand links
cannot all get in before the first is fetched). Three budgets, all of which must have
room:

``host``
    ``host_base`` (60) + ``per_inlink_domain`` (20) per registrable domain linking to the
    host, at most ``ceiling`` (100,000; the per-host page cap of ``detectors.traps``).
    60 is a small site whole: every good site of the sandbox (3–52 pages) fits, even one
    whose only link from outside it links back to (a directory it is listed in) — a BFS
    over the sandbox's links through these budgets fetches every good page
    (``tests/test_frontier.py``), while a host emitting a thousand links a page gets 60 +
    20 per outside vote. Every domain that links to a host is a vote for 20 more pages.
``registrable domain``
    ``domain_base`` (120) + 20 per domain linking to any of its hosts. Hosts under one
    registrable domain share it, so 1,000 generated subdomains (domain flooding) get 120
    fetches between them, while a site with www. and docs. starts both at full budget.
``IP address``
    ``ip_base`` (600) + 20 per domain linking to any host on the address (from another
    address). Names spread over many registrable domains on one server share it; 600 is
    ten small sites, as shared hosting puts many good sites on one address.

Budgets order the crawl, they do not end it. IRLbot's BEAST puts URLs over budget in
queues it serves less often, not in the bin: when the crawl runs dry with URLs refused
only by budgets, :meth:`HostBudget.extend` doubles every budget (up to the ceiling) and
the frontier admits them (``crawler.frontier``). A documentation site of 650 pages that
one directory links to is crawled whole once nothing better is left, while a farm still
gets its 60 pages only after everything else, and blocks stay blocks.

A vote counts only when it comes from outside: never from the target's own registrable
domain (its own outlinks never raise its budget), never from a source on the same IP
(one server, one operator: Bharat et al. 2000), and not while the target domain links
back to the source domain — reciprocal links are vote trading, the "mutual admiration
societies" of the CS276 notes, so a farm's members cannot raise each other (once a
member's own pages have shown its links back; votes cast before that count until then).
Votes of a blocked domain or IP are withdrawn (guilt by association: once a farm is
recognised, what it voted for loses those votes).

:meth:`HostBudget.trust` marks the crawl's seeds: the user chose them, so a seed host's
budget is the ``ceiling`` and its domain's votes always count, reciprocated or not —
TrustRank's vetted seed set in its simplest form. Without it a site listed by the seed
directory, which links back to the directory (ordinary sites do), would lose its only
outside vote and be cut at 60 pages.

:meth:`HostBudget.block` takes a host (or its whole domain or IP) out of the crawl for
a spam or trap verdict. Memory: counters per host, domain and IP seen, and the distinct
(source domain, target) pairs — the domain graph IRLbot keeps too. A budget check is
O(1) but after a change to the target's votes, its domain's links or the blocks, when
one set difference over its votes is taken again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["BUDGET_REFUSALS", "BudgetPolicy", "HostBudget", "REFUSALS"]

#: The refusals a larger budget lifts (:meth:`HostBudget.extend`).
BUDGET_REFUSALS = ("budget-host", "budget-domain", "budget-ip")
#: The reasons :meth:`HostBudget.refusal` gives, in the order it checks them.
REFUSALS = ("blocked-host", "blocked-domain", "blocked-ip", *BUDGET_REFUSALS)


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    """Budget sizes (see the module docstring for why each)."""

    host_base: int = 60
    domain_base: int = 120
    ip_base: int = 600
    per_inlink_domain: int = 20
    ceiling: int = 100_000

    def __post_init__(self) -> None:
        if min(self.host_base, self.domain_base, self.ip_base, self.ceiling) < 1 or self.per_inlink_domain < 0:
            raise ValueError(f"budgets must be positive: {self}")


class HostBudget:
    """Per host, registrable domain and IP: fetches admitted against votes from outside.

    Call :meth:`refusal` (or :meth:`allow`) before admitting a URL and
    :meth:`record_fetch` when it is admitted; :meth:`record_ip` when a host's address is
    known (or pass ``ip`` to any call) and :meth:`record_inlink` for every (source domain,
    target host) link seen on a fetched page; :meth:`block` on a spam or trap verdict.
    """

    def __init__(self, policy: BudgetPolicy = BudgetPolicy()) -> None:
        self.policy = policy
        self.spent_host: Counter[str] = Counter()
        self.spent_domain: Counter[str] = Counter()
        self.spent_ip: Counter[str] = Counter()
        self.ip_of: dict[str, str] = {}
        self._domain_of: dict[str, str] = {}
        # Source domains voting for each target, and the domains each domain links to.
        self._votes_host: dict[str, set[str]] = {}
        self._votes_domain: dict[str, set[str]] = {}
        self._votes_ip: dict[str, set[str]] = {}
        self._links_to: dict[str, set[str]] = {}
        self._blocked_host: dict[str, str] = {}
        self._blocked_domain: dict[str, str] = {}
        self._blocked_ip: dict[str, str] = {}
        # Source domains whose votes are withdrawn: blocked, or served from a blocked IP.
        self._withdrawn: set[str] = set()
        self._trusted_hosts: set[str] = set()
        self._trusted_domains: set[str] = set()
        # (kind, key) -> (sizes of the sets the count came from, count).
        self._memo: dict[tuple[str, str], tuple[tuple[int, int, int], int]] = {}
        #: Times every budget was doubled (:meth:`extend`).
        self.rounds = 0

    def _ip(self, host: str, ip: str | None) -> str | None:
        if ip is not None and host not in self.ip_of:
            self.record_ip(host, ip)
        return self.ip_of.get(host)

    # -- what the crawl tells the budget ---------------------------------------------

    def record_fetch(self, host: str, domain: str, ip: str | None = None, count: int = 1) -> None:
        """Charge ``count`` admitted fetches to ``host``, its registrable ``domain`` and its IP."""
        self._domain_of.setdefault(host, domain)
        ip = self._ip(host, ip)
        self.spent_host[host] += count
        self.spent_domain[domain] += count
        if ip is not None:
            self.spent_ip[ip] += count

    def record_ip(self, host: str, ip: str) -> None:
        """``host`` is served from ``ip``: its fetches and votes so far count there too."""
        if host in self.ip_of:
            return
        self.ip_of[host] = ip
        self.spent_ip[ip] += self.spent_host[host]
        if host in self._votes_host:
            self._votes_ip.setdefault(ip, set()).update(self._votes_host[host])
        if ip in self._blocked_ip and host in self._domain_of:
            self._withdrawn.add(self._domain_of[host])

    def record_inlink(self, source_domain: str, target_host: str, target_domain: str, *, source_ip: str | None = None) -> None:
        """A fetched page of ``source_domain`` (served from ``source_ip``) links to ``target_host``."""
        if source_domain == target_domain:
            return
        self._domain_of.setdefault(target_host, target_domain)
        target_ip = self.ip_of.get(target_host)
        if source_ip is not None and source_ip == target_ip:
            return
        self._links_to.setdefault(source_domain, set()).add(target_domain)
        self._votes_host.setdefault(target_host, set()).add(source_domain)
        self._votes_domain.setdefault(target_domain, set()).add(source_domain)
        if target_ip is not None:
            self._votes_ip.setdefault(target_ip, set()).add(source_domain)

    def block(self, host: str, reason: str, *, domain: str | None = None, ip: str | None = None) -> None:
        """Admit nothing more from ``host`` (and from all of ``domain`` / ``ip`` if given).

        A blocked domain's or IP's votes for others are withdrawn.
        """
        self._blocked_host.setdefault(host, reason)
        if domain is not None:
            self._blocked_domain.setdefault(domain, reason)
            self._withdrawn.add(domain)
        if ip is not None:
            self._blocked_ip.setdefault(ip, reason)
            self._withdrawn.update(self._domain_of[h] for h, a in self.ip_of.items() if a == ip and h in self._domain_of)

    def trust(self, host: str, domain: str) -> None:
        """``host`` is a seed: its budget is the ceiling (no domain or IP limit) and its
        domain's votes always count."""
        self._trusted_hosts.add(host)
        self._trusted_domains.add(domain)
        self._domain_of.setdefault(host, domain)
        self._memo.clear()

    # -- what the budget answers -------------------------------------------------------

    def blocked(self, host: str, domain: str | None = None, ip: str | None = None) -> str | None:
        """The reason ``host`` (or its domain or IP) was blocked, or None."""
        ip = self._ip(host, ip)
        return (
            self._blocked_host.get(host)
            or (self._blocked_domain.get(domain) if domain is not None else None)
            or (self._blocked_ip.get(ip) if ip is not None else None)
        )

    def _count(self, kind: str, key: str, votes: set[str] | None, own_links: set[str] | None) -> int:
        """Votes for ``key`` that count: not reciprocated by ``own_links``, not withdrawn."""
        if not votes:
            return 0
        sizes = (len(votes), len(own_links) if own_links else 0, len(self._withdrawn))
        memo = self._memo.get((kind, key))
        if memo is not None and memo[0] == sizes:
            return memo[1]
        counted = votes - (own_links - self._trusted_domains) if own_links else votes
        if self._withdrawn:
            counted = counted - self._withdrawn
        self._memo[(kind, key)] = (sizes, len(counted))
        return len(counted)

    def extend(self) -> bool:
        """Double every budget (the crawl ran dry with URLs refused only by budgets);
        False once they are all at the ceiling already."""
        if self.policy.ip_base << self.rounds >= self.policy.ceiling:
            return False
        self.rounds += 1
        return True

    def _limit(self, base: int, votes: int) -> int:
        return min(self.policy.ceiling, (base + self.policy.per_inlink_domain * votes) << self.rounds)

    def limit_host(self, host: str) -> int:
        """Fetches ``host`` may have now."""
        if host in self._trusted_hosts:
            return self.policy.ceiling
        votes = self._count("host", host, self._votes_host.get(host), self._links_to.get(self._domain_of.get(host, "")))
        return self._limit(self.policy.host_base, votes)

    def limit_domain(self, domain: str) -> int:
        """Fetches the hosts of registrable ``domain`` may have between them now."""
        if domain in self._trusted_domains:
            return self.policy.ceiling
        votes = self._count("domain", domain, self._votes_domain.get(domain), self._links_to.get(domain))
        return self._limit(self.policy.domain_base, votes)

    def limit_ip(self, ip: str) -> int:
        """Fetches the hosts on ``ip`` may have between them now."""
        votes = self._count("ip", ip, self._votes_ip.get(ip), None)
        return self._limit(self.policy.ip_base, votes)

    def refusal(self, host: str, domain: str, ip: str | None = None) -> str | None:
        """Why a fetch of ``host`` may not be admitted now (one of ``REFUSALS``), or None."""
        self._domain_of.setdefault(host, domain)
        ip = self._ip(host, ip)
        if host in self._blocked_host:
            return "blocked-host"
        if domain in self._blocked_domain:
            return "blocked-domain"
        if ip is not None and ip in self._blocked_ip:
            return "blocked-ip"
        if host in self._trusted_hosts:
            return "budget-host" if self.spent_host[host] >= self.policy.ceiling else None
        if self.spent_host[host] >= self.limit_host(host):
            return "budget-host"
        if self.spent_domain[domain] >= self.limit_domain(domain):
            return "budget-domain"
        if ip is not None and self.spent_ip[ip] >= self.limit_ip(ip):
            return "budget-ip"
        return None

    def allow(self, host: str, domain: str, ip: str | None = None) -> bool:
        """True when :meth:`refusal` has no objection."""
        return self.refusal(host, domain, ip) is None
