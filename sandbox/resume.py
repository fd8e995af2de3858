"""Kill and resume: a sandbox world crawled once without interruption (the reference) and
once killed with SIGKILL at given fractions of the reference's pages, resumed from the same
``JOBDIR`` until done, then compared.

``run_kill_resume(world, database_url, reference_url, kill_fractions, workdir)`` does it all
and returns a :class:`ResumeOutcome`: the pages the resumed crawl lost, the fetches it made
beyond the reference's on spam and trap hosts, the mirror pairs it kept, the URLs robots.txt
disallows that it fetched (``ResumeOutcome.figures()`` in numbers). ``WorldCrawl`` serves the
world and runs the crawls (``reference``, ``kill_resume``, ``run``), so that one reference
can serve several resumed crawls. The crawls run as ``scrapy crawl web`` in a subprocess, so
a kill is a real ``kill -9`` of a whole crawl; the world is served on loopback by this
process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mirrorscope.sandbox.model import World
from mirrorscope.sandbox.server import SandboxServer
from mirrorscope.sandbox.truth import SPAM_ROLES, is_copied
from mirrorscope.storage.store import Store

#: Seconds a crawl of a sandbox world may take before the comparison gives up on it.
CRAWL_TIMEOUT = 300
#: Pages per store batch in these crawls: small, so that the store follows the crawl
#: closely and a kill lands near the fraction asked for.
BATCH = 20


@dataclass
class StoredCrawl:
    """What a store holds after a crawl: each URL's outcome and depth (-1: a mirror
    validation fetch), the mirror verdicts (unordered pair and level) and the flagged
    spam and trap hosts."""

    outcomes: dict[str, str]
    depths: dict[str, int]
    mirror_pairs: set[tuple[tuple[str, str], str]]
    flagged_hosts: set[tuple[str, str]]

    @classmethod
    def read(cls, database_url: str) -> StoredCrawl:
        store = Store(database_url)
        try:
            pages = store.pages()
            pairs = {(tuple(sorted((p["url_a"], p["url_b"]))), p["level"]) for p in store.mirror_pairs()}
            flagged = {(v["kind"], v["host"]) for v in store.host_verdicts() if v["flagged"]}
        finally:
            store.close()
        return cls({p["url"]: p["outcome"] for p in pages}, {p["url"]: p["depth"] for p in pages}, pairs, flagged)  # type: ignore[arg-type]


@dataclass
class ResumeOutcome:
    """The reference crawl and the killed-and-resumed one, side by side."""

    reference: StoredCrawl
    resumed: StoredCrawl
    #: Server requests per host name, over every run of each crawl.
    reference_requests: Counter[str]
    resumed_requests: Counter[str]
    #: Host names of the world's spam and trap hosts.
    defended_hosts: frozenset[str]
    #: The world's hosts as the ground truth describes them (role, of, prefix).
    hosts: dict[str, dict[str, object]]
    #: Pages in the store when each kill struck.
    killed_at: list[int] = field(default_factory=list)

    def _missing(self) -> list[str]:
        return sorted(set(self.reference.outcomes) - set(self.resumed.outcomes))

    @property
    def pages_lost(self) -> list[str]:
        """URLs the reference recorded and the resumed crawl never did, on the world's
        own content: not on a mirror's side nor on a spam or trap host. Those are fetched
        as mirror samples (and their links) or up to a cap, and which ones depends on
        when a round ran or which calendar URL came first, in an uninterrupted crawl too."""
        return [url for url in self._missing() if not is_copied(url, self.hosts) and _name(url) not in self.defended_hosts]

    @property
    def samples_missing(self) -> list[str]:
        """The reference's URLs on mirror sides that the resumed crawl did not record."""
        return [url for url in self._missing() if is_copied(url, self.hosts)]

    @property
    def extra_fetches(self) -> int:
        """Requests to spam and trap hosts beyond the reference's."""
        return sum(max(0, self.resumed_requests[h] - self.reference_requests[h]) for h in self.defended_hosts)

    @property
    def mirror_pairs_kept(self) -> int:
        """The reference's mirror verdicts (pair and level) that the resumed crawl stored too."""
        return len(self.reference.mirror_pairs & self.resumed.mirror_pairs)

    @property
    def robots_fetched(self) -> list[str]:
        """URLs robots.txt disallows (outcome ``robots`` in the reference) that the resumed
        crawl recorded otherwise."""
        return sorted(
            url for url, outcome in self.reference.outcomes.items()
            if outcome == "robots" and self.resumed.outcomes.get(url, "robots") != "robots"
        )

    def figures(self) -> dict[str, object]:
        """The comparison in numbers (what ``benchmarks`` print)."""
        return {
            "killed_at": self.killed_at, "reference_pages": len(self.reference.outcomes),
            "resumed_pages": len(self.resumed.outcomes), "resume_pages_lost": len(self.pages_lost),
            "resume_mirror_samples_missing": len(self.samples_missing), "resume_extra_fetches": self.extra_fetches,
            "resume_mirror_pairs_kept": f"{self.mirror_pairs_kept}/{len(self.reference.mirror_pairs)}",
            "resumed_mirror_pairs": len(self.resumed.mirror_pairs), "robots_fetched": len(self.robots_fetched),
            "flagged_hosts_kept": f"{len(self.reference.flagged_hosts & self.resumed.flagged_hosts)}/{len(self.reference.flagged_hosts)}",
            "requests": {"reference": sum(self.reference_requests.values()), "resumed": sum(self.resumed_requests.values())},
        }


class WorldCrawl:
    """A world served on loopback and the command that crawls it into a store."""

    def __init__(self, world: World, workdir: Path, settings: dict[str, str] | None = None) -> None:
        self.world = world
        self.workdir = workdir
        self.settings = settings or {}
        self.server = SandboxServer(world, port=0)

    def __enter__(self) -> WorldCrawl:
        self.server.start()
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "hosts").write_text(self.world.hosts_file_text())
        (self.workdir / "seeds.txt").write_text("\n".join(self.world.seeds(self.server.port)) + "\n")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def defended_hosts(self) -> frozenset[str]:
        return frozenset(h.name for h in self.world.hosts if h.role in SPAM_ROLES or h.unbounded)

    def hosts(self) -> dict[str, dict[str, object]]:
        return {h.name: {"role": h.role, "of": h.of, "prefix": h.prefix} for h in self.world.hosts}

    def command(self, database_url: str, jobdir: Path | None) -> list[str]:
        args = [
            sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={self.workdir / 'seeds.txt'}",
            "-s", f"HOSTS_FILE={self.workdir / 'hosts'}", "-s", "RESOLVE_ONLY_HOSTS_FILE=True",
            "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", f"DATABASE_URL={database_url}",
            "-s", "LOG_LEVEL=WARNING", "-s", f"STORE_BATCH_SIZE={BATCH}",
        ]
        args += [arg for name, value in self.settings.items() for arg in ("-s", f"{name}={value}")]
        return args + (["-s", f"JOBDIR={jobdir}"] if jobdir is not None else [])

    def requests(self) -> Counter[str]:
        """Requests the server received per host name since the last call."""
        counted = Counter(host.split(":")[0] for _, host, _ in self.server.request_log())
        self.server.reset_stats()
        return counted

    def run(self, database_url: str, jobdir: Path | None, kill_at: int | None = None) -> int | None:
        """Crawl until done, or SIGKILL the crawl once the store holds ``kill_at`` pages;
        the pages stored when it was killed (None: it finished first)."""
        log = self.workdir / "crawl.log"
        with log.open("a") as stderr:
            process = subprocess.Popen(self.command(database_url, jobdir), cwd=self.workdir, env=_environment(),
                                       stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + CRAWL_TIMEOUT
        try:
            while process.poll() is None and time.monotonic() < deadline:
                if kill_at is not None and stored_pages(database_url) >= kill_at:
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    return stored_pages(database_url)
                time.sleep(0.02)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        if process.returncode != 0:
            raise RuntimeError(f"crawl exited {process.returncode}: {log.read_text()[-2000:]}")
        return None


    def reference(self, database_url: str) -> Reference:
        """An uninterrupted crawl (with a ``JOBDIR`` of its own, as the resumed one has)."""
        self.requests()
        self.run(database_url, self.workdir / "reference-job")
        return Reference(StoredCrawl.read(database_url), self.requests())

    def kill_resume(self, database_url: str, reference: Reference, kill_fractions: Sequence[float], jobdir: Path) -> ResumeOutcome:
        """A crawl into ``database_url`` killed at each of ``kill_fractions`` (ascending)
        of ``reference``'s pages and resumed from ``jobdir`` until done, beside ``reference``."""
        self.requests()
        killed_at = []
        for fraction in kill_fractions:
            stored = self.run(database_url, jobdir, kill_at=max(1, int(fraction * len(reference.stored.outcomes))))
            if stored is not None:
                killed_at.append(stored)
        self.run(database_url, jobdir)
        return ResumeOutcome(
            reference.stored, StoredCrawl.read(database_url), reference.requests, self.requests(),
            self.defended_hosts(), self.hosts(), killed_at,
        )


@dataclass
class Reference:
    """An uninterrupted crawl: what it stored and the requests it made per host name."""

    stored: StoredCrawl
    requests: Counter[str]


def _name(url: str) -> str:
    return urlsplit(url).hostname or ""


def _environment() -> dict[str, str]:
    """The crawl's environment: the project's settings wherever it runs, and no database
    from the caller's environment (the command line names it)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return env | {"SCRAPY_SETTINGS_MODULE": "mirrorscope.settings"}


def stored_pages(database_url: str) -> int:
    store = Store(database_url)
    try:
        return store.page_count()
    finally:
        store.close()


def run_kill_resume(
    world: World, database_url: str, reference_url: str, kill_fractions: Sequence[float], workdir: Path,
    settings: dict[str, str] | None = None,
) -> ResumeOutcome:
    """Crawl ``world`` into ``reference_url`` without interruption, then into
    ``database_url`` with a SIGKILL at each of ``kill_fractions`` (ascending) of the
    reference's pages, resuming from one ``JOBDIR`` until the crawl finishes; compare.
    ``settings`` are Scrapy settings for both crawls (``-s NAME=VALUE``)."""
    with WorldCrawl(world, workdir, settings) as crawl:
        return crawl.kill_resume(database_url, crawl.reference(reference_url), kill_fractions, workdir / "job")
