"""The ``evidence`` key of the report: what the HTML report shows behind each verdict.

Read from the store and recomputed with the detectors that made the verdicts, never
judged anew here:

* fetches by host class: where the crawl budget went (original content, duplicates and
  mirrors, spam, traps, errors);
* per validated mirror pair, the paths ``detectors.mirror_validation.sample_paths``
  draws for it (k per side as the crawl draws them, ``MIRROR_SAMPLE_PATHS``, seed 0; a
  verdict of ``mirror-report detect``, which draws 20, was judged on these and the next
  ones, the sample being bottom-k), what the store holds at each and how the two pages
  compare (``judge`` on the one observation; resemblance is the signatures' agreement);
* per near-duplicate cluster shown, two members' stored text (the store keeps a page's
  title and the words in and around its links, not its body);
* per spam host, its pages of highest spam score and the anchors of links to it;
* per trap, the URLs on it that stored pages link to and the crawl did not fetch, with
  the trap rules each breaks (``detectors.traps.url_trap_reasons``);
* similar URLs by anchor bags, for the first pages fetched (nearest the seeds).

Every list is bounded (the ``*_SHOWN`` constants) so that a report of a large crawl stays
a file a browser opens.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mirrorscope.detectors.mirror_validation import sample_mapped_paths
from mirrorscope.detectors.mirrors import CandidatePair, judge, sample_paths
from mirrorscope.detectors.sketch import DocumentSketch, signature_agreement
from mirrorscope.detectors.traps import calendar_like, url_trap_reasons
from mirrorscope.jobs.collections import collection_candidates
from mirrorscope.jobs.mirrors import HostView
from mirrorscope.report.document import build_report
from mirrorscope.settings import MIRROR_SAMPLE_PATHS
from mirrorscope.storage.store import Store

#: Near-duplicate clusters with a side-by-side view (the largest).
DUPLICATE_VIEWS_SHOWN = 50
#: Links whose words make a page's stored text in the side-by-side view.
LINKS_PER_TEXT = 200
#: Pages (highest spam score first) and in-link anchors shown per spam host.
SPAM_PAGES_SHOWN = 3
ANCHORS_SHOWN = 12
#: Links a spam excerpt quotes from a page.
EXCERPT_LINKS = 12
#: Unfetched URLs listed per trap.
TRAP_URLS_SHOWN = 25
#: Pages (the first fetched) offered in the similar-URL chooser, and neighbours listed for each.
SIMILAR_URLS_SHOWN = 500
SIMILAR_PER_URL = 10

#: Host classes of the budget chart, in the order drawn.
HOST_CLASSES = ("original", "duplicates_and_mirrors", "spam", "traps", "errors")


def report_with_evidence(store: Store) -> dict[str, Any]:
    """The report document of ``store`` (``document.build_report``) with its ``evidence`` key."""
    report = build_report(store)
    report["evidence"] = build_evidence(store, report)
    return report


def build_evidence(store: Store, report: dict[str, Any]) -> dict[str, Any]:
    """The ``evidence`` key for ``report`` (``document.build_report``'s document of ``store``)."""
    return {
        "fetches_by_class": fetches_by_class(store, report),
        "mirror_samples": mirror_samples(store, report["mirrors"]),
        "duplicate_texts": duplicate_texts(store, report["duplicate_clusters"][:DUPLICATE_VIEWS_SHOWN]),
        "spam_pages": spam_evidence(store, [v["host"] for v in report["spam_hosts"]]),
        "trap_urls": trap_urls(store, [v["host"] for v in report["traps"]]),
        "similar": similar_by_anchor_bags(store),
    }


def _host(url: str) -> str:
    return urlsplit(url).netloc


def fetches_by_class(store: Store, report: dict[str, Any]) -> dict[str, int]:
    """Stored pages by the class of their host or outcome: spam and trap hosts first, then
    failed fetches, then duplicates and the mirror (non-canonical) sides, then the rest."""
    spam = {v["host"] for v in report["spam_hosts"]}
    traps = {v["host"] for v in report["traps"]}
    mirror_sides = {_host(url) for cluster in report["mirror_clusters"] for url in cluster[1:]}
    counts = dict.fromkeys(HOST_CLASSES, 0)
    for host, outcome, duplicate, pages in store.fetches_by_host():
        if host in spam:
            kind = "spam"
        elif host in traps:
            kind = "traps"
        elif outcome != "ok":
            kind = "errors"
        elif duplicate or host in mirror_sides:
            kind = "duplicates_and_mirrors"
        else:
            kind = "original"
        counts[kind] += pages
    return counts


def _comparison(view: HostView, pair: CandidatePair, path_a: str, path_b: str) -> dict[str, Any]:
    """How the pages at one sampled path pair compare, as the validation judged them."""
    observation = view.observation(pair.a, path_a, pair.b, path_b)
    sketch_a, sketch_b = view.content.get(pair.a, {}).get(path_a), view.content.get(pair.b, {}).get(path_b)
    match = "unknown"
    if observation.exists_a and observation.exists_b:
        verdict = judge(pair, [observation], k=1)
        kinds = {"identical": verdict.identical, "near": verdict.near_identical, "contained": verdict.contained}
        match = next((kind for kind, count in kinds.items() if count), "different")
    elif observation.exists_a is False or observation.exists_b is False:
        match = "absent"
    return {
        "match": match,
        "resemblance": round(signature_agreement(sketch_a, sketch_b), 4) if sketch_a and sketch_b else None,
        "containment": round(observation.containment, 4) if observation.containment is not None else None,
    }


def _host_view(store: Store, hosts: list[str]) -> HostView:
    """What the crawl knows of ``hosts`` (their pages, and the links to them: the paths
    known there), as ``HostView.from_store`` builds it for every host."""
    view = HostView()
    for row in store.page_facts_of(hosts):
        sketch = DocumentSketch.from_bytes(row["data"]) if row["data"] else None
        view.add_page(row["url"], row["host"], row["ip"], row["outcome"], sketch)
    for source, target_host, target_url in store.links_to(hosts):
        view.add_link(source, target_url, target_host)
    return view


def _counterparts(store: Store) -> dict[tuple[str, str], dict[str, str]]:
    """(host A, host B) -> path on A -> path on B, for the host pairs of the stored
    replicated collections (``jobs.collections``), both ways round."""
    mapped: dict[tuple[str, str], dict[str, str]] = {}
    for a, _, b, _, counterparts in collection_candidates(store.replicated_collections()):
        mapped[(a, b)] = counterparts
        mapped[(b, a)] = {pb: pa for pa, pb in counterparts.items()}
    return mapped


def mirror_samples(store: Store, mirrors: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Per mirror pair of the report (same order): its sampled paths, what the store holds at
    each (the page's outcome; null: never fetched; whether validation fetched it) and the
    comparison; empty when inferred."""
    validated = [urlsplit(m[side]).netloc for m in mirrors if not m["inferred"] for side in ("a", "b")]
    if not validated:
        return [[] for _ in mirrors]
    view = _host_view(store, validated)
    profiles = {p.name: p for p in view.profiles()}
    mapped = _counterparts(store)
    samples: list[list[dict[str, Any]]] = []
    for m in mirrors:
        a, b = urlsplit(m["a"]), urlsplit(m["b"])
        if m["inferred"] or a.netloc not in profiles or b.netloc not in profiles:
            samples.append([])
            continue
        pair = CandidatePair(a.netloc, b.netloc, a.path or "/", b.path or "/")
        if (counterparts := mapped.get((pair.a, pair.b))) is not None:
            # Found bottom-up: sampled as validated, each page beside its renamed copy.
            paths = sample_mapped_paths(pair, profiles[pair.a], profiles[pair.b], counterparts, k=MIRROR_SAMPLE_PATHS)
        else:
            paths = sample_paths(pair, profiles[pair.a], profiles[pair.b], k=MIRROR_SAMPLE_PATHS)
        samples.append([
            {"path_a": pa, "path_b": pb, "url_a": f"{a.scheme}://{a.netloc}{pa}", "url_b": f"{b.scheme}://{b.netloc}{pb}",
             **_comparison(view, pair, pa, pb)}
            for pa, pb in paths
        ])
    outcomes = store.pages_by_url([row[key] for rows in samples for row in rows for key in ("url_a", "url_b")])
    for row in (row for rows in samples for row in rows):
        for side in ("a", "b"):
            stored = outcomes.get(row[f"url_{side}"], {})
            row[f"outcome_{side}"] = stored.get("outcome")
            # The crawl fetches a sampled counterpart it has not met at depth -1 (WebSpider.validation_request).
            row[f"validation_{side}"] = stored.get("depth") == -1
    return samples


def _stored_text(title: str | None, links: list[tuple[str, str, str]]) -> str:
    """A page as the store keeps it: its title, then each link's words before, anchor, after."""
    lines = [title or ""] + [" ".join(part for part in (before, f"[{anchor}]", after) if part) for before, anchor, after in links]
    return "\n".join(lines)


def duplicate_texts(store: Store, clusters: list[dict[str, Any]]) -> list[dict[str, str]]:
    """For each cluster of two or more members: its first two members' stored text."""
    pairs = [(c["members"][0], c["members"][1]) for c in clusters if len(c["members"]) > 1]
    urls = [url for pair in pairs for url in pair]
    pages, links = store.pages_by_url(urls), store.link_texts(urls, LINKS_PER_TEXT)
    return [
        {"a": a, "b": b,
         "text_a": _stored_text(pages.get(a, {}).get("title"), links.get(a, [])),
         "text_b": _stored_text(pages.get(b, {}).get("title"), links.get(b, []))}
        for a, b in pairs
    ]


def spam_evidence(store: Store, hosts: list[str]) -> dict[str, dict[str, Any]]:
    """Per spam host: its pages of highest spam score with their reasons and an excerpt
    (title and first anchors), and the anchors of links to it."""
    pages = store.spam_pages(hosts, SPAM_PAGES_SHOWN)
    links = store.link_texts([p["url"] for rows in pages.values() for p in rows], EXCERPT_LINKS)
    inlinks = store.anchors_to(hosts, ANCHORS_SHOWN)
    return {
        host: {
            "pages": [
                {"url": p["url"], "title": p["title"], "score": p["spam_score"], "reasons": p["spam_reasons"] or [],
                 "anchors": [anchor for _, anchor, _ in links.get(p["url"], [])]}
                for p in pages.get(host, [])
            ],
            "anchors_in": [{"from": url, "anchor": anchor} for url, anchor in inlinks.get(host, [])],
        }
        for host in hosts
    }


def trap_urls(store: Store, hosts: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per trap host: URLs on it linked and not fetched, with the trap rules each breaks."""
    found = store.unfetched_links_to(hosts, TRAP_URLS_SHOWN)
    return {
        host: [
            {"url": url, "rules": [str(r) for r in url_trap_reasons(url)] + (["calendar URL"] if calendar_like(url) else [])}
            for url in found.get(host, [])
        ]
        for host in hosts
    }


def similar_by_anchor_bags(store: Store) -> dict[str, list[dict[str, Any]]]:
    """URL -> its most similar URLs by anchor bags (the stored pairs of ``mirror-report
    detect``), for the first pages fetched that have any."""
    return store.similar_neighbours(store.first_pages(SIMILAR_URLS_SHOWN), SIMILAR_PER_URL)
