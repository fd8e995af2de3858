"""The demo's sandbox: a world served by a process of its own, crawled, and the scores printed.

The sandbox runs in a child process so that the crawl keeps this process's core; it
writes its hosts file, seeds and ground truth into a temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from mirrorscope.report.crawl import run_crawl
from mirrorscope.report.errors import UsageError
from mirrorscope.report.render import safe_text

DEMO_DATABASE = "mirrorscope-demo.db"
_WORLD_FLAGS = {"full": ["--full"], "standard": [], "real": ["--real"]}
_START_SECONDS = 60


@dataclass
class SandboxCrawl:
    """How a crawl of the sandbox ended, how long it took, and the world's ground truth."""

    reason: str
    seconds: float
    truth: dict[str, Any]


def remove_demo_database() -> None:
    """Delete the default demo database, so that each demo starts from an empty store."""
    for suffix in ("", "-wal", "-shm"):
        Path(DEMO_DATABASE + suffix).unlink(missing_ok=True)


def _start_sandbox(seed: int, port: int, workdir: Path, world: str) -> tuple[subprocess.Popen, list[str]]:
    """The sandbox in a process of its own (the crawl keeps this one's core)."""
    command = [sys.executable, "-m", "mirrorscope.sandbox", "--seed", str(seed), "--port", str(port), "--out", str(workdir)]
    command += _WORLD_FLAGS[world]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seeds_file = workdir / "seeds.txt"
    deadline = time.monotonic() + _START_SECONDS
    # truth.json is written last, once every socket listens.
    while not (workdir / "truth.json").exists():
        if server.poll() is not None:
            raise UsageError(f"the sandbox did not start: {(server.stderr.read() or '').strip().splitlines()[-1:]}")
        if time.monotonic() > deadline:
            server.kill()
            raise UsageError(f"the sandbox did not start within {_START_SECONDS} s")
        time.sleep(0.05)
    return server, [line.strip() for line in seeds_file.read_text().splitlines() if line.strip()]


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def crawl_sandbox(seed: int, port: int, world: str, url: str, console: Console) -> SandboxCrawl:
    """Serve the sandbox ``world`` built from ``seed`` and crawl it into the store at ``url``."""
    with tempfile.TemporaryDirectory(prefix="mirrorscope-demo-") as tmp:
        workdir = Path(tmp)
        server, seeds = _start_sandbox(seed, port, workdir, world)
        try:
            console.print(f"sandbox: {len(seeds)} seed(s), hosts in {workdir / 'hosts'}; crawling into {url}")
            started = time.monotonic()
            reason = run_crawl(
                {"seeds": str(workdir / "seeds.txt")},
                # The real pages link to the real web: names outside the world fail without a query.
                {"DATABASE_URL": url, "HOSTS_FILE": str(workdir / "hosts"), "ALLOW_PRIVATE_ADDRESSES": True,
                 "RESOLVE_ONLY_HOSTS_FILE": True, "LOG_LEVEL": "WARNING"},
                quiet=True,
            )
            elapsed = time.monotonic() - started
            truth = json.loads((workdir / "truth.json").read_text())
        finally:
            _stop(server)
    return SandboxCrawl(reason, elapsed, truth)


def print_scores(console: Console, sandbox: dict[str, Any]) -> None:
    """The report's ``sandbox`` key in words: pages stored, mirrors and spam hosts against the ground truth."""
    console.print(
        f"ground truth: {sandbox['original_pages_stored']} of {sandbox['original_pages']} reachable URLs with original "
        f"content stored; {sandbox['mirrored_pages_fetched']} of {sandbox['mirrored_pages']} mirrored URLs fetched "
        f"(duplicates' links are not followed); crawl took {sandbox['crawl_seconds']} s ({safe_text(sandbox['finish_reason'])})"
    )
    scored = sandbox["mirrors"]
    console.print(
        f"mirrors vs ground truth: {scored['found']} of {scored['true_pairs']} true pairs found "
        f"({scored['prefix_right']} with the right prefixes), {scored['false_pairs']} false, "
        f"{scored['decoys_reported']} decoys reported: precision {scored['precision']}, recall {scored['recall']}"
    )
    if "spam" in sandbox:
        found = sandbox["spam"]
        console.print(
            f"spam vs ground truth: {found['found']} of {found['spam_hosts']} spam hosts flagged, {found['good_flagged']} good "
            f"hosts flagged: precision {found['precision']}, recall {found['recall']}; traps reported: "
            f"{', '.join(safe_text(t) for t in found['traps']) or 'none'}"
        )
    for missing in sandbox["missing"]:
        console.print(f"  missing: {safe_text(missing)}", markup=False)
