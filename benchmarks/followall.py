"""The baseline of benchmarks/crawl.py: a plain Scrapy follow-all spider, no pipelines.

Run as ``python benchmarks/followall.py SEED_URL HOSTS_FILE CONCURRENCY_PER_HOST [DEPTH_LIMIT]``; prints
Scrapy's stats as JSON on the last line. Only our resolver is borrowed (the sandbox's
names must resolve); everything else is Scrapy's defaults made breadth-first.
"""

import json
import sys

from scrapy import Spider
from scrapy.crawler import CrawlerProcess


class FollowAll(Spider):
    name = "followall"

    def __init__(self, seed: str, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [seed]

    def parse(self, response):
        yield from response.follow_all(css="a", callback=self.parse)


def main() -> None:
    seed, hosts_file, per_host = sys.argv[1], sys.argv[2], int(sys.argv[3])
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    process = CrawlerProcess(
        {
            "TWISTED_DNS_RESOLVER": "mirrorscope.crawler.resolver.StaticHostsResolver",
            "HOSTS_FILE": hosts_file,
            "ALLOW_PRIVATE_ADDRESSES": True,
            "DEPTH_PRIORITY": 1,
            "DEPTH_LIMIT": depth,
            "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            "CONCURRENT_REQUESTS": 32,
            "CONCURRENT_REQUESTS_PER_DOMAIN": per_host,
            "ROBOTSTXT_OBEY": True,
            "REMOTE_CONTROL_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
        }
    )
    crawler = process.create_crawler(FollowAll)
    process.crawl(crawler, seed=seed)
    process.start()
    print(json.dumps(crawler.stats.get_stats(), default=str))


if __name__ == "__main__":
    main()
