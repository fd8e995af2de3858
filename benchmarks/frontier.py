"""The frontier's spam and trap defences end to end on the full sandbox.

Crawls ``build_full_world(0)`` (41 hosts: mirrors, decoys, a five-host link farm of
unbounded pages with 1,000 links each, a doorway, a cloaking and a hidden-text host, an
infinite calendar) with ``scrapy crawl web`` twice, in one run:

- **plain BFS**: Scrapy's global priority queue, no frontier middleware, no spam verdicts,
  stopped at ``--bfs-pages`` pages (it never ends on its own);
- **ours**: the defaults (``crawler.frontier`` and ``crawler.spam``).

Fetches are counted by the sandbox server (every request it answered, robots.txt and
cloaking checks included). A fetch is *spam* when its host is a ground-truth spam host,
a *trap* fetch when its URL lies in a ground-truth unbounded space (the calendar under
``/calendar/``, entries included). Prints both crawls' shares, pages/s, the crawler's peak
RSS (the crawler process and its anchor-bag worker together, sampled from /proc), and our
crawl's spam verdicts scored against the truth.

Then a third crawl measures memory in a long crawl under a farm (``--rss-fetches N``,
20,000 by default; 0 skips it): a documentation host of ``N`` pages with 300 links each
(``build_linkheavy_world``) whose front page also links into the five-host link farm,
crawled with the defaults and ``max_pages=N`` (the full sandbox ends at ~900 fetches, too
few to show the memory of a long crawl; a crawl of the farm itself runs at ~3 pages/s
here, its pages of a thousand links each being slow to serve and parse). Its memory
figure is the sum of each process's own peak RSS (the crawler's and its anchor-bag
worker's ``VmHWM``), at least the peak of their sum. GB are 10^9 bytes.

    python benchmarks/frontier.py [--runs 3] [--bfs-runs 1] [--bfs-pages 2000] [--rss-fetches 20000]

The plain BFS crawl is slow (every farm page's thousand links become requests: about
3.5 pages/s here), so it runs ``--bfs-runs`` times (1), ours ``--runs`` times (3).

Last line: ``bfs_spam_trap_share=A ours_spam_trap_share=B pages_s=P peak_rss_gb=G``
(medians over the runs; ``peak_rss_gb`` is the largest of the sandbox crawls'), followed
on the same line by ``spam_precision``, ``spam_recall``, ``good_flagged``, the farm crawl's
``farm_fetches``, ``farm_fetches_s``, ``farm_to_farm`` and ``farm_peak_rss_gb``, and the
load average.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.sandbox import Host, SandboxServer, World, build_full_world, build_linkheavy_world, names  # noqa: E402
from mirrorscope.sandbox.model import PORT_MARK  # noqa: E402
from mirrorscope.sandbox.sites.spam import LinkFarm  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

#: GB (10^9 bytes) per kB of /proc's VmRSS and VmHWM (which are KiB).
KB = 1024 / 1e9

PLAIN_BFS = (
    "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue",
    "-s", 'SPIDER_MIDDLEWARES={"mirrorscope.crawler.frontier.FrontierMiddleware": null}',
    "-s", "SPAM_DETECTION_ENABLED=False", "-s", "CLOAKING_CHECK_ENABLED=False",
)


class MemoryWatch(threading.Thread):
    """Samples a process and its descendants from /proc every ``interval`` seconds:
    each process's own peak (``VmHWM``, exact up to its last sample) and the peak of
    their summed ``VmRSS`` (sampled). ``wait4``'s ``ru_maxrss`` is not used: Linux keeps
    it across fork and exec, so a crawler started by this script (which holds the
    sandbox, 0.7 GB for the farm world) would start from the script's own peak."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peaks: dict[str, float] = {}
        self.tree_peak = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval):
            tree = 0.0
            for pid in self._tree(str(self.pid)):
                status = _status(pid)
                if "VmHWM" in status:
                    name = "crawler" if pid == str(self.pid) else f"worker {pid}"
                    self.peaks[name] = max(self.peaks.get(name, 0.0), status["VmHWM"])
                    tree += status["VmRSS"]
            self.tree_peak = max(self.tree_peak, tree)

    def _tree(self, pid: str) -> list[str]:
        children: list[str] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                children += (task / "children").read_text().split()
            except OSError:
                pass
        return [pid, *(p for child in children for p in self._tree(child))]

    def peak_gb(self) -> float:
        """The larger of the summed peak and any one process's peak, in GB."""
        return max(self.tree_peak, *self.peaks.values(), 0.0) * KB

    def sum_of_peaks_gb(self) -> float:
        """Each process's own peak, added up, in GB: at least the peak of the sum."""
        return sum(self.peaks.values()) * KB


def _status(pid: str) -> dict[str, float]:
    """VmRSS and VmHWM of ``pid`` in kB (empty once it is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {k: float(v.split()[0]) for k, _, v in (line.partition(":") for line in lines) if k in ("VmRSS", "VmHWM")}


def crawl(seeds: Path, hosts: Path, db: str, *extra: str) -> tuple[float, MemoryWatch]:
    """Run one crawl; (seconds, the memory of the crawler and its worker processes)."""
    args = [sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={seeds}", "-s", f"HOSTS_FILE={hosts}",
            "-s", "ALLOW_PRIVATE_ADDRESSES=True", "-s", f"DATABASE_URL={db}", "-s", "LOG_LEVEL=ERROR", *extra]
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    watch = MemoryWatch(process.pid)
    watch.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - started
    watch.done.set()
    watch.join()
    if process.returncode:
        raise SystemExit(f"crawl failed ({process.returncode}): {stderr.decode()[-2000:]}")
    return seconds, watch


class Truth:
    def __init__(self, truth: dict) -> None:
        self.spam = {h.split(":")[0] for h in truth["spam_hosts"]}
        self.good = {h.split(":")[0] for h in truth["good_hosts"]}
        self.traps = {h.split(":")[0]: prefixes for h, prefixes in truth["trap_hosts"].items() if h.split(":")[0] not in self.spam}

    def kind(self, host: str, path: str) -> str | None:
        name = host.split(":")[0]
        if name in self.spam:
            return "spam"
        if any(path.startswith(p) for p in self.traps.get(name, ())):
            return "trap"
        return None


def fetch_shares(log: list[tuple[float, str, str]], truth: Truth) -> tuple[int, int, int]:
    """(all fetches, spam fetches, trap fetches) of a server request log."""
    kinds = [truth.kind(host, path) for _, host, path in log]
    return len(kinds), kinds.count("spam"), kinds.count("trap")


def score_verdicts(db: str, truth: Truth) -> tuple[float, float, list[str]]:
    store = Store(db)
    flagged = {v["host"].split(":")[0] for v in store.host_verdicts("spam", flagged_only=True)}
    store.close()
    hits = len(flagged & truth.spam)
    precision = hits / len(flagged) if flagged else 0.0
    return precision, hits / len(truth.spam), sorted(flagged & truth.good)


def farm_world(pages: int) -> World:
    """A documentation host of ``pages`` pages whose front page links into the link farm."""
    docs = build_linkheavy_world(0, pages=pages, links_per_page=300).hosts[0]
    farm = LinkFarm(0, names.FARM)
    entry = farm.entry_path(random.Random(0))
    link = f'<a href="http://{names.FARM[0]}{PORT_MARK}{entry}">cheap flights</a></body>'.encode()
    front = docs.resources["/"]
    docs.resources["/"] = dataclasses.replace(front, body=front.body.replace(b"</body>", link, 1))
    farm_hosts = [
        Host(name=name, ip=f"127.0.5.{i + 1}", role="link-farm", resources=farm.host_resources(),
             dynamic=functools.partial(farm.resolve, name), unbounded=(names.FARM_PREFIX,))
        for i, name in enumerate(names.FARM)
    ]
    return World(seed=0, hosts=[docs, *farm_hosts], seed_paths=[(docs.name, "/")])


def long_crawl_under_a_farm(pages: int) -> dict[str, float]:
    """Crawl :func:`farm_world` with the defaults: its fetches, fetches/s, fetches to the
    farm, and the sum of the crawler's and its workers' peak RSS in GB."""
    world = farm_world(pages)
    farm = set(names.FARM)
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(world, port=0) as server:
        hosts, seeds = Path(tmp, "hosts"), Path(tmp, "seeds")
        hosts.write_text(world.hosts_file_text())
        seeds.write_text("\n".join(world.seeds(server.port)) + "\n")
        seconds, watch = crawl(seeds, hosts, f"sqlite:///{tmp}/long.db", "-a", f"max_pages={pages}")
        log = server.request_log()
        to_farm = sum(host.split(":")[0] in farm for _, host, _ in log)
        each = ", ".join(f"{name} {kb * KB:.3f}" for name, kb in watch.peaks.items())
        print(f"long crawl under a farm: {len(log)} fetches ({to_farm} to the farm) in {seconds:.1f} s "
              f"({len(log) / seconds:.1f} fetches/s); sum of the processes' peak RSS {watch.sum_of_peaks_gb():.3f} GB "
              f"(peak of their summed RSS, sampled, {watch.tree_peak * KB:.3f}; each: {each})", flush=True)
    return {"fetches": len(log), "fetches_s": len(log) / seconds, "to_farm": to_farm, "rss": watch.sum_of_peaks_gb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bfs-runs", type=int, default=1)
    parser.add_argument("--bfs-pages", type=int, default=2000)
    parser.add_argument("--rss-fetches", type=int, default=20000, help="pages of the farm crawl (0: none)")
    options = parser.parse_args()
    load_start = os.getloadavg()
    print(f"load average at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}", flush=True)
    world = build_full_world(0)
    figures: dict[str, list[float]] = {k: [] for k in ("bfs_share", "ours_share", "pages_s", "rss", "precision", "recall", "good")}
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(world, port=0) as server:
        truth_json = world.ground_truth(server.port)
        truth = Truth(truth_json)
        hosts, seeds = Path(tmp, "hosts"), Path(tmp, "seeds")
        hosts.write_text(world.hosts_file_text())
        seeds.write_text("\n".join(truth_json["seeds"]) + "\n")
        for run in range(options.bfs_runs):
            server.reset_stats()
            seconds, watch = crawl(seeds, hosts, f"sqlite:///{tmp}/bfs{run}.db", *PLAIN_BFS, "-a", f"max_pages={options.bfs_pages}")
            rss = watch.peak_gb()
            total, spam, trap = fetch_shares(server.request_log(), truth)
            figures["bfs_share"].append((spam + trap) / total)
            print(f"run {run + 1} plain BFS: {total} fetches, spam {spam}, trap {trap}: share {(spam + trap) / total:.3f}; "
                  f"{seconds:.1f} s, peak RSS {rss:.3f} GB", flush=True)
        for run in range(options.runs):
            server.reset_stats()
            db = f"sqlite:///{tmp}/ours{run}.db"
            seconds, watch = crawl(seeds, hosts, db)
            rss = watch.peak_gb()
            total, spam, trap = fetch_shares(server.request_log(), truth)
            precision, recall, good = score_verdicts(db, truth)
            store = Store(db)
            pages = len(store.pages())
            store.close()
            print(f"run {run + 1} ours:      {total} fetches, spam {spam}, trap {trap}: share {(spam + trap) / total:.3f}; "
                  f"{pages} pages in {seconds:.1f} s; peak RSS {rss:.3f} GB; spam precision {precision:.2f} recall {recall:.2f}"
                  + (f"; good hosts flagged: {', '.join(good)}" if good else ""), flush=True)
            for key, value in (("ours_share", (spam + trap) / total), ("pages_s", pages / seconds),
                               ("rss", rss), ("precision", precision), ("recall", recall), ("good", len(good))):
                figures[key].append(value)
        peak = max(figures["rss"])
    farm = long_crawl_under_a_farm(options.rss_fetches) if options.rss_fetches else None
    med = {k: statistics.median(v) for k, v in figures.items()}
    load_end = os.getloadavg()
    farm_figures = (
        f"farm_fetches={farm['fetches']} farm_fetches_s={farm['fetches_s']:.1f} farm_to_farm={farm['to_farm']} "
        f"farm_peak_rss_gb={farm['rss']:.3f} " if farm else "farm_fetches=0 "
    )
    print(f"bfs_spam_trap_share={med['bfs_share']:.4f} ours_spam_trap_share={med['ours_share']:.4f} "
          f"pages_s={med['pages_s']:.1f} peak_rss_gb={peak:.3f} spam_precision={med['precision']:.2f} "
          f"spam_recall={med['recall']:.2f} good_flagged={int(max(figures['good']))} {farm_figures}"
          f"load_avg={load_start[0]:.2f}-{load_end[0]:.2f}")


if __name__ == "__main__":
    main()
