"""Memory and time of a crawl of pages of adjacent links (issue 16, item 1).

    python benchmarks/page_bounds.py [--sizes 2000,429000,7500000] [--kill-mb 1500]

Each size is one page of ``sandbox.torture.adjacent_anchors(size)`` (links with nothing
between them, as the torture world serves them), crawled alone (``max_pages=1``) into a
fresh SQLite file, then all the pages in one crawl. One line per crawl:
``bytes=B peak_mb=P tree_peak_mb=T seconds=S links=L outcomes=O``: the crawl process's
own peak resident memory, the peak of its sum with the anchor-bag worker (sampled every
50 ms), the wall time, the links stored and the pages' outcomes. A crawl whose processes
together pass ``--kill-mb`` is killed (``exit=-9``).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.sandbox import SandboxServer, World  # noqa: E402
from mirrorscope.sandbox.markup import robots  # noqa: E402
from mirrorscope.sandbox.model import Host, Resource  # noqa: E402
from mirrorscope.sandbox.torture import ANCHOR_PAGE_BYTES, HUGE_ANCHOR_PAGE_BYTES, PAGES, adjacent_anchors  # noqa: E402
from tests.helpers import crawl_arguments, crawl_peak  # noqa: E402


def _world(sizes: list[int]) -> World:
    pages = {f"/anchors-{size}.html": Resource(body=adjacent_anchors(size)) for size in sizes}
    host = Host(name=PAGES, ip="127.0.7.1", role="hostile", resources={"/robots.txt": robots(), **pages})
    return World(seed=0, hosts=[host], seed_paths=[(PAGES, path) for path in pages])


def crawl(sizes: list[int], work: Path, kill_mb: float) -> str:
    world, db = _world(sizes), work / "store.db"
    with SandboxServer(world, port=0) as server:
        started = time.monotonic()
        args = [*crawl_arguments(world, server.port, work, f"sqlite:///{db}"), "-a", f"max_pages={len(sizes)}"]
        code, stderr, peak, tree = crawl_peak(args, work / "crawl.log", timeout=600, kill_mb=kill_mb)
        seconds = time.monotonic() - started
    if code:
        return f"bytes={sum(sizes)} exit={code} peak_mb={peak:.0f} tree_peak_mb={tree:.0f} seconds={seconds:.1f} stderr={stderr[-300:]!r}"
    with sqlite3.connect(db) as conn:
        links = conn.execute("SELECT count(*) FROM links").fetchone()[0]
        outcomes = ",".join(row[0] for row in conn.execute("SELECT outcome FROM pages ORDER BY id"))
    return f"bytes={sum(sizes)} peak_mb={peak:.0f} tree_peak_mb={tree:.0f} seconds={seconds:.1f} links={links} outcomes={outcomes}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=f"2000,{ANCHOR_PAGE_BYTES},{HUGE_ANCHOR_PAGE_BYTES}")
    parser.add_argument("--kill-mb", type=float, default=1500)
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    runs = [[size] for size in sizes] + ([sizes] if len(sizes) > 1 else [])
    for run in runs:
        with tempfile.TemporaryDirectory() as work:
            print(crawl(run, Path(work), options.kill_mb), flush=True)


if __name__ == "__main__":
    main()
