"""The scheduler: Scrapy's, made safe to resume after a hard kill.

Scrapy's JOBDIR state (the pickled disk queues and ``requests.seen``) is written as the
crawl goes but made consistent only at a clean stop: after SIGKILL the seen-file can hold
fingerprints of requests that were queued and never fetched, which a resumed crawl would
then skip for ever. When the spider resumes a run, the store is the frontier's source of
truth (every stored link without a page row), so this scheduler discards Scrapy's own
queue and seen-file before opening them.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from scrapy.core.scheduler import Scheduler
from scrapy.utils.job import job_dir

from mirrorscope.crawler.context import CrawlContext

logger = logging.getLogger(__name__)


class RecoveringScheduler(Scheduler):
    @classmethod
    def from_crawler(cls, crawler: Any) -> "RecoveringScheduler":
        jobdir = job_dir(crawler.settings)
        if jobdir and CrawlContext.of(crawler).resumed:
            queue = Path(jobdir, "requests.queue")
            if queue.exists():
                shutil.rmtree(queue)
            Path(jobdir, "requests.seen").unlink(missing_ok=True)
            logger.info("rebuilding the frontier of %s from the store", jobdir)
        return super().from_crawler(crawler)
