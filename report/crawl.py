"""Running the ``web`` spider in this process, with settings from the command line."""

from __future__ import annotations

import logging
import os
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
