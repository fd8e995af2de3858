"""The baselines of benchmarks/crawl.py: a plain Scrapy follow-all spider, no pipelines,
with mirrorscope's politeness.

    python benchmarks/followall.py SEEDS_FILE HOSTS_FILE MAX_PAGES [plain|seen] [PER_HOST]

``plain`` follows every ``<a href>`` with ``response.follow_all`` and leaves
de-duplication to Scrapy's dupefilter; ``seen`` keeps a set of the URLs it has requested
and builds a ``Request`` only for a link not in it (what mirrorscope's spider does before
its own work). ``PER_HOST`` overrides ``CONCURRENT_REQUESTS_PER_DOMAIN`` (as
benchmarks/crawl.py does for ours on a one-host world). Prints Scrapy's stats as JSON on the last line.

The politeness is mirrorscope's, taken from ``mirrorscope.settings`` (``POLITENESS``):
the same user agent, concurrency, per-host limit, AutoThrottle, timeouts, sizes and
retries; the per-host limit is enforced (mirrorscope's ``PoliteDownloader``: Scrapy's own
lets a host's whole queue out at once under asyncio), robots.txt is handled the same
(mirrorscope's ``RobotsTxtMiddleware``: an unreachable robots.txt disallows the host, a
name that does not resolve fails its URLs once), names resolve through the same hosts
file without a DNS query. The page budget is ``CLOSESPIDER_PAGECOUNT`` (responses,
robots.txt files included; mirrorscope's ``max_pages`` counts requests sent for pages). Order is breadth-first as in
mirrorscope (``DEPTH_PRIORITY`` 1, FIFO queues) with Scrapy's global priority queue.
"""

import json
import sys

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess

from mirrorscope import settings as ours

#: mirrorscope's settings a fair baseline shares: who it says it is, how hard it presses a
#: host, what it accepts, how it resolves names and how it orders the crawl.
POLITENESS = (
    "USER_AGENT", "ROBOTSTXT_OBEY", "ROBOTSTXT_USER_AGENT", "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN",
    "DOWNLOAD_DELAY", "AUTOTHROTTLE_ENABLED", "AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_MAX_DELAY",
    "AUTOTHROTTLE_TARGET_CONCURRENCY", "DOWNLOAD_TIMEOUT", "DOWNLOAD_MAXSIZE", "DOWNLOAD_WARNSIZE", "RETRY_TIMES",
    "RETRY_EXCEPTIONS", "REDIRECT_MAX_TIMES", "METAREFRESH_ENABLED", "HTTPPROXY_ENABLED", "COOKIES_ENABLED",
    "TWISTED_DNS_RESOLVER", "DEPTH_PRIORITY", "SCHEDULER_DISK_QUEUE", "SCHEDULER_MEMORY_QUEUE",
)
ROBOTS = "mirrorscope.crawler.middlewares.RobotsTxtMiddleware"


class FollowAll(Spider):
    name = "followall"

    def __init__(self, seeds: list[str], **kwargs):
        super().__init__(**kwargs)
        self.start_urls = seeds

    def parse(self, response):
        if hasattr(response, "text"):
            yield from response.follow_all(css="a", callback=self.parse)


class FollowAllSeen(FollowAll):
    """Follow-all with a seen-set checked before any Request is built."""

    name = "followall-seen"

    def __init__(self, seeds: list[str], **kwargs):
        super().__init__(seeds, **kwargs)
        self.seen: set[str] = set(seeds)

    def parse(self, response):
        if not hasattr(response, "text"):
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href).split("#", 1)[0]
            if url.startswith(("http://", "https://")) and url not in self.seen:
                self.seen.add(url)
                yield Request(url, callback=self.parse, dont_filter=True)


def main() -> None:
    seeds_file, hosts_file, max_pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "plain"
    per_host = {"CONCURRENT_REQUESTS_PER_DOMAIN": int(sys.argv[5])} if len(sys.argv) > 5 else {}
    seeds = [line.strip() for line in open(seeds_file, encoding="utf-8") if line.strip() and not line.startswith("#")]
    process = CrawlerProcess(
        {
            **{name: getattr(ours, name) for name in POLITENESS},
            **per_host,
            "DOWNLOADER": "mirrorscope.crawler.downloader.PoliteDownloader",
            "FRONTIER_ADMISSION": False,  # the downloader then consults no frontier policy
            "DOWNLOADER_MIDDLEWARES": {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None, ROBOTS: 100},
            "HOSTS_FILE": hosts_file,
            "RESOLVE_ONLY_HOSTS_FILE": True,
            "ALLOW_PRIVATE_ADDRESSES": True,
            "CLOSESPIDER_PAGECOUNT": max_pages,
            "REMOTE_CONTROL_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
        }
    )
    crawler = process.create_crawler(FollowAllSeen if mode == "seen" else FollowAll)
    process.crawl(crawler, seeds=seeds)
    process.start()
    print(json.dumps(crawler.stats.get_stats(), default=str))


if __name__ == "__main__":
    main()
