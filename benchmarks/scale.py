"""Crawl throughput with 1, 2 and 4 ``scrapy crawl web`` processes on one shared frontier
(Redis, ``crawler/shared.py``) and one PostgreSQL store, on the real-page world
(``build_real_world(0)``, 40 hosts of Debian documentation with mirrors, spam and a trap).

Baselines: one process on the same shared frontier (``workers_1``), and with ``--workers
0,...`` one process with the in-process frontier (``workers=0``, no Redis). Every configuration crawls the same world, served by
this process, into a fresh PostgreSQL schema and a fresh Redis key prefix, with a total
page budget split between the processes (``max_pages`` counts per process).

Figures per run, counted at the server and in Redis:

- ``pages_s``: pages answered (robots.txt excluded) over the span of the server's log;
- ``duplicate_fetches``: fetches by the crawler's User-Agent of a URL it had fetched
  already (robots.txt excluded: each process reads a host's robots.txt once; the cloaking
  check's browser fetch has another User-Agent);
- ``max_inflight_per_host``: the most requests one host had in flight at once;
- ``redis_ops_per_page``: Redis commands (``INFO stats``) per page stored;
- ``pg_pages_s``: pages stored per second of the crawl (PostgreSQL's write rate);
- ``cpu_busy``: CPU seconds of the crawl processes (and their children) per wall second.

Then the offline half (``benchmarks/spark_scale.py`` ``spark_figures``): Broder's
clustering of ``--spark-docs`` stored sketches (1,000,000 by default, as the issue asks;
about 30 minutes of Spark on 2 cores) on Spark ``local[2]`` and on the numpy path, the
outputs compared (``spark_same``); ``--spark-docs 0`` skips it.

    python benchmarks/scale.py [--max-pages 1200] [--workers 1,2,4] [--spark-docs 1000000]
        [--db postgresql+psycopg://127.0.0.1:5432/test] [--redis redis://127.0.0.1:6379/0]

Last line: ``workers_1_pages_s=.. workers_2_pages_s=.. workers_4_pages_s=..
duplicate_fetches=.. max_inflight_per_host=.. spark_same=.. spark_s=.. numpy_s=..``
(duplicates summed and the in-flight maximum taken over all runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from spark_scale import spark_figures  # noqa: E402

from mirrorscope.sandbox import SandboxServer, build_real_world  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

#: The User-Agent's product token of the crawler (settings.ROBOTSTXT_USER_AGENT).
CRAWLER_TOKEN = "mirrorscope-bot"


class CountingServer(SandboxServer):
    """The sandbox server, counting the crawler's fetches per (host, path)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crawler_fetches: Counter[tuple[str, str]] = Counter()

    def lookup(self, host: str, path: str, user_agent: str | None = None) -> Any:
        if user_agent and CRAWLER_TOKEN in user_agent and path != "/robots.txt":
            self.crawler_fetches[(host, path)] += 1  # a Counter's += holds the GIL: one bytecode race at worst
        return super().lookup(host, path, user_agent)


def schema_url(base: str, schema: str) -> str:
    with psycopg.connect(base.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{base}?options=-csearch_path%3D{schema}"


def drop_schema(base: str, schema: str) -> None:
    with psycopg.connect(base.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def crawl(world_dir: Path, server: CountingServer, workers: int, max_pages: int, db: str, redis_url: str) -> dict[str, float]:
    schema, prefix = f"scale_{uuid.uuid4().hex[:10]}", f"scale-{uuid.uuid4().hex[:10]}:"
    url = schema_url(db, schema)
    client = redis.Redis.from_url(redis_url)
    command = [
        sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={world_dir / 'seeds.txt'}",
        "-a", f"max_pages={max(1, max_pages // max(1, workers))}",
        "-s", f"HOSTS_FILE={world_dir / 'hosts'}", "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", "RESOLVE_ONLY_HOSTS_FILE=True",
        "-s", f"DATABASE_URL={url}", "-s", "LOG_LEVEL=WARNING",
    ]
    if workers:
        command += ["-s", f"FRONTIER_REDIS_URL={redis_url}", "-s", f"FRONTIER_REDIS_PREFIX={prefix}"]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"SCRAPY_SETTINGS_MODULE": "mirrorscope.settings"}
    server.reset_stats()
    server.crawler_fetches.clear()
    ops_before = int(client.info("stats")["total_commands_processed"])
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        logs = [Path(tmp, f"crawl{i}.log").open("w") for i in range(workers or 1)]
        processes = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log) for log in logs]
        codes = [p.wait() for p in processes]
        for log in logs:
            log.close()
        if any(codes):
            raise SystemExit(f"a crawl process failed ({codes}): {Path(tmp, 'crawl0.log').read_text()[-2000:]}")
    wall = time.monotonic() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ops = int(client.info("stats")["total_commands_processed"]) - ops_before
    log = [(t, host, path) for t, host, path in server.request_log() if path != "/robots.txt"]
    store = Store(url)
    try:
        stored = store.page_count()
    finally:
        store.close()
    keys = list(client.scan_iter(match=f"{prefix}*"))
    redis_bytes = sum(int(client.memory_usage(k) or 0) for k in keys)
    if keys:
        client.delete(*keys)
    drop_schema(db, schema)
    span = (log[-1][0] - log[0][0]) if len(log) > 1 else float("nan")
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    return {
        "pages_s": len(log) / span, "pages": len(log), "stored": stored,
        "duplicate_fetches": sum(n - 1 for n in server.crawler_fetches.values() if n > 1),
        "max_inflight_per_host": max(server.max_in_flight().values()),
        "redis_ops_per_page": ops / max(1, stored), "redis_bytes_per_page": redis_bytes / max(1, stored),
        "pg_pages_s": stored / wall, "cpu_busy": cpu / wall, "wall_s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-pages", type=int, default=1200, help="total page budget, split between the processes")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--db", default="postgresql+psycopg://127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--spark-docs", type=int, default=1_000_000, help="sketches for Spark against numpy (0: skip)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    world = build_real_world(0)
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="scale-world-") as tmp, CountingServer(world, port=0) as server:
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        for workers in counts:
            results[workers] = figures = crawl(world_dir, server, workers, args.max_pages, args.db, args.redis)
            shown = " ".join(f"{k}={v:.3g}" for k, v in figures.items())
            print(f"workers={workers} {shown} load_average={os.getloadavg()[0]:.2f}", flush=True)
    rates = " ".join(f"workers_{n}_pages_s={results[n]['pages_s']:.3g}" for n in counts if n)
    duplicates = sum(int(r["duplicate_fetches"]) for r in results.values())
    inflight = max(int(r["max_inflight_per_host"]) for r in results.values())
    spark = ""
    if args.spark_docs:
        figures = spark_figures(args.spark_docs)
        spark = " " + " ".join(f"{k}={figures[k]}" for k in ("spark_same", "spark_s", "numpy_s"))
    print(f"{rates} duplicate_fetches={duplicates} max_inflight_per_host={inflight}{spark}")


if __name__ == "__main__":
    main()
