"""``scrapy crawl`` with the spider's input checked first (a one-line error, exit 2), and a
crawl that could not store every page ending with a one-line error and exit 1."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawl

from mirrorscope.crawler.context import CrawlContext
from mirrorscope.crawler.spiders.web import CrawlSetupError, check_crawl_input
from mirrorscope.report.render import safe_text


class Command(ScrapyCrawl):
    crawler: Any = None

    def _create_crawler(self, spidercls: Any) -> Any:
        self.crawler = super()._create_crawler(spidercls)
        return self.crawler

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == "web":
            try:
                check_crawl_input(opts.spargs, self.settings)
            except CrawlSetupError as exc:
                # The message may echo the arguments: never raw to a terminal.
                print(f"error: {safe_text(exc)}", file=sys.stderr)
                self.exitcode = 2
                return
        super().run(args, opts)
        lost = CrawlContext.lost_writes_of(self.crawler) if self.crawler is not None else None
        if lost:
            print(f"error: {lost}", file=sys.stderr)
            self.exitcode = 1
