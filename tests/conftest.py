"""Shared fixtures: a real SQLite file and a real PostgreSQL schema, and the sandbox."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

ROOT = Path(__file__).resolve().parent.parent
PG_HOST, PG_PORT, PG_DB = "127.0.0.1", 5432, os.environ.get("MIRRORSCOPE_TEST_PG_DB", "test")


def _postgres_answers() -> bool:
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema in the real PostgreSQL, dropped afterwards."""
    if not _postgres_answers():
        pytest.skip(f"no PostgreSQL server answers at {PG_HOST}:{PG_PORT}")
    import psycopg

    schema = f"ms_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DB, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"postgresql+psycopg://{PG_HOST}:{PG_PORT}/{PG_DB}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DB, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each store test runs on SQLite and on the real PostgreSQL."""
    return request.getfixturevalue(f"{request.param}_url")


def run_cli(*args: str, timeout: float = 240, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command of the project (``scrapy`` or ``mirror-report``) from the checkout."""
    full_env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | (env or {})
    return subprocess.run(args, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)


def scrapy_crawl(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cli(sys.executable, "-m", "scrapy", "crawl", "web", *args, timeout=timeout)


def mirror_report(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cli(sys.executable, "-m", "mirrorscope.report.cli", *args, timeout=timeout)


def crawl_world(world: Any, tmp_path: Path, db_url: str, *extra: str) -> tuple[subprocess.CompletedProcess, list[tuple[str, str]]]:
    """Serve a small ``sandbox.World`` on loopback and crawl it with the defaults;
    (the finished crawl, the server's requests as (host name, path))."""
    from mirrorscope.sandbox import SandboxServer

    with SandboxServer(world, port=0) as server:
        hosts_file, seeds_file = tmp_path / "hosts", tmp_path / "seeds.txt"
        hosts_file.write_text(world.hosts_file_text())
        seeds_file.write_text("\n".join(world.seeds(server.port)) + "\n")
        result = scrapy_crawl("-a", f"seeds={seeds_file}", "-s", f"HOSTS_FILE={hosts_file}", "-s", "ALLOW_PRIVATE_ADDRESSES=True",
                              "-s", f"DATABASE_URL={db_url}", "-s", "LOG_LEVEL=WARNING", *extra)
        assert result.returncode == 0, result.stderr[-3000:]
        return result, [(host.split(":")[0], path) for _, host, path in server.request_log()]


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


def project_crawler(**overrides: Any) -> Crawler:
    """A crawler that does not crawl, on the project's settings (so with the crawl's
    ``CrawlContext`` and every default), for the unit tests of its components."""
    import mirrorscope.settings as project

    values = {name: getattr(project, name) for name in dir(project) if name.isupper()}
    return get_crawler(Spider, settings_dict={**values, **overrides})
