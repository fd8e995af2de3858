"""Bottom-up mirror detection (``detectors.collections``, Cho et al. 2000): exact
collections on small planted graphs, the store's tables on SQLite and PostgreSQL, and
``mirror-report detect`` finding a renamed copy that top-down validation alone misses,
without taking a decoy that shares pages with the original."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from datetime import datetime, timezone
from urllib.parse import urlsplit

import jsonschema
import pytest
from rich.console import Console

from mirrorscope.crawler.pipelines import sketch_record
from mirrorscope.detectors.collections import find_collections
from mirrorscope.detectors.mirrors import CandidatePair, HostProfile, sample_mapped_paths
from mirrorscope.detectors.sketch import sketch_many
from mirrorscope.jobs.collections import collection_candidates, detect_collections
from mirrorscope.jobs.detect import detect
from mirrorscope.jobs.duplicates import detect_duplicates
from mirrorscope.jobs.mirrors import detect_mirrors
from mirrorscope.report.document import report_schema
from mirrorscope.report.evidence import report_with_evidence
from mirrorscope.report.html import render_html
from mirrorscope.report.render import render_table
from mirrorscope.storage.records import LinkRecord, PageRecord
from mirrorscope.storage.store import Store


def matrices(*args: object, **kwargs: object) -> list[list[list[int]]]:
    return [c.pages.tolist() for c in find_collections(*args, **kwargs)]  # type: ignore[arg-type]


# Host 0 holds a site: 0 -> 1, 0 -> 2, 1 -> 3. Host 1 a renamed copy (4..7, links kept).
SITE_CLUSTERS = [0, 1, 2, 3, 0, 1, 2, 3]
SITE_HOSTS = [0, 0, 0, 0, 1, 1, 1, 1]
SITE_SRC = [0, 0, 1, 4, 4, 5]
SITE_DST = [1, 2, 3, 5, 6, 7]


def test_renamed_replica_is_one_collection_of_two() -> None:
    assert matrices(SITE_CLUSTERS, SITE_HOSTS, SITE_SRC, SITE_DST) == [[[0, 1, 2, 3], [4, 5, 6, 7]]]


def test_three_replicas_align_by_position() -> None:
    # A third copy (8..11) whose pages come in another order of ids: columns still match.
    clusters = SITE_CLUSTERS + [3, 2, 1, 0]
    hosts = SITE_HOSTS + [2, 2, 2, 2]
    src, dst = SITE_SRC + [11, 11, 10], SITE_DST + [10, 9, 8]
    assert matrices(clusters, hosts, src, dst) == [[[0, 1, 2, 3], [4, 5, 6, 7], [11, 10, 9, 8]]]


def test_partial_collection_inside_a_bigger_host() -> None:
    # Host 0: pages 0..5, section 2 -> {3, 4}, 3 -> 4; 0 -> 1 -> 5 not copied. Host 1 holds
    # a renamed copy of the section (6, 7, 8) among pages of its own (9, 10).
    clusters = [10, 11, 20, 21, 22, 12, 20, 21, 22, -1, -1]
    hosts = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    src = [0, 1, 2, 2, 3, 9, 9, 6, 6, 7, 10]
    dst = [1, 5, 3, 4, 4, 6, 10, 7, 8, 8, 9]
    assert matrices(clusters, hosts, src, dst) == [[[2, 3, 4], [6, 7, 8]]]


def test_decoys_do_not_join() -> None:
    # Two sites of one template share two interlinked pages (0, 1 ~ 4, 5): below min_size.
    # Their third shared page (2 ~ 6) is linked differently: 1 -> 2 on host 0, 7 -> 6 on host 1.
    clusters = [0, 1, 2, -1, 0, 1, 2, -1]
    hosts = [0, 0, 0, 0, 1, 1, 1, 1]
    src, dst = [0, 1, 1, 4, 5, 7], [1, 0, 2, 5, 4, 6]
    assert matrices(clusters, hosts, src, dst) == []
    assert matrices(clusters, hosts, src, dst, min_size=2) == [[[0, 1], [4, 5]]]


def test_cardinalities_must_agree() -> None:
    # Page 1 has a third copy (8) on host 2: |R_1| = 3 joins neither R_0 nor R_3 (two
    # copies each), so the collection is pages 0 and 2 only; 1 and 3 stay trivial.
    clusters = SITE_CLUSTERS + [1]
    hosts = SITE_HOSTS + [2]
    assert matrices(clusters, hosts, SITE_SRC, SITE_DST, min_size=1) == [[[0, 2], [4, 6]], [[1], [5], [8]], [[3], [7]]]
    assert matrices(clusters, hosts, SITE_SRC, SITE_DST) == []


def test_same_host_aliases_and_backlinks() -> None:
    # Page 8 is host 1's "dir/" for its "dir/index.html" (4): links to either are one page.
    # Page 7 links back to the original's root (a "mirror of" link): it joins nothing.
    clusters = SITE_CLUSTERS + [0]
    hosts = SITE_HOSTS + [1]
    src, dst = [0, 0, 1, 4, 8, 5, 7], [1, 2, 3, 5, 6, 7, 0]
    assert matrices(clusters, hosts, src, dst) == [[[0, 1, 2, 3], [4, 5, 6, 7]]]


def test_no_clusters_no_collections() -> None:
    assert matrices([-1, -1, -1], [0, 1, 1], [0, 1], [1, 2]) == []
    assert matrices([], [], [], []) == []


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="same lengths"):
        find_collections([0, 0], [0], [], [])
    with pytest.raises(ValueError, match="below len"):
        find_collections([0, 0], [0, 1], [0], [2])
    with pytest.raises(ValueError, match="min_size"):
        find_collections([0, 0], [0, 1], [], [], min_size=0)


def test_mapped_samples_pair_pages_through_the_correspondence() -> None:
    paths_a = ("/", "/a.html", "/b.html", "/c.html", "/only-a.html")
    paths_b = ("/x/", "/x/1.htm", "/x/2.htm", "/x/3.htm", "/x/only-b.html")
    counterparts = {"/a.html": "/x/1.htm", "/b.html": "/x/2.htm", "/c.html": "/x/3.htm", "/": "/x/"}
    pair = CandidatePair("a.test", "b.test", "/", "/x/")
    samples = sample_mapped_paths(pair, HostProfile("a.test", None, paths_a), HostProfile("b.test", None, paths_b), counterparts, k=20)
    # Every page of both sides, once: the mapped ones with their copies, the others by path.
    assert sorted(samples) == sorted([*counterparts.items(), ("/only-a.html", "/x/only-a.html"), ("/only-b.html", "/x/only-b.html")])


# -- over a store ---------------------------------------------------------------------------

ORIGINAL = "docs.example.org"
COPY = "archive.example.net"
DECOY = "other.example.com"
# The original's pages and links; the copy holds them renamed, under /mirror/docs/.
SITE = {
    "/": ("/guide.html", "/api.html", "/faq.html", "/about.html"),
    "/guide.html": ("/guide/install.html", "/guide/usage.html", "/"),
    "/guide/install.html": ("/guide/usage.html",),
    "/guide/usage.html": ("/api.html",),
    "/api.html": ("/api/core.html", "/api/extra.html"),
    "/api/core.html": ("/api/extra.html",),
    "/api/extra.html": ("/api.html",),
    "/faq.html": ("/",),
    "/about.html": ("/",),
}
# The decoy shares only the about page (one template's boilerplate); its own pages differ.
DECOY_SITE = {"/": ("/about.html", "/news.html", "/team.html"), "/about.html": ("/",), "/news.html": ("/team.html",), "/team.html": ("/",)}


def renamed(path: str) -> str:
    return "/mirror/docs/" + ("index.htm" if path == "/" else path.strip("/").replace("/", "_").removesuffix(".html") + ".htm")


def _records() -> list[PageRecord]:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(4000)]
    texts = {p: [rng.choice(words) for _ in range(300)] for p in SITE} | {"decoy" + p: [rng.choice(words) for _ in range(300)] for p in DECOY_SITE}
    texts["decoy/about.html"] = texts["/about.html"]
    pages: list[tuple[str, str, list[str], tuple[str, ...]]] = []
    for path, links in SITE.items():
        pages.append((ORIGINAL, path, texts[path], tuple(f"http://{ORIGINAL}{t}" for t in links)))
        pages.append((COPY, renamed(path), texts[path], tuple(f"http://{COPY}{renamed(t)}" for t in links)))
    for path, links in DECOY_SITE.items():
        pages.append((DECOY, path, texts["decoy" + path], tuple(f"http://{DECOY}{t}" for t in links)))
    pages.append((COPY, "/", [rng.choice(words) for _ in range(300)], (f"http://{COPY}{renamed('/')}",)))
    sketches = sketch_many([t for _, _, t, _ in pages])
    return [
        PageRecord(
            url=f"http://{host}{path}", host=host, hostname=host, port=None, path=path, depth=1, outcome="ok",
            fetched_at=datetime.now(timezone.utc), status=200, ip=f"127.0.3.{n % 3 + 1}", sketch=sketch_record(sketch),
            links=[LinkRecord(t, t.split("/")[2], f"anchor {i}", "before", "after") for i, t in enumerate(links)],
        )
        for n, ((host, path, _, links), sketch) in enumerate(zip(pages, sketches))
    ]


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store(db_url)
    opened.write_pages(_records(), None)
    yield opened
    opened.close()


def _mirror_hosts(store: Store) -> set[frozenset[str]]:
    return {frozenset(row[k].split("/")[2] for k in ("url_a", "url_b")) for row in store.mirror_pairs()}


def test_store_finds_the_renamed_copy(store: Store) -> None:
    detect_duplicates(store)
    summary = detect_collections(store)
    # The about page has a third copy, on the decoy: its trivial cluster's cardinality
    # (3) differs from the others' (2), so it stays out of the collection.
    kept = [p for p in SITE if p != "/about.html"]
    assert summary == {"collections": 1, "pages": 2 * len(kept), "largest": len(kept)}
    [collection] = store.replicated_collections()
    assert collection["cardinality"] == 2 and collection["size"] == len(kept)
    # Replicas are listed in the order of their pages' ids (a batch is stored in URL order).
    second, first = sorted(collection["replicas"], key=lambda replica: ORIGINAL in replica[0])
    assert sorted(first) == sorted(f"http://{ORIGINAL}{p}" for p in kept)
    assert second == [f"http://{COPY}{renamed(urlsplit(u).path)}" for u in first]
    [(a, prefix_a, b, prefix_b, counterparts)] = collection_candidates(store.replicated_collections())
    assert (a, prefix_a, b, prefix_b) == (COPY, "/mirror/docs/", ORIGINAL, "/")
    assert counterparts[renamed("/api/core.html")] == "/api/core.html"

    # Top-down alone compares paths: the renamed copy's are all absent on the original.
    detect_mirrors(store)
    assert frozenset((COPY, ORIGINAL)) not in _mirror_hosts(store)
    found = detect_mirrors(store, collections=collection_candidates(store.replicated_collections()))
    assert found["bottom_up_mirrors"] == 1
    assert _mirror_hosts(store) == {frozenset((COPY, ORIGINAL))}
    [row] = store.mirror_pairs()
    assert (row["url_a"], row["url_b"], row["level"]) == (f"http://{COPY}/mirror/docs/", f"http://{ORIGINAL}/", "full")


def test_detect_runs_the_collections_job(store: Store) -> None:
    results = detect(store)
    assert results["collections"]["collections"] == 1
    assert results["mirrors"]["bottom_up_mirrors"] == 1
    assert _mirror_hosts(store) == {frozenset((COPY, ORIGINAL))}
    store.replace_collections([])
    assert store.replicated_collections() == []


def test_report_shows_the_collections(store: Store) -> None:
    detect(store)
    report = report_with_evidence(store)
    jsonschema.validate(report, report_schema(), cls=jsonschema.Draft202012Validator)
    [entry] = report["collections"]
    assert (entry["cardinality"], entry["size"]) == (2, len(SITE) - 1)
    assert sorted(entry["roots"]) == [f"http://{COPY}/mirror/docs/", f"http://{ORIGINAL}/"]
    # The pair's evidence compares each page with its renamed copy, as validation did (the
    # about page, outside the collection, is looked for by path and was never met).
    [samples] = report["evidence"]["mirror_samples"]
    paired = [r for r in samples if r["path_a"] == renamed(r["path_b"])]
    assert len(paired) >= len(samples) - 2 and any(r["path_b"] == "/api/core.html" for r in paired)
    assert {r["match"] for r in paired} <= {"identical", "near"}, samples
    console = Console(file=io.StringIO(), width=200)
    render_table(report, console)
    table = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Replicated collections (bottom-up): 1" in table and f"http://{COPY}/mirror/docs/" in table
    page = render_html(report)
    assert "Replicated collections (bottom-up): 1</h2>" in page and f"http://{COPY}/mirror/docs/<br>" in page


def test_no_collections_without_clusters(store: Store) -> None:
    assert detect_collections(store) == {"collections": 0, "pages": 0, "largest": 0}
    assert store.replicated_collections() == []
