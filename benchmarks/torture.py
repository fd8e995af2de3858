"""The torture world crawled by mirrorscope beside a plain Scrapy spider, then a crawl
killed and resumed against the same crawl uninterrupted.

**Hostile pages.** ``build_torture_world()`` (sandbox/torture.py: adjacent-link pages of
429 KB and 7.5 MB, a NUL in a header, a 400-character host name, redirects with 600-byte
and 10 KB ``Location`` headers, URLs with brackets, a 100 KB link, control characters in
a title, an endless chunked body, a 50 MB body without a length, a robots.txt that is a
gzip bomb, a dead port) is served from this process and crawled to depth 1 by

- **ours**: ``scrapy crawl web`` with the defaults, each case's outcome read from the
  store and checked against the world's ``EXPECTED``;
- **plain Scrapy** (the baseline): benchmarks/followall.py, Scrapy's defaults made
  breadth-first, on the same world to the same depth; it records no outcomes, so only its
  peak memory and time stand beside ours.

Peak RSS is each crawl process's own (``wait4``'s ``ru_maxrss``), in MB of 10^6 bytes.

**Kill and resume.** ``sandbox.resume.run_kill_resume`` crawls the full sandbox world
(``build_full_world(0)``, 41 hosts) once uninterrupted into SQLite (the reference) and once
into the store asked for (SQLite, or a fresh schema of the PostgreSQL at ``--postgres``),
killed with SIGKILL at 3%, 35% and 70% of the reference's pages and resumed from the same
``JOBDIR`` until done; against the reference it counts the pages of the world's own
content never recorded (``resume_pages_lost``), the requests to spam and trap hosts beyond
the reference's (``resume_extra_fetches``) and the reference's mirror verdicts the resumed
store holds, as a share of them (``resume_mirror_pairs_kept``, target 1.0).

    python benchmarks/torture.py [--runs 1] [--no-baseline] [--no-resume] [--database sqlite|postgres]

Last line: ``hostile_cases=.. hostile_failed=.. peak_rss_mb=.. resume_pages_lost=..
resume_extra_fetches=.. resume_mirror_pairs_kept=..``, then the baseline's
``scrapy_peak_rss_mb`` and ``scrapy_seconds``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy  # noqa: E402

from mirrorscope.sandbox import SandboxServer, build_full_world, build_torture_world  # noqa: E402
from mirrorscope.sandbox.resume import run_kill_resume  # noqa: E402
from mirrorscope.sandbox.torture import EXPECTED  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

DEPTH = 1
CRAWL_TIMEOUT = 900.0
#: A crawl whose resident memory passes this is killed, so that a regression cannot take
#: the shared machine (before issue 16 our crawl of this world passed 23 GB).
MEMORY_CAP_MB = 4000.0
_WATCH_SECONDS = 0.2
#: Where the resumed crawl is killed, as fractions of the reference's pages (the issue's).
KILL_FRACTIONS = (0.03, 0.35, 0.7)
POSTGRES = "postgresql+psycopg://127.0.0.1:5432/test"


def _rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # already gone
        return 0.0
    kb = next((line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")), "0")
    return int(kb) * 1024 / 1e6


def _watch(process: subprocess.Popen, deadline: float, done: threading.Event) -> None:
    """Kill `process` past its deadline or the memory cap."""
    while not done.wait(_WATCH_SECONDS):
        if time.monotonic() > deadline or _rss_mb(process.pid) > MEMORY_CAP_MB:
            process.kill()
            return


def run_measured(command: list[str], timeout: float) -> tuple[int, float, float, str]:
    """(exit code, wall seconds, peak RSS in MB, stderr tail) of one process, killed
    after `timeout` seconds or past MEMORY_CAP_MB."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        done = threading.Event()
        threading.Thread(target=_watch, args=(process, started + timeout, done), daemon=True).start()
        _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage, not every child's
        done.set()
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    return process.returncode, seconds, usage.ru_maxrss * 1024 / 1e6, tail


def case_key(url: str) -> str:
    """A page's URL as `EXPECTED` names it: host and path, no scheme or port."""
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def ours(world_dir: Path, db: str) -> dict[str, float]:
    code, seconds, peak, tail = run_measured([
        sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={world_dir / 'seeds.txt'}",
        "-s", f"DEPTH_LIMIT={DEPTH}", "-s", f"HOSTS_FILE={world_dir / 'hosts'}", "-s", "ALLOW_PRIVATE_ADDRESSES=True",
        "-s", "RESOLVE_ONLY_HOSTS_FILE=True", "-s", f"DATABASE_URL={db}", "-s", "LOG_LEVEL=WARNING",
    ], CRAWL_TIMEOUT)
    store = Store(db, migrate=False) if code == 0 else None
    outcomes = {case_key(p["url"]): p["outcome"] for p in store.pages()} if store else {}
    failed = sorted(k for k, want in EXPECTED.items() if outcomes.get(k) != want)
    for key in failed:
        print(f"  case {key}: expected {EXPECTED[key]}, got {outcomes.get(key)}", flush=True)
    if code != 0:
        print(f"  our crawl exited {code}: {tail}", flush=True)
    return {"hostile_cases": len(EXPECTED), "hostile_failed": len(failed), "peak_rss_mb": peak, "seconds": seconds}


def plain_scrapy(world_dir: Path, seed: str) -> dict[str, float]:
    code, seconds, peak, tail = run_measured(
        [sys.executable, str(ROOT / "benchmarks" / "followall.py"), seed, str(world_dir / "hosts"), "1", str(DEPTH)], CRAWL_TIMEOUT
    )
    if code != 0:
        print(f"  plain Scrapy exited {code}: {tail}", flush=True)
    return {"scrapy_peak_rss_mb": peak, "scrapy_seconds": seconds}


def hostile(runs: int, baseline: bool) -> tuple[list[dict[str, float]], dict[str, float] | None]:
    world = build_torture_world()
    with SandboxServer(world, port=0) as server, tempfile.TemporaryDirectory(prefix="torture-") as tmp:
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        results = []
        for i in range(runs):
            results.append(ours(world_dir, f"sqlite:///{tmp}/ours-{i}.db"))
            print(f"ours #{i + 1}: {results[-1]}", flush=True)
        plain = plain_scrapy(world_dir, world.seeds(server.port)[0]) if baseline else None
        if plain is not None:
            print(f"plain Scrapy: {plain}", flush=True)
    return results, plain


@contextmanager
def store_url(database: str, directory: Path, postgres: str) -> Iterator[str]:
    """A fresh store: a SQLite file in `directory`, or a schema of PostgreSQL dropped after."""
    if database == "sqlite":
        yield f"sqlite:///{directory / 'resumed.db'}"
        return
    schema = f"ms_torture_{uuid.uuid4().hex[:10]}"
    engine = sqlalchemy.create_engine(postgres)
    with engine.begin() as conn:
        conn.execute(sqlalchemy.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{postgres}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def resume(database: str, postgres: str) -> dict[str, float]:
    """The full world killed and resumed against it uninterrupted."""
    with tempfile.TemporaryDirectory(prefix="torture-resume-") as tmp, store_url(database, Path(tmp), postgres) as url:
        outcome = run_kill_resume(build_full_world(0), url, f"sqlite:///{tmp}/reference.db", KILL_FRACTIONS, Path(tmp) / "work")
    print(f"kill and resume on {database}: {outcome.figures()}", flush=True)
    for url in outcome.pages_lost:
        print(f"  lost: {url}", flush=True)
    pairs = len(outcome.reference.mirror_pairs)
    return {
        "resume_pages_lost": len(outcome.pages_lost), "resume_extra_fetches": outcome.extra_fetches,
        "resume_mirror_pairs_kept": outcome.mirror_pairs_kept / pairs if pairs else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="crawls of the torture world by ours (medians)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain Scrapy crawl")
    parser.add_argument("--no-resume", action="store_true", help="skip the kill and resume comparison")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite", help="the resumed crawl's store")
    parser.add_argument("--postgres", default=POSTGRES, help="PostgreSQL URL for --database postgres (a schema is made and dropped)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    results, plain = hostile(args.runs, not args.no_baseline)
    figures = {k: statistics.median(r[k] for r in results) for k in ("hostile_cases", "hostile_failed", "peak_rss_mb", "seconds")}
    print(f"{'figure':16s} {'ours':>10s} {'plain Scrapy':>13s}")
    print(f"{'peak_rss_mb':16s} {figures['peak_rss_mb']:10.1f} {plain['scrapy_peak_rss_mb'] if plain else float('nan'):13.1f}")
    print(f"{'seconds':16s} {figures['seconds']:10.1f} {plain['scrapy_seconds'] if plain else float('nan'):13.1f}")
    last = f"hostile_cases={figures['hostile_cases']:g} hostile_failed={figures['hostile_failed']:g} peak_rss_mb={figures['peak_rss_mb']:.0f}"
    if not args.no_resume:
        resumed = resume(args.database, args.postgres)
        last += (f" resume_pages_lost={resumed['resume_pages_lost']} resume_extra_fetches={resumed['resume_extra_fetches']}"
                 f" resume_mirror_pairs_kept={resumed['resume_mirror_pairs_kept']:.3f}")
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if plain is not None:
        last += f" scrapy_peak_rss_mb={plain['scrapy_peak_rss_mb']:.0f} scrapy_seconds={plain['scrapy_seconds']:.1f}"
    print(last)


if __name__ == "__main__":
    main()
