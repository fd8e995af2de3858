"""Anchor bags in the store (migration 0006): signatures, similar pairs and CENTER
clusters written by the offline recompute and read by ``similar``, on SQLite and on the
real PostgreSQL."""

from __future__ import annotations

import queue
from urllib.parse import urlsplit

import numpy as np
from sqlalchemy import inspect

from mirrorscope.crawler.anchor_worker import maintain_bags
from mirrorscope.jobs.similar import bags_from_store, recompute_anchor_bags, similar_urls, stored_signatures
from mirrorscope.detectors.anchor_bags import BagBuilder, fragment_terms
from mirrorscope.detectors.anchors import DEFAULT_PARAMS, cluster_bags
from mirrorscope.detectors.weighted_minhash import DEFAULT_SEED
from mirrorscope.storage.db import downgrade, make_engine, upgrade
from mirrorscope.storage.records import LinkRecord
from mirrorscope.storage.store import Store
from tests.helpers import page

DOCS = "library reference for the python standard modules and their functions"
RECIPES = "bake the bread slowly in a hot oven with flour water salt"


def linked_store(db_url: str) -> Store:
    """Two hosts hold the same three documentation pages and link them with the same
    words; a cookery page links recipes with other words."""
    store = Store(db_url)
    run = store.start_run([], {})
    records = []
    for host in ("docs.test", "mirror.test"):
        for name in ("os", "json", "re"):
            url = f"http://{host}/lib/{name}.html"
            record = page(url, title=f"{name} module reference")
            records.append(record)
        index = page(f"http://{host}/index.html")
        index.links = [
            LinkRecord(f"http://{host}/lib/{name}.html", host, f"{name} module", DOCS + f" {name}", f"{name} functions " + DOCS)
            for name in ("os", "json", "re")
        ]
        records.append(index)
    cook = page("http://cook.test/")
    cook.links = [LinkRecord(f"http://cook.test/{dish}", "cook.test", f"{dish} recipe", RECIPES, RECIPES) for dish in ("rye", "spelt")]
    records.append(cook)
    store.write_pages(records, run)
    return store


def test_migration_0006_creates_and_drops_the_anchor_tables(db_url: str) -> None:
    engine = make_engine(db_url)
    upgrade(engine)
    tables = set(inspect(engine).get_table_names())
    assert {"anchor_signatures", "anchor_pairs", "anchor_clusters"} <= tables
    downgrade(engine, "0005")
    assert not {"anchor_signatures", "anchor_pairs", "anchor_clusters"} & set(inspect(engine).get_table_names())
    assert "host_verdicts" in inspect(engine).get_table_names()
    upgrade(engine)
    engine.dispose()


def test_signature_rows_upsert_replace_and_filter_by_parameters(db_url: str) -> None:
    store = Store(db_url)
    sig = np.arange(80, dtype=np.uint32) * np.uint32(0x01010101)
    row = {"url": "http://a.test/", "m": 80, "seed": DEFAULT_SEED, "window": 8, "scale": 0.5, "cap": 255,
           "idf_bags": 10, "terms": 7, "data": sig.astype("<u4").tobytes()}
    store.write_anchor_signatures([row, dict(row, url="http://b.test/", seed=(1 << 64) - 1)])
    # An update by URL, not a second row.
    store.write_anchor_signatures([dict(row, terms=9)])
    got = store.anchor_signature("http://a.test/")
    assert got["terms"] == 9 and got["seed"] == DEFAULT_SEED and np.frombuffer(got["data"], "<u4").tolist() == sig.tolist()
    assert store.anchor_signature("http://b.test/")["seed"] == (1 << 64) - 1
    assert store.anchor_signature("http://c.test/") is None
    urls, blobs = store.anchor_signature_blobs(80, DEFAULT_SEED, 8, 0.5, 255)
    assert urls == ["http://a.test/"] and blobs == [row["data"]]
    assert store.anchor_signature_blobs(80, DEFAULT_SEED, 4, 0.5, 255) == ([], [])
    store.write_anchor_signatures([dict(row, url="http://d.test/")], replace_all=True)
    assert store.anchor_signature("http://a.test/") is None and store.anchor_signature("http://d.test/") is not None
    store.replace_anchor_clusters(
        [("http://a.test/", "http://b.test/", 0.5), ("http://a.test/", "http://c.test/", 0.9)],
        [("http://a.test/", 1, True), ("http://c.test/", 1, False), ("http://b.test/", 1, False)],
    )
    assert [p["url_b"] for p in store.anchor_pairs()] == ["http://c.test/", "http://b.test/"]
    assert [p["similarity"] for p in store.anchor_pairs("http://b.test/")] == [0.5]
    assert store.anchor_clusters() == [[
        {"url": "http://a.test/", "is_center": True}, {"url": "http://b.test/", "is_center": False},
        {"url": "http://c.test/", "is_center": False},
    ]]
    store.replace_anchor_clusters([], [])
    assert store.anchor_pairs() == [] and store.anchor_clusters() == []
    store.close()


def test_recompute_persists_the_full_pipeline_and_similar_reads_it(db_url: str) -> None:
    store = linked_store(db_url)
    # Nothing stored yet: similar recomputes from links and titles.
    before = similar_urls(store, "http://docs.test/lib/json.html")
    assert before is not None and before[0]["url"] == "http://mirror.test/lib/json.html"
    summary = recompute_anchor_bags(store)
    links, titles = all_links(store), store.page_titles()
    assert len(links) == 8 and len(titles) == 6
    assert summary["bags"] == 8  # six library pages (links and titles) and two recipes (links)
    # The stored signatures are cluster_bags' over bags built link by link, by URL.
    builder, ids = BagBuilder(), {}
    for target, anchor, before_words, after_words in links:
        builder.add_fragment(ids.setdefault(target, len(ids)), anchor, before_words, after_words)
    for url, title in titles:
        builder.add_title(ids.setdefault(url, len(ids)), title)
    expected = cluster_bags(builder.bags(), builder.vocabulary.keys)
    urls, signatures = stored_signatures(store)
    by_url = dict(zip(urls, signatures.tolist()))
    names = {i: u for u, i in ids.items()}
    assert by_url == {names[int(b)]: row for b, row in zip(expected.bag_ids, expected.signatures.tolist())}
    row = store.anchor_signature("http://docs.test/lib/os.html")
    assert (row["m"], row["window"], row["idf_bags"], row["terms"]) == (80, 8, 8, len(set(
        fragment_terms("os module", DOCS + " os", "os functions " + DOCS) + ["os", "module", "reference"]
    )))
    # Pairs: each library page with its mirror's copy at similarity 1 (same words), the
    # two recipes together; nothing across the two subjects.
    pairs = {(p["url_a"], p["url_b"]): p["similarity"] for p in store.anchor_pairs()}
    for name in ("os", "json", "re"):
        assert pairs[(f"http://docs.test/lib/{name}.html", f"http://mirror.test/lib/{name}.html")] == 1.0
    assert pairs[("http://cook.test/rye", "http://cook.test/spelt")] > 0.3
    assert not any("cook.test" in a and "lib/" in b or "lib/" in a and "cook.test" in b for a, b in pairs)
    assert len(pairs) == summary["pairs"]
    # CENTER clusters: every member is paired with its centre; recipes apart from docs.
    clusters = store.anchor_clusters()
    assert len(clusters) == summary["clusters"] and sum(map(len, clusters)) == summary["urls_in_clusters"]
    for cluster in clusters:
        centre = cluster[0]["url"]
        assert cluster[0]["is_center"] and not any(m["is_center"] for m in cluster[1:])
        for member in cluster[1:]:
            assert tuple(sorted((centre, member["url"]))) in pairs
        assert len({"cook" in m["url"] for m in cluster}) == 1
    assert {m["url"] for c in clusters for m in c} >= {"http://cook.test/rye", "http://cook.test/spelt"}
    # similar reads the stored signatures and agrees with the recompute.
    assert similar_urls(store, "http://docs.test/lib/json.html") == before
    # A URL linked after the recompute has no stored signature: similar recomputes.
    late = page("http://late.test/")
    late.links = [LinkRecord("http://late.test/json", "late.test", "json module", DOCS + " json", "json functions " + DOCS)]
    store.write_pages([late], None)
    found = similar_urls(store, "http://late.test/json")
    assert found is not None and found[0]["similarity"] > 0.5 and "json" in found[0]["url"]
    assert similar_urls(store, "http://nowhere.test/") is None
    assert len(bags_from_store(store)) == 9
    store.close()


def all_links(store: Store) -> list[tuple[str, str, str, str]]:
    return [link for batch in store.link_fragment_batches() for link in batch]


def test_link_fragments_come_in_batches_up_to_a_mark(db_url: str) -> None:
    store = linked_store(db_url)
    links = all_links(store)
    assert [len(b) for b in store.link_fragment_batches(3)] == [3, 3, 2]
    assert [link for batch in store.link_fragment_batches(3) for link in batch] == links
    last_link, last_page = store.anchor_high_water()
    assert [len(b) for b in store.link_fragment_batches(5, up_to_id=last_link - 2)] == [5, 1]
    assert store.page_titles(last_page) == store.page_titles()
    store.close()


def pages_message(store: Store) -> tuple:
    links = all_links(store)
    return ("pages", *map(list, zip(*links)), store.page_titles(), len(store.pages()))


def test_crawl_worker_flushes_changed_bags_and_resumes_from_the_store(db_url: str) -> None:
    store = linked_store(db_url)
    inbox: queue.Queue = queue.Queue()
    outbox: queue.Queue = queue.Queue()
    # Everything the store holds, in one message, then close: the full recompute's signatures.
    for message in (pages_message(store), ("close",)):
        inbox.put(message)
    maintain_bags(store.url, DEFAULT_PARAMS, 1000, None, inbox, outbox)
    stats = outbox.get_nowait()
    assert stats["signatures_written"] == 8 and stats["snapshots"] == 1 and stats["urls"] == 8 and stats["pages"] == 9
    incremental = dict(zip(*stored_signatures(store)))
    recompute_anchor_bags(store)
    full = dict(zip(*stored_signatures(store)))
    assert {u: s.tolist() for u, s in incremental.items()} == {u: s.tolist() for u, s in full.items()}
    # Resumed: the worker rebuilds the bags from the store, then a new link to one URL
    # (flush_pages = 1 flushes at once) stores only that URL's signature again.
    late = ("pages", ["http://cook.test/rye"], ["rye bread"], ["dark sour"], [""], [], 1)
    for message in (late, ("close",)):
        inbox.put(message)
    maintain_bags(store.url, DEFAULT_PARAMS, 1, store.anchor_high_water(), inbox, outbox)
    stats = outbox.get_nowait()
    assert stats["urls"] == 8 and stats["signatures_written"] == 8  # first flush: the rebuilt bags' snapshot
    after = dict(zip(*stored_signatures(store)))
    assert after["http://cook.test/rye"].tolist() != full["http://cook.test/rye"].tolist()
    store.close()


def test_a_resumed_worker_counts_pages_stored_after_its_mark_once(db_url: str) -> None:
    """The resumed crawl stores a page before its worker has read the store: the worker
    reads up to the mark taken at open, and gets the page's links by message only."""
    store = linked_store(db_url)
    mark = store.anchor_high_water()
    late = page("http://late.test/")
    late.title = "late additions"
    late.links = [LinkRecord("http://cook.test/rye", "cook.test", "rye bread", "dark sour", "loaf")]
    store.write_pages([late], None)
    inbox: queue.Queue = queue.Queue()
    outbox: queue.Queue = queue.Queue()
    message = ("pages", ["http://cook.test/rye"], ["rye bread"], ["dark sour"], ["loaf"], [("http://late.test/", "late additions")], 1)
    for item in (message, ("close",)):
        inbox.put(item)
    maintain_bags(store.url, DEFAULT_PARAMS, 1000, mark, inbox, outbox)
    assert outbox.get_nowait()["urls"] == 9
    incremental = {u: s.tolist() for u, s in zip(*stored_signatures(store))}
    recompute_anchor_bags(store)
    assert incremental == {u: s.tolist() for u, s in zip(*stored_signatures(store))}
    store.close()


def test_crawl_worker_reports_errors() -> None:
    outbox: queue.Queue = queue.Queue()
    maintain_bags("mysql://nowhere/x", DEFAULT_PARAMS, 10, None, queue.Queue(), outbox)
    assert "unsupported database" in outbox.get_nowait()["error"]


def test_detect_mirrors_takes_stored_anchor_pairs_as_a_vote(db_url: str) -> None:
    """Two hosts holding the same documents under other paths (no path, name or content
    feature sees them), linked to alike from a third: a candidate only through their
    anchor bags."""
    from mirrorscope.jobs.mirrors import anchor_host_pairs, detect_mirrors

    store = Store(db_url)
    run = store.start_run([], {})
    hub = page("http://hub.test/")
    topics = ["kettle descaling", "bread proving", "knife sharpening", "stock reduction", "sauce emulsion", "dough folding"]
    hub.links = [
        LinkRecord(url, host, f"{topic} guide", f"{topic} explained step by step {n}", f"read about {topic} {n}")
        for n, topic in enumerate(topics)
        for url, host in ((f"http://alpha.test/lib/item{n}.html", "alpha.test"), (f"http://omega.test/node/{n}", "omega.test"))
    ]
    store.write_pages([hub], run)
    assert detect_mirrors(store)["pairs_judged"] == 0
    summary = recompute_anchor_bags(store)
    assert summary["pairs"] >= len(topics)
    votes = anchor_host_pairs(store)
    assert sorted(set(votes)) == [("alpha.test", "omega.test")] and len(votes) == len(topics)
    detect_mirrors(store)
    judged = store.mirror_pairs(include_none=True)
    assert [{urlsplit(p["url_a"]).netloc, urlsplit(p["url_b"]).netloc} for p in judged] == [{"alpha.test", "omega.test"}]
    assert judged[0]["features"]["anchors"] == 1.0
    store.close()
