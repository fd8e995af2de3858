"""The page and host spam checks on every page of the real documentation corpus.

Reads every HTML page of the Debian documentation packages of the real-page corpus
(``sandbox.realpages``: Sphinx, LaTeX2HTML, texinfo, DocBook XHTML, vim2html; in
English, German, French, Spanish, Italian, Portuguese and Chinese), parses it as the
crawl does and scores it with ``detectors.spam``. None of these pages is spam and none of
these sites is a spam host, so every check that fires on them is a false alarm: the
distributions printed here are what the thresholds of ``detectors.spam`` are set from.

Printed, per site generator and language: pages, page scores (median, 99th percentile,
maximum), pages whose weak evidence reaches its cap, pages at the spam line, the most
families of weak checks firing on one page; each check's firing rate; each feature's
distribution beside its threshold; the host verdict of each site as if its pages were
crawled (all of them, and its first 20 pages in path order: a crawl judges hosts early).
The held-out sites (``realpages.HELD_OUT``: Japanese) are scored the same way but were
not used to set anything: an out-of-sample check.

    python benchmarks/calibration.py [--write docs/CALIBRATION.md]

Last line: ``pages=.. spam_pages=.. max_page_score=.. max_weak_families=.. pages_at_weak_cap=..
hosts_flagged=.. held_out_pages=.. held_out_spam_pages=.. parse_ms_per_page=..``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirrorscope.sandbox.realpages import HELD_OUT, iter_corpus_pages  # noqa: E402
from mirrorscope.detectors.canonical import canonical_document  # noqa: E402
from mirrorscope.detectors.spam import (  # noqa: E402
    AGREEING_FAMILIES,
    PAGE_CHECKS,
    SPAM_SCORE,
    WEAK_CAP,
    HostEvidence,
    host_verdict,
    page_features,
    page_verdict,
)

#: Pages a crawl has of a host when it first judges it on many pages (a check needs 10).
EARLY_PAGES = 20


@dataclass
class Page:
    site: str
    path: str
    score: float
    codes: tuple[str, ...]
    families: int
    features: object
    words: int
    out_degree: int


@dataclass
class Group:
    pages: list[Page] = field(default_factory=list)

    def scores(self) -> np.ndarray:
        return np.array([p.score for p in self.pages])


def score_pages(keys: Iterable[str] | None) -> tuple[list[Page], float]:
    """Every page of the sites ``keys`` (None: the corpus), scored; and ms per page parsed."""
    families = {c.code: c.family for c in PAGE_CHECKS if c.family}
    pages, parse = [], 0.0
    for key, generator, language, path, body in iter_corpus_pages(keys):
        start = time.perf_counter()
        doc = canonical_document(body)
        parse += time.perf_counter() - start
        features = page_features(doc, len(body))
        verdict = page_verdict(features)
        codes = tuple(r.code for r in verdict.reasons)
        out = {a.href.split("#", 1)[0] for a in doc.anchors}
        pages.append(Page(
            f"{key} ({generator}, {language})", path, verdict.score, codes,
            len({families[c] for c in codes if c in families}), features, len(doc.tokens), len(out),
        ))
    return pages, 1000 * parse / max(1, len(pages))


def _q(values: np.ndarray, q: float) -> str:
    return f"{np.percentile(values, q):.3g}" if values.size else "–"


def page_table(groups: dict[str, Group]) -> list[str]:
    lines = [
        f"| site (generator, language) | pages | score median | p99 | max | at the weak cap ({WEAK_CAP}) | >= {SPAM_SCORE} | most weak families |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, group in groups.items():
        s = group.scores()
        lines.append(
            f"| {name} | {s.size} | {_q(s, 50)} | {_q(s, 99)} | {s.max():.3g} | {int((s >= WEAK_CAP).sum())} "
            f"| {int((s >= SPAM_SCORE).sum())} | {max(p.families for p in group.pages)} |"
        )
    return lines


def check_table(pages: list[Page]) -> list[str]:
    lines = [
        "| check | strong | family | threshold | pages it fires on | feature median | p99 | extreme on these pages |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for check in PAGE_CHECKS:
        values = np.array([v for p in pages if (v := getattr(p.features, check.feature)) is not None], dtype=float)
        fired = sum(check.code in p.codes for p in pages)
        extreme = (values.max() if check.above else values.min()) if values.size else float("nan")
        sign = ">=" if check.above else "<="
        lines.append(
            f"| {check.code} | {'yes' if check.strong else ''} | {check.family} | {sign} {check.threshold:g} | {fired} "
            f"| {_q(values, 50)} | {_q(values, 99 if check.above else 1)} | {extreme:.3g} |"
        )
    return lines


def feature_table(groups: dict[str, Group]) -> list[str]:
    """Each weak feature per site: its median and the value closest to its threshold."""
    checks = [c for c in PAGE_CHECKS if not c.strong and c.feature not in ("hidden_words", "meta_keywords")]
    lines = [
        "| site | " + " | ".join(f"{c.feature} ({'>=' if c.above else '<='} {c.threshold:g})" for c in checks) + " |",
        "| --- |" + " ---: |" * len(checks),
    ]
    for name, group in groups.items():
        cells = []
        for check in checks:
            values = np.array([v for p in group.pages if (v := getattr(p.features, check.feature)) is not None], dtype=float)
            extreme = (values.max() if check.above else values.min()) if values.size else None
            cells.append(f"{np.median(values):.3g} / {extreme:.3g}" if extreme is not None else "–")
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines


def host_table(groups: dict[str, Group]) -> tuple[list[str], int]:
    lines = [
        "| site | host verdict, all pages | reasons | first {n} pages | reasons |".format(n=EARLY_PAGES),
        "| --- | ---: | --- | ---: | --- |",
    ]
    flagged = 0
    for name, group in groups.items():
        cells = []
        for chosen in (group.pages, sorted(group.pages, key=lambda p: p.path)[:EARLY_PAGES]):
            verdict = host_verdict(HostEvidence(
                host=f"{name.split()[0]}.example.org",
                page_scores=[p.score for p in chosen], word_counts=[p.words for p in chosen],
                out_degrees=[p.out_degree for p in chosen],
            ))
            flagged += verdict.is_spam
            cells += [f"{verdict.score:.3g}", "; ".join(verdict.messages) or "–"]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines, flagged


def top_pages(pages: list[Page], n: int = 10) -> list[str]:
    lines = ["| page | score | checks |", "| --- | ---: | --- |"]
    for page in sorted(pages, key=lambda p: (-p.score, p.site, p.path))[:n]:
        lines.append(f"| {page.site.split()[0]}/{page.path} | {page.score:.3g} | {', '.join(page.codes)} |")
    return lines


def grouped(pages: list[Page]) -> dict[str, Group]:
    groups: dict[str, Group] = defaultdict(Group)
    for page in pages:
        groups[page.site].pages.append(page)
    return dict(groups)


def report(pages: list[Page], held: list[Page], parse_ms: float) -> tuple[str, str]:
    groups, held_groups = grouped(pages), grouped(held)
    hosts, flagged = host_table(groups)
    held_hosts, held_flagged = host_table(held_groups)
    scores = np.array([p.score for p in pages])
    summary = (
        f"pages={len(pages)} spam_pages={int((scores >= SPAM_SCORE).sum())} max_page_score={scores.max():.3g} "
        f"max_weak_families={max(p.families for p in pages)} pages_at_weak_cap={int((scores >= WEAK_CAP).sum())} "
        f"hosts_flagged={flagged + held_flagged} held_out_pages={len(held)} "
        f"held_out_spam_pages={sum(p.score >= SPAM_SCORE for p in held)} parse_ms_per_page={parse_ms:.2f}"
    )
    text = [
        "# Spam checks on real documentation",
        "",
        f"Measured {date.today().isoformat()} with `python benchmarks/calibration.py --write docs/CALIBRATION.md`",
        "on every HTML page of the real-page corpus (`sandbox/realpages.py`). None of these pages is spam:",
        "every check that fires here is a false alarm, and the thresholds of `detectors/spam.py` are set so that",
        f"no page reaches the spam line ({SPAM_SCORE}) and no site is flagged. Weak checks are capped below the",
        f"line unless {AGREEING_FAMILIES} families of them fire on one page; a host needs strong evidence.",
        "",
        "## Pages, per site",
        "", *page_table(groups), "",
        "## Each weak feature per site (median / the page nearest the threshold)",
        "", *feature_table(groups), "",
        "## Each check on these pages",
        "", *check_table(pages), "",
        "## The highest page scores",
        "", *top_pages(pages), "",
        "## Host verdicts, each site as one host",
        "", *hosts, "",
        "## Held out (not used to set any threshold)",
        "", *page_table(held_groups), "", *held_hosts, "",
        f"Summary: `{summary}`",
        "",
    ]
    return "\n".join(text), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the report as Markdown here")
    args = parser.parse_args()
    pages, parse_ms = score_pages(None)
    held, _ = score_pages([s.key for s in HELD_OUT])
    text, summary = report(pages, held, parse_ms)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    print(text)
    print(f"median page score {statistics.median(p.score for p in pages):.3g}")
    print(summary)


if __name__ == "__main__":
    main()
