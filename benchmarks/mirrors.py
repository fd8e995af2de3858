"""Benchmark: mirror candidate generation on a synthetic web of 10,000 hosts.

The web is a pure function of ``--seed``, about 100 crawled pages a host. Paths mix a
shared vocabulary (/, /about.html, /contact.html, /search.html, /robots.txt, /blog/ ...,
drawn by popularity, so some are on most hosts) with site-specific trees built from a
Zipf-distributed word list (popular words recur across sites, so path features have
every document frequency). Host names are words under common public suffixes; 40% of the
hosts share virtual-hosting addresses (2 to 150 hosts each); hosts link within their
topic and to popular hubs. Every page has a random 64-bit fingerprint and an 84-value
signature, except boilerplate pages (licence, privacy policy, terms), which hold one of
three texts shared by many unrelated hosts.

Planted mirrors put about 10% of the hosts in mirror pairs (Bharat and Broder's share):
full copies (5% of the pages missing), near copies (every page re-rendered: a new
fingerprint, 3-15% of the signature redrawn), prefix copies (the site under
/pub/<name>/, /mirror/<name>/ or /<name>/ of a host with pages of its own), partial
copies (40-70% of the pages), subtree copies (one section of a site at another host's
root), and a few sites with two full copies (which mirror each other too). Half of the
copies have look-alike names; a quarter are address aliases of their original (the only
two hosts on an address), some more share its /24. Decoys: sites with another site's
exact path set and unrelated content, and look-alike names on unrelated sites. The crawl
saw 60 to 100% of each host's pages.

Reported, for each of ``--seeds`` (three worlds) and for each world twice, with the
pages' fingerprints and signatures and without them (the same crawl, paths, names,
addresses and links only): the time of ``candidate_pairs`` (profiles built beforehand;
wall clock, and CPU time, which other processes on the machine do not inflate), the
candidate recall of the planted pairs (host pair found; with the right prefixes; per
kind), candidates per planted pair, recall within the top 20 x planted pairs, and how many
decoy pairs became candidates; then medians over the seeds. Peak RSS is the process's
(``resource.getrusage``, every world built included), in GB of 10^9 bytes.

    python benchmarks/mirrors.py [--hosts 10000] [--seeds 0 1 2] [--per-host 10]

Last line: ``hosts=N candidates_s=S candidates_cpu_s=C peak_rss_gb=G recall=R recall_min=.. prefix_ok=P
decoy_candidates=D`` (medians over the seeds, with content), the same for the content-less
variant prefixed ``no_content_``, the number of seeds and the load average.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import random
import resource
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirrorscope.detectors.mirrors import HostProfile, candidate_pairs  # noqa: E402

COMMON_NAMES = (
    "about contact privacy terms faq help search login register sitemap news blog products services team careers "
    "press support docs downloads license changelog genindex modindex events gallery links shop cart account "
    "feedback partners history mission donate jobs media resources tools forum wiki calendar archive"
).split()
COMMON_FORMS = ("/{}.html", "/{}/", "/{}/index.html", "/{}.php", "/en/{}.html")
SECTIONS = "docs blog news products lib api reference tutorial wiki archive articles guides papers static".split()
SUFFIXES = ("com",) * 10 + ("org",) * 4 + ("net",) * 3 + ("de", "co.uk", "fr", "io", "edu", "info", "jp", "com.au")
SUBDOMAINS = ("www",) * 12 + ("docs", "blog", "shop", "en", "m", "news", "dev", "api", "wiki", "forum", "ftp")
BOILERPLATE = ("/license.html", "/privacy.html", "/terms.html")
KINDS = {"full": 35, "near": 15, "prefix": 20, "partial": 20, "subtree": 10}
SIGNATURE_SIZE = 84
TOPICS = 300


@dataclass
class Site:
    name: str
    ip: str
    paths: list[str]
    fingerprints: list[int]
    signatures: list[np.ndarray]
    topic: int
    outlinks: set[str] = field(default_factory=set)
    copy_of: Site | None = None


class World:
    def __init__(self, hosts: int, seed: int) -> None:
        self.hosts = hosts
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.words = self._words(30000)
        popularity = 1.0 / np.arange(1, len(self.words) + 1) ** 1.05
        self.word_cdf = np.cumsum(popularity / popularity.sum())
        self.word_cdf[-1] = 1.0
        self.common = ["/", "/index.html", "/robots.txt"] + [f.format(n) for n in COMMON_NAMES for f in COMMON_FORMS]
        self.common_p = 0.6 / np.arange(1, len(self.common) + 1) ** 0.9
        self.networks = [f"10.{i // 250}.{i % 250}" for i in range(max(hosts // 4, 16))]
        self.shared_ips = self._shared_ips()
        self.names: set[str] = set()
        self.sites: list[Site] = []
        self.truth: dict[tuple[str, str, str, str], str] = {}  # (a, prefix_a, b, prefix_b) -> kind
        self.decoys: set[frozenset[str]] = set()

    def _words(self, n: int) -> list[str]:
        rng = random.Random(1)
        onsets = "b c d f g h k l m n p r s t v w z br ch st tr pl sh".split()
        vowels, codas = "a e i o u ai ou ea".split(), ["", "n", "r", "s", "l", "t", "m"]
        words: dict[str, None] = {}
        while len(words) < n:
            syllables = rng.randint(1, 3)
            words["".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(syllables))] = None
        return list(words)

    def word(self, k: int = 1) -> list[str]:
        return [self.words[i] for i in np.searchsorted(self.word_cdf, self.np.random(k))]

    def _shared_ips(self) -> list[str]:
        ips = []
        while len(ips) < 0.4 * self.hosts:
            size = min(150, max(2, int(self.np.pareto(1.2) * 3) + 2))
            ips += [self.fresh_ip()] * size
        self.rng.shuffle(ips)
        return ips

    def fresh_ip(self) -> str:
        return f"{self.rng.choice(self.networks)}.{self.rng.randint(1, 254)}"

    def new_name(self, like: str | None = None) -> str:
        while True:
            suffix = self.rng.choice(SUFFIXES)
            if like is None:
                words = self.word(self.rng.choice((1, 1, 2, 2)))
                label = self.rng.choice(("-", "")).join(words)
                name = f"{self.rng.choice(SUBDOMAINS)}.{label}.{suffix}"
            else:
                label = like.split(".")[1]
                name = self.rng.choice(
                    (
                        f"mirror.{label}.{suffix}",
                        f"www.{label}-mirror.{suffix}",
                        f"{self.rng.choice(SUBDOMAINS)}.{label}.{suffix}",
                        f"ftp{self.rng.randint(1, 9)}.{label}.{suffix}",
                    )
                )
            if name not in self.names:
                self.names.add(name)
                return name

    def new_content(self, n: int) -> tuple[list[int], list[np.ndarray]]:
        fingerprints = [self.rng.getrandbits(64) for _ in range(n)]
        return fingerprints, list(self.np.integers(0, 2**63, size=(n, SIGNATURE_SIZE), dtype=np.uint64))

    def near_content(self, signatures: list[np.ndarray]) -> tuple[list[int], list[np.ndarray]]:
        """Every page re-rendered: a new fingerprint, 3-15% of the signature redrawn."""
        copy = np.array(signatures)
        changed = self.np.random(copy.shape) < self.np.uniform(0.03, 0.15, size=(len(signatures), 1))
        copy[changed] = self.np.integers(0, 2**63, size=int(changed.sum()), dtype=np.uint64)
        return [self.rng.getrandbits(64) for _ in signatures], list(copy)

    def site_paths(self, pages: int) -> list[str]:
        own = self.word(40)
        paths = {"/"} | {p for p, c in zip(self.common, self.np.random(len(self.common)) < self.common_p) if c}
        count = self.rng.randint(2, 6)
        sections = [self.rng.choice(SECTIONS if self.rng.random() < 0.4 else own) for _ in range(count)]
        while len(paths) < pages:
            section = self.rng.choice(sections)
            kind = self.rng.random()
            a, b = self.rng.choice(own), self.rng.choice(own + self.word(3))
            if kind < 0.45:
                paths.add(f"/{section}/{a}-{b}.html")
            elif kind < 0.7:
                paths.add(f"/{section}/{a}/{b}.html")
            elif kind < 0.85:
                paths.add(f"/{section}/{self.rng.randint(2001, 2024)}/{self.rng.randint(1, 12):02d}/{a}-{b}.html")
            elif kind < 0.92:
                paths.add(f"/{section}/?page={self.rng.randint(2, 9)}")
            else:
                paths.add(f"/{section}/{a}/")
        return sorted(paths)

    def add_site(
        self, name: str, ip: str, paths: list[str], topic: int, content: tuple[list, list] | None = None
    ) -> Site:
        fingerprints, signatures = content or self.new_content(len(paths))
        fingerprints = list(fingerprints)
        for i, path in enumerate(paths):
            if path in BOILERPLATE:  # one of three texts that everybody copies
                text = f"{path} {self.rng.randint(0, 2)}".encode()
                fingerprints[i] = int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")
        site = Site(name, ip, paths, fingerprints, list(signatures), topic)
        self.sites.append(site)
        return site

    def plain_site(self) -> Site:
        ip = self.shared_ips.pop() if self.shared_ips and self.rng.random() < 0.4 else self.fresh_ip()
        paths = self.site_paths(int(self.np.lognormal(4.75, 0.35)))
        return self.add_site(self.new_name(), ip, paths, self.rng.randrange(TOPICS))

    def build(self) -> None:
        mirrored = int(self.hosts * 0.05)
        originals: list[Site] = []
        while len(self.sites) < self.hosts - 1.6 * mirrored:
            site = self.plain_site()
            if len(originals) < mirrored and len(site.paths) >= 30:
                originals.append(site)
        for original in originals:
            if self.rng.random() < 0.05:
                first, second = self.copy(original, "full"), self.copy(original, "full")
                self.truth[first.name, "/", second.name, "/"] = "copies"
            else:
                self.copy(original, self.rng.choices(list(KINDS), list(KINDS.values()))[0])
        for original in self.rng.sample(originals, len(originals) // 4):
            decoy = self.add_site(self.new_name(), self.fresh_ip(), list(original.paths), original.topic)
            self.decoys.add(frozenset((original.name, decoy.name)))
        for original in self.rng.sample(originals, len(originals) // 4):
            name = self.new_name(like=original.name)
            decoy = self.add_site(name, self.fresh_ip(), self.site_paths(100), original.topic)
            self.decoys.add(frozenset((original.name, decoy.name)))
        while len(self.sites) < self.hosts:
            self.plain_site()
        self.link()

    def copy(self, original: Site, kind: str) -> Site:
        name = self.new_name(like=original.name if self.rng.random() < 0.5 else None)
        roll = self.rng.random()
        if roll < 0.25:  # aliases: a fresh address for the two of them alone
            original.ip = ip = self.fresh_ip()
        elif roll < 0.4:
            ip = original.ip.rsplit(".", 1)[0] + f".{self.rng.randint(1, 254)}"
        else:
            ip = self.fresh_ip()
        original_columns = (original.paths, original.fingerprints, original.signatures)
        pages = list(zip(*original_columns))
        prefix_a = prefix_b = "/"
        if kind in ("full", "near", "partial"):
            keep = 0.95 if kind != "partial" else self.rng.uniform(0.4, 0.7)
            pages = [page for page in pages if page[0] == "/" or self.rng.random() < keep]
        elif kind == "prefix":
            prefix_b = self.rng.choice(("/pub/", "/mirror/", "/")) + original.name.split(".")[1] + "/"
            own = self.site_paths(int(self.np.lognormal(4.0, 0.4)))
            pages = [(p, f, s) for p, f, s in zip(own, *self.new_content(len(own)))]
            pages += [(prefix_b + p[1:], f, s) for p, f, s in zip(*original_columns)]
        else:  # subtree: the original's largest section at the copy's root
            sections: dict[str, list[tuple[str, int, np.ndarray]]] = {}
            for page in pages:
                if page[0].count("/") >= 2 and not page[0].startswith("/en/"):
                    sections.setdefault(page[0][: page[0].index("/", 1) + 1], []).append(page)
            prefix_a, section = max(sections.items(), key=lambda item: (len(item[1]), item[0]))
            if len(section) < 20:
                return self.copy(original, "full")
            pages = [("/" + p[len(prefix_a) :], f, s) for p, f, s in section]
        paths, fingerprints, signatures = (list(column) for column in zip(*pages))
        if kind == "near":
            fingerprints, signatures = self.near_content(signatures)
        copy = self.add_site(name, ip, paths, original.topic, (fingerprints, signatures))
        copy.copy_of = original
        self.truth[original.name, prefix_a, copy.name, prefix_b] = kind
        return copy

    def link(self) -> None:
        by_topic: dict[int, list[str]] = {}
        for site in self.sites:
            by_topic.setdefault(site.topic, []).append(site.name)
        names = [s.name for s in self.sites]
        hub_p = 1.0 / np.arange(1, len(names) + 1) ** 1.1
        hub_p /= hub_p.sum()
        for site in self.sites:
            n = self.rng.randint(3, 30)
            local = self.rng.sample(by_topic[site.topic], min(n // 2, len(by_topic[site.topic])))
            hubs = [names[i] for i in self.np.choice(len(names), size=n - len(local), p=hub_p)]
            site.outlinks = set(local + hubs) - {site.name}
        for site in self.sites:  # a copy links where its original links, give or take
            if site.copy_of is not None:
                theirs = {h for h in site.copy_of.outlinks if self.rng.random() < 0.8}
                site.outlinks = (theirs | set(self.rng.sample(names, 3))) - {site.name}

    def profiles(self, content: bool = True) -> list[HostProfile]:
        """What a crawl saw: 60 to 100% of each host's pages, the front page always."""
        profiles = []
        for site in self.sites:
            coverage = self.rng.uniform(0.6, 1.0)
            seen = [i for i, path in enumerate(site.paths) if path == "/" or self.rng.random() < coverage]
            profiles.append(
                HostProfile(
                    name=site.name,
                    ip=site.ip,
                    paths=tuple(site.paths[i] for i in seen),
                    outlink_hosts=frozenset(site.outlinks),
                    fingerprints={site.paths[i]: site.fingerprints[i] for i in seen} if content else {},
                    signatures={site.paths[i]: site.signatures[i] for i in seen} if content else {},
                )
            )
        return profiles


def score(world: World, candidates: list, verbose: bool) -> dict[str, float]:
    """Recall of the planted pairs (host pair found), with the right prefixes, within the
    top 20 x planted; decoy pairs among the candidates; candidates per planted pair."""
    found = {frozenset((c.a, c.b)): (rank, c) for rank, c in enumerate(candidates)}
    planted = len(world.truth)
    hits, right, top, by_kind = 0, 0, 0, Counter()
    for (a, prefix_a, b, prefix_b), kind in world.truth.items():
        hit = found.get(frozenset((a, b)))
        if hit is None:
            if verbose:
                print(f"  missed ({kind}): {a}{prefix_a} {b}{prefix_b}")
            continue
        rank, c = hit
        hits += 1
        by_kind[kind] += 1
        right += {(c.a, c.prefix_a), (c.b, c.prefix_b)} == {(a, prefix_a), (b, prefix_b)}
        top += rank < 20 * planted
    kinds = Counter(world.truth.values())
    decoys = sum(d in found for d in world.decoys)
    print(
        f"  candidates: {len(candidates)} ({len(candidates) / planted:.1f} per planted pair); "
        f"recall {hits / planted:.4f} ({hits}/{planted}), with the right prefixes {right / planted:.4f}, "
        f"within the top {20 * planted}: {top / planted:.4f}; decoy pairs among them: {decoys}/{len(world.decoys)}"
    )
    print("  recall by kind: " + ", ".join(f"{k} {by_kind[k]}/{n}" for k, n in sorted(kinds.items())))
    return {"recall": hits / planted, "prefix_ok": right / planted, "top": top / planted,
            "decoys": decoys, "decoy_share": decoys / len(world.decoys), "per_pair": len(candidates) / planted}  # fmt: skip


def measure(profiles: list[HostProfile], per_host: int) -> tuple[list, float, float]:
    """candidate_pairs on the profiles: (candidates, wall seconds, CPU seconds)."""
    started, cpu = time.perf_counter(), time.process_time()
    candidates = candidate_pairs(profiles, max_candidates_per_host=per_host)
    return candidates, time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--per-host", type=int, default=10, help="max_candidates_per_host")
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(f"load average at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")

    figures: dict[str, dict[str, list[float]]] = {"content": {}, "no_content": {}}
    for seed in args.seeds:
        started = time.perf_counter()
        world = World(args.hosts, seed)
        world.build()
        profiles = world.profiles()
        paths = sum(len(p.paths) for p in profiles)
        print(
            f"seed {seed}: {len(profiles)} hosts, {paths} crawled paths ({paths / len(profiles):.0f} a host), "
            f"{len(world.truth)} planted mirror pairs, {len(world.decoys)} decoy pairs; "
            f"built in {time.perf_counter() - started:.1f} s; peak RSS {peak_gb():.2f} GB so far"
        )
        # The same crawl without page content: paths, names, addresses and links only.
        bare = [dataclasses.replace(p, fingerprints={}, signatures={}, token_counts={}) for p in profiles]
        for variant, view in (("content", profiles), ("no_content", bare)):
            candidates, seconds, cpu = measure(view, args.per_host)
            print(f" {variant}: candidate generation {seconds:.1f} s wall, {cpu:.1f} s CPU")
            result = score(world, candidates, verbose=variant == "content")
            for key, value in (*result.items(), ("seconds", seconds), ("cpu", cpu)):
                figures[variant].setdefault(key, []).append(value)
        del world, profiles, bare

    load_end = os.getloadavg()
    med = {v: {k: statistics.median(x) for k, x in f.items()} for v, f in figures.items()}
    worst = {v: {k: min(x) for k, x in f.items()} for v, f in figures.items()}
    for variant in figures:
        print(f"{variant}, medians of {len(args.seeds)} seeds: " + ", ".join(f"{k} {v:.4g}" for k, v in med[variant].items())
              + f"; lowest recall {worst[variant]['recall']:.4f}, lowest prefix_ok {worst[variant]['prefix_ok']:.4f}")
    c, n = med["content"], med["no_content"]
    print(
        f"hosts={args.hosts} candidates_s={c['seconds']:.1f} candidates_cpu_s={c['cpu']:.1f} peak_rss_gb={peak_gb():.2f} "
        f"recall={c['recall']:.4f} recall_min={worst['content']['recall']:.4f} prefix_ok={c['prefix_ok']:.4f} "
        f"decoy_candidates={c['decoys']:g} no_content_candidates_s={n['seconds']:.1f} "
        f"no_content_recall={n['recall']:.4f} no_content_recall_min={worst['no_content']['recall']:.4f} "
        f"no_content_prefix_ok={n['prefix_ok']:.4f} no_content_decoy_candidates={n['decoys']:g} no_content_cpu_s={n['cpu']:.1f} "
        f"seeds={len(args.seeds)} load_avg={load_start[0]:.2f}-{load_end[0]:.2f}"
    )


def peak_gb() -> float:
    """This process's peak RSS in GB (10^9 bytes; ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


if __name__ == "__main__":
    main()
