"""Helpers the tests call directly; the fixtures are in conftest.py.

Running the project's commands from the checkout, crawling a sandbox world, building
store records and crafted mirror hosts, and the mark of the tests that need the
real-page corpus. No test module imports another.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler
from sqlalchemy import Engine
from sqlalchemy import text as sql_text

from mirrorscope.detectors.mirrors import CandidatePair, HostProfile
from mirrorscope.detectors.sketch import sketch_many
from mirrorscope.storage.records import LinkRecord, PageRecord

ROOT = Path(__file__).resolve().parent.parent


# -- the project's commands ------------------------------------------------------------


#: Runs a command and writes its peak resident memory (KB) to a file. A command forked
#: from the test process straight away would report the test process's peak instead,
#: when larger: Linux keeps the memory high-water mark of a process image across exec.
_MEASURED = """import resource, subprocess, sys
try:
    code = subprocess.run(sys.argv[3:], timeout=float(sys.argv[2])).returncode
except subprocess.TimeoutExpired:
    code = 124
with open(sys.argv[1], "w") as peak:
    peak.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""
_TIMED_OUT = 124


def run_cli(*args: str, timeout: float = 240, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command of the project (``scrapy`` or ``mirror-report``) from the checkout;
    the result's ``peak_rss_kb`` is the command's peak resident memory (its own, or a
    child's it waited for)."""
    full_env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | (env or {})
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp, "peak_rss_kb")
        launcher = (sys.executable, "-c", _MEASURED, str(peak), str(timeout))
        result = subprocess.run([*launcher, *args], cwd=ROOT, env=full_env, capture_output=True, text=True)
        if result.returncode == _TIMED_OUT:
            raise subprocess.TimeoutExpired(args, timeout, result.stdout, result.stderr)
        result.args = list(args)
        result.peak_rss_kb = int(peak.read_text())  # type: ignore[attr-defined]
    return result


def scrapy_crawl(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cli(sys.executable, "-m", "scrapy", "crawl", "web", *args, timeout=timeout)


def mirror_report(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cli(sys.executable, "-m", "mirrorscope.report.cli", *args, timeout=timeout)


def crawl_world(
    world: Any, tmp_path: Path, db_url: str, *extra: str, returncode: int = 0
) -> tuple[subprocess.CompletedProcess, list[tuple[str, str]]]:
    """Serve a small ``sandbox.World`` on loopback and crawl it with the defaults;
    (the finished crawl, which must exit with ``returncode``, the server's requests as
    (host name, path))."""
    from mirrorscope.sandbox import SandboxServer

    with SandboxServer(world, port=0) as server:
        result = scrapy_crawl(*crawl_arguments(world, server.port, tmp_path, db_url), *extra)
        assert result.returncode == returncode, result.stderr[-3000:]
        return result, [(host.split(":")[0], path) for _, host, path in server.request_log()]


def crawl_arguments(world: Any, port: int, tmp_path: Path, db_url: str) -> list[str]:
    """``scrapy crawl web``'s arguments for ``world`` served at ``port`` (its hosts file
    and seeds written to ``tmp_path``), storing in ``db_url``."""
    hosts_file, seeds_file = tmp_path / "hosts", tmp_path / "seeds.txt"
    hosts_file.write_text(world.hosts_file_text())
    seeds_file.write_text("\n".join(world.seeds(port)) + "\n")
    return ["-a", f"seeds={seeds_file}", "-s", f"HOSTS_FILE={hosts_file}", "-s", "ALLOW_PRIVATE_ADDRESSES=True",
            "-s", f"DATABASE_URL={db_url}", "-s", "LOG_LEVEL=WARNING"]


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children (the anchor-bag worker), in MB."""
    total, pids = 0, [pid]
    while pids:
        current = pids.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        pids.extend(map(int, children))
    return total / 1024


def crawl_peak(args: list[str], log: Path, timeout: float = 240, kill_mb: float = 1500) -> tuple[int, str, float, float]:
    """Run ``scrapy crawl web`` with ``args``: (exit code, stderr, peak resident memory of
    its process in MB, peak of its processes' sum sampled every 50 ms). A crawl past
    ``kill_mb`` (so that a regression fails without taking the machine) or ``timeout`` is killed."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    deadline, tree = time.monotonic() + timeout, 0.0
    peak = log.with_suffix(".peak_rss_kb")
    # Through the launcher of run_cli: the crawl's own peak, not the test process's.
    command = [sys.executable, "-c", _MEASURED, str(peak), str(timeout), sys.executable, "-m", "scrapy", "crawl", "web", *args]
    with log.open("w+") as stderr:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        while proc.poll() is None:
            tree = max(tree, _tree_rss_mb(proc.pid))
            if tree > kill_mb or time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
            time.sleep(0.05)
        stderr.seek(0)
        own = int(peak.read_text()) / 1024 if peak.exists() else float("inf")
        return proc.returncode, stderr.read(), own, tree


def _real_pages_missing() -> str | None:
    from mirrorscope.sandbox.realpages import MissingPackages, require

    try:
        require()
    except MissingPackages as exc:
        return str(exc)
    return None


#: Tests on the real-page corpus need Debian's documentation packages (.ci/run installs
#: them); without them they are skipped, saying which to install.
requires_real_pages = pytest.mark.skipif(_real_pages_missing() is not None, reason=_real_pages_missing() or "")


def html_paths(truth: dict, host: str) -> list[str]:
    """Request paths (with the query) of the ok HTML pages of ``host`` in a ground truth, sorted."""
    paths = []
    for url in truth["html_pages"]:
        parts = urlsplit(url)
        if parts.hostname == host:
            paths.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return sorted(paths)


# -- store records -----------------------------------------------------------------------


def page(url: str, depth: int = 0, links: tuple[str, ...] = (), **fields) -> PageRecord:
    """A fetched page as the crawl hands it to the store (``ok`` unless told otherwise)."""
    host = url.split("/")[2]
    return PageRecord(
        url=url, host=host, hostname=host.split(":")[0], port=None, path="/" + url.split("/", 3)[-1],
        depth=depth, outcome=fields.pop("outcome", "ok"), fetched_at=datetime.now(timezone.utc),
        status=200, ip=fields.pop("ip", "127.0.1.1"),
        links=[LinkRecord(t, t.split("/")[2], f"anchor {i}", "before words", "after words") for i, t in enumerate(links)],
        **fields,
    )


def refuse_pages(engine: Engine, condition: str) -> None:
    """Make the database itself refuse every page row where ``condition`` (SQL on ``NEW``)
    holds, as a constraint would: the failure cleaning cannot prevent."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sql_text(
                "CREATE FUNCTION refuse_page() RETURNS trigger AS $$ BEGIN "
                f"IF {condition} THEN RAISE EXCEPTION 'page refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
            ))
            conn.execute(sql_text("CREATE TRIGGER refuse_page BEFORE INSERT OR UPDATE ON pages FOR EACH ROW EXECUTE FUNCTION refuse_page()"))
        else:
            for event in ("INSERT", "UPDATE"):
                conn.execute(sql_text(
                    f"CREATE TRIGGER refuse_page_{event} BEFORE {event} ON pages WHEN {condition} "
                    "BEGIN SELECT RAISE(ABORT, 'page refused by the test'); END"
                ))


# -- documents and crafted mirror hosts ----------------------------------------------------


def prose(seed: int, n: int) -> list[str]:
    """``n`` words drawn Zipf-like from a 3,000-word vocabulary, the same for a seed in any process."""
    rng = np.random.default_rng(seed)
    words = [f"word{i}" for i in range(3000)]
    return [words[i] for i in rng.zipf(1.3, size=n) % 3000]


WORDS = [f"w{i}" for i in range(5000)]
COMMON = ("/", "/index.html", "/about.html", "/contact.html", "/search.html", "/genindex.html")


def text(rng: random.Random, n: int = 300) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def profile(
    name: str,
    pages: dict[str, list[str]],
    ip: str | None = None,
    outlinks: tuple[str, ...] = (),
    content: bool = True,
) -> HostProfile:
    """A host whose pages have real sketches of the given token lists."""
    paths = tuple(pages)
    sketches = sketch_many(list(pages.values())) if content else []
    return HostProfile(
        name=name,
        ip=ip,
        paths=paths,
        outlink_hosts=frozenset(outlinks),
        fingerprints={p: s.fingerprint for p, s in zip(paths, sketches)},
        signatures={p: s.signature for p, s in zip(paths, sketches)},
    )


def site(seed: int, sections: dict[str, int], common: bool = True) -> dict[str, list[str]]:
    """Pages of a crafted site: the common pages, then ``count`` pages in each section."""
    rng = random.Random(seed)
    pages = {p: text(rng) for p in COMMON} if common else {}
    for section, count in sections.items():
        for i in range(count):
            pages[f"/{section}/{rng.choice(WORDS)}-{i}.html"] = text(rng)
    return pages


def pair_of(pairs: list[CandidatePair], a: str, b: str) -> CandidatePair:
    return next(p for p in pairs if {p.a, p.b} == {a, b})


def score_of(pairs: list[CandidatePair], a: str, b: str) -> float:
    found = [p.score for p in pairs if {p.a, p.b} == {a, b}]
    return found[0] if found else 0.0


def project_crawler(**overrides: Any) -> Crawler:
    """A crawler that does not crawl, on the project's settings (so with the crawl's
    ``CrawlContext`` and every default), for the unit tests of its components."""
    import mirrorscope.settings as project

    values = {name: getattr(project, name) for name in dir(project) if name.isupper()}
    return get_crawler(Spider, settings_dict={**values, **overrides})


# -- the browser ---------------------------------------------------------------------------

#: Debian's headless browser and its driver (.ci/run installs them); Selenium is told
#: where they are and never downloads either.
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
_BROWSER_PACKAGES = "chromium chromium-driver"
#: Where the browser tests leave their screenshots (ignored by git).
ARTIFACTS = ROOT / "test-artifacts"

requires_chromium = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason=f"no headless browser: apt-get install --no-install-recommends {_BROWSER_PACKAGES}",
)


def open_chromium(width: int = 1280, height: int = 1400) -> Any:
    """Headless chromium driven by its chromedriver, keeping the console log (``get_log("browser")``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not look for a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
