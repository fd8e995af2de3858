"""Running the ``web`` spider in this process, with settings from the command line, or in N
``scrapy crawl web`` processes on one shared frontier (``--workers N``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from mirrorscope.report.errors import UsageError

# Loggers that report one hostile page each; the report lists every outcome anyway.
_PER_PAGE_LOGGERS = (
    "scrapy.downloadermiddlewares.retry",
    "scrapy.downloadermiddlewares.httpcompression",
    "scrapy.core.downloader.handlers.http11",
)


def _scrapy_settings(overrides: dict[str, Any]) -> Any:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "mirrorscope.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    for name, value in overrides.items():
        if value is not None:
            settings.set(name, value, priority="cmdline")
    return settings


def run_crawl(spider_args: dict[str, Any], overrides: dict[str, Any], quiet: bool = False) -> str:
    """Run the ``web`` spider in this process; returns the run's status: Scrapy's finish
    reason, or ``lost-writes`` (said on stderr in one line) when pages were not stored."""
    from scrapy.crawler import CrawlerProcess

    from mirrorscope.crawler.context import LOST_WRITES, CrawlContext
    from mirrorscope.crawler.spiders.web import CrawlSetupError, check_crawl_input

    settings = _scrapy_settings(overrides)
    spider_args = {k: v for k, v in spider_args.items() if v is not None}
    try:
        check_crawl_input(spider_args, settings)
    except CrawlSetupError as exc:
        raise UsageError(str(exc)) from None
    process = CrawlerProcess(settings)
    if quiet:
        for name in _PER_PAGE_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)
    crawler = process.create_crawler("web")
    process.crawl(crawler, **spider_args)
    process.start()
    lost = CrawlContext.lost_writes_of(crawler)
    if lost:
        print(f"error: {lost}", file=sys.stderr)
        return LOST_WRITES
    return str(crawler.stats.get_value("finish_reason") or "failed")


def parse_settings(pairs: Sequence[str]) -> dict[str, str]:
    """``-s NAME=VALUE`` options as a dict of setting overrides."""
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"-s takes NAME=VALUE, not {pair!r}")
        settings[name] = value
    return settings


def run_workers(spider_args: dict[str, Any], overrides: dict[str, Any], workers: int, redis_url: str | None) -> int:
    """Run ``workers`` ``scrapy crawl web`` processes on one frontier in Redis
    (``crawler.shared``) and one store, and wait for all; the number of processes that
    did not exit 0. Bad input (more than one worker on SQLite or without Redis, a Redis
    that does not answer) is a :class:`UsageError` before any process starts."""
    from mirrorscope.crawler.shared import SharedFrontier
    from mirrorscope.crawler.spiders.web import CrawlSetupError, check_crawl_input
    from mirrorscope.storage.db import resolve_database_url

    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    if redis_url is not None:
        overrides = {**overrides, "FRONTIER_REDIS_URL": redis_url}
    settings = _scrapy_settings(overrides)
    database = resolve_database_url(None, settings.get("DATABASE_URL"))
    if workers > 1 and not database.startswith("postgresql"):
        raise UsageError(f"--workers {workers} needs a PostgreSQL store (--db postgresql+psycopg://...): SQLite takes one writer at a time")
    if settings.get("JOBDIR"):
        raise UsageError("--workers and --jobdir do not go together: a shared crawl keeps its frontier in Redis, not in a JOBDIR")
    if spider_args.get("recrawl"):
        raise UsageError("--workers and --recrawl do not go together: a re-crawl runs in one process")
    if not settings.get("FRONTIER_REDIS_URL"):
        raise UsageError("--workers needs --redis URL (or -s FRONTIER_REDIS_URL=...): the processes share their frontier there")
    spider_args = {k: v for k, v in spider_args.items() if v is not None}
    try:
        check_crawl_input(spider_args, settings)
        frontier = SharedFrontier.from_settings(settings)
    except CrawlSetupError as exc:
        raise UsageError(str(exc)) from None
    assert frontier is not None  # FRONTIER_REDIS_URL is set
    # A new crawl: what an earlier one left under the prefix (its seen-set) would refuse it.
    frontier.clear()
    command = [sys.executable, "-m", "scrapy", "crawl", "web"]
    command += [arg for name, value in spider_args.items() for arg in ("-a", f"{name}={value}")]
    command += [arg for name, value in overrides.items() if value is not None for arg in ("-s", f"{name}={value}")]
    command += ["-s", f"DATABASE_URL={database}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": os.environ.get("SCRAPY_SETTINGS_MODULE", "mirrorscope.settings")}
    processes = [subprocess.Popen(command, env=env) for _ in range(workers)]
    codes = [process.wait() for process in processes]
    failed = sum(code != 0 for code in codes)
    if failed:
        print(f"error: {failed} of {workers} crawl processes failed (exit codes {codes})", file=sys.stderr)
    return failed
