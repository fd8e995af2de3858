"""Term vectors (detectors/term_vectors.py): exact values, layout and round trips."""

from __future__ import annotations

import numpy as np
import pytest

from mirrorscope.detectors.term_vectors import (
    DocumentFrequencies,
    TermVectors,
    count_terms,
    decode_many,
    dequantise,
    encode_many,
    idf,
    quantise,
    select_top,
    vectors_of,
)
from tests.helpers import requires_real_pages


def test_quantise_is_half_octaves_in_four_bits() -> None:
    assert quantise([1, 2, 3, 4, 181, 1000]).tolist() == [0, 2, 3, 4, 15, 15]
    assert dequantise([0, 2, 3]).tolist() == [1.0, 2.0, pytest.approx(2 ** 1.5)]
    # Every count up to 181 reads back within half a step (a factor of 2 ** 0.25).
    tf = np.arange(1, 182)
    assert np.all(np.abs(np.log2(dequantise(quantise(tf)) / tf)) <= 0.25 + 1e-12)


def test_count_terms_gives_csr_counts() -> None:
    offsets, ids, counts = count_terms([0, 0, 1, 0], [5, 3, 5, 5], 3)
    assert offsets.tolist() == [0, 2, 3, 3]
    assert ids.tolist() == [3, 5, 5]
    assert counts.tolist() == [1, 2, 1]


def test_idf_is_smoothed() -> None:
    assert idf([0, 1, 3], 3).tolist() == pytest.approx([np.log(4) + 1, np.log(2) + 1, 1.0])


def test_select_top_keeps_heaviest_ids_ascending() -> None:
    # Weights 5, 4, 2 and, in the second row, a tie broken by the smaller id.
    v = select_top([0, 3, 5], [1, 2, 3, 7, 9], [1, 4, 2, 3, 3], [5, 1, 1, 1, 1], k=2)
    assert v.offsets.tolist() == [0, 2, 4]
    assert v.term_ids.tolist() == [1, 2, 7, 9]
    assert v.levels.tolist() == [0, 4, 3, 3]
    v = select_top([0, 3, 5], [1, 2, 3, 7, 9], [1, 4, 2, 3, 4], [5, 1, 1, 1, 1], k=1)
    assert v.term_ids.tolist() == [1, 9]
    with pytest.raises(ValueError):
        select_top([0], [], [], [], k=0)


def test_encode_layout_is_exact() -> None:
    v = TermVectors(np.array([0, 3, 3, 4]), np.array([3, 5, 200, 0]), np.array([1, 2, 15, 7], dtype=np.uint8))
    blobs = encode_many(v)
    assert blobs == [bytes([3, 0x12, 0xF0, 3, 1, 0xC2, 1]), bytes([0]), bytes([1, 0x70, 0])]
    back = decode_many(blobs)
    assert back.offsets.tolist() == [0, 3, 3, 4]
    assert back.term_ids.tolist() == [3, 5, 200, 0]
    assert back.levels.tolist() == [1, 2, 15, 7]


def test_round_trip_of_many_random_vectors() -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(0, 51, size=300)
    ids = np.concatenate([np.sort(rng.choice(2_000_000, size=s, replace=False)) for s in sizes])
    levels = rng.integers(0, 16, size=ids.size).astype(np.uint8)
    v = TermVectors(np.concatenate(([0], np.cumsum(sizes))), ids, levels)
    back = decode_many(encode_many(v))
    assert np.array_equal(back.offsets, v.offsets)
    assert np.array_equal(back.term_ids, ids)
    assert np.array_equal(back.levels, levels)
    assert decode_many([]).term_ids.size == 0


def test_encode_refuses_unsorted_and_decode_refuses_garbage() -> None:
    with pytest.raises(ValueError):
        encode_many(TermVectors(np.array([0, 2]), np.array([5, 3]), np.zeros(2, dtype=np.uint8)))
    with pytest.raises(ValueError):
        decode_many([b""])
    with pytest.raises(ValueError):
        decode_many([bytes([3, 0, 0, 1])])


def test_vectors_of_counts_frequencies_then_selects() -> None:
    frequencies = DocumentFrequencies()
    # Page 0: term 0 twice, term 1 once; page 1: term 1 three times, term 2 once.
    v = vectors_of([0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 2], 2, frequencies, k=1)
    same = vectors_of([0, 0, 1, 1], [0, 1, 1, 2], 2, DocumentFrequencies(), [2, 1, 3, 1], k=1)
    assert same.term_ids.tolist() == [0, 1] and same.levels.tolist() == [2, 3]
    assert frequencies.df.tolist() == [1, 2, 1]
    assert frequencies.n_documents == 2
    # idf: term 0 and 2 ln(3/2)+1 = 1.405, term 1 ln(3/3)+1 = 1: page 0 keeps term 0 (2.81 > 1),
    # page 1 keeps term 1 (3 > 1.405).
    assert v.term_ids.tolist() == [0, 1]
    assert v.levels.tolist() == [2, 3]
    ids, increments = frequencies.take_pending()
    assert ids.tolist() == [0, 1, 2] and increments.tolist() == [1, 2, 1]
    assert frequencies.take_pending()[0].size == 0


# -- the store ------------------------------------------------------------------------------


def test_store_round_trip(db_url: str) -> None:
    from mirrorscope.storage.store import Store
    from tests.helpers import page

    store = Store(db_url)
    try:
        ids = store.term_ids(["apt", "debian", "日本"])
        assert len(set(ids)) == 3
        # The same terms again, with a new one: stored ids kept, the new one added.
        again = store.term_ids(["debian", "dpkg", "apt"])
        assert again[0] == ids[1] and again[2] == ids[0] and again[1] not in ids
        store.add_document_frequencies([ids[0], ids[1]], [2, 1])
        store.add_document_frequencies([ids[0]], [3])
        dictionary = {term: (tid, df) for tid, term, df in store.term_dictionary()}
        assert dictionary == {"apt": (ids[0], 5), "debian": (ids[1], 1), "日本": (ids[2], 0), "dpkg": (again[1], 0)}

        v = TermVectors(np.array([0, 2, 3]), np.array(sorted(ids[:2]) + [ids[2]]), np.array([3, 0, 15], dtype=np.uint8))
        blobs = encode_many(v)
        records = [page("http://a.test/1", term_vector=(2, blobs[0])), page("http://a.test/2", term_vector=(1, blobs[1])),
                   page("http://a.test/3")]
        assert store.write_pages(records, None).stored == 3
        rows = [row for batch in store.term_vector_batches() for row in batch]
        assert [url for _, url, _ in rows] == ["http://a.test/1", "http://a.test/2"]
        assert [data for _, _, data in rows] == blobs
        assert store.term_vector_count() == 2
        back = decode_many([data for _, _, data in rows])
        assert back.term_ids.tolist() == v.term_ids.tolist() and back.levels.tolist() == [3, 0, 15]
        # A re-fetched page without a vector loses its old one.
        store.write_pages([page("http://a.test/2")], None)
        assert store.term_vector_count() == 1

        store.replace_topics({"k": 2, "loss": [0.5, 0.25]}, [("mirror", "http://a.test/", 2, ["apt", "<b>"])])
        assert store.coclustering() == {"k": 2, "loss": [0.5, 0.25]}
        assert store.topic_labels() == [{"kind": "mirror", "subject": "http://a.test/", "pages": 2, "terms": ["apt", "<b>"]}]
        store.replace_topics({"k": 3}, [])
        assert store.coclustering() == {"k": 3} and store.topic_labels() == []
    finally:
        store.close()


def test_count_terms_with_counts_sums_them() -> None:
    offsets, ids, counts = count_terms([1, 0, 1], [4, 2, 4], 2, counts=[3, 1, 2])
    assert offsets.tolist() == [0, 1, 2] and ids.tolist() == [2, 4] and counts.tolist() == [1, 5]


# -- the crawl's pipeline -------------------------------------------------------------------


def test_pipeline_is_absent_when_switched_off() -> None:
    from scrapy.exceptions import NotConfigured

    from mirrorscope.crawler.term_vectors import TermVectorPipeline
    from tests.helpers import project_crawler

    with pytest.raises(NotConfigured):
        TermVectorPipeline.from_crawler(project_crawler(TERM_VECTORS_ENABLED=False))


def test_pipeline_makes_vectors_and_counts_frequencies(sqlite_url: str) -> None:
    from mirrorscope.crawler.items import PageItem
    from mirrorscope.crawler.term_vectors import TermVectorPipeline
    from mirrorscope.storage.store import Store
    from tests.helpers import page, project_crawler

    store = Store(sqlite_url)
    try:
        store.term_ids(["older"])  # an earlier crawl's term keeps its id
        store.add_document_frequencies([1], [4])
        pipeline = TermVectorPipeline(project_crawler(), batch_size=2, interval=1.0, flush_pages=2)
        pipeline.store = store
        pipeline.ids = {"older": 1}
        from mirrorscope.detectors.term_vectors import DocumentFrequencies

        pipeline.frequencies = DocumentFrequencies([0, 4], 4)
        items = [
            PageItem(page("http://a.test/1"), tokens="the apt apt apt dpkg older x".split()),
            PageItem(page("http://a.test/2"), tokens="dpkg dpkg of".split()),
        ]
        pipeline._vectors(items)
        ids = {term: tid for tid, term, _ in store.term_dictionary()}
        assert sorted(ids) == ["apt", "dpkg", "older"]  # stopwords and one-letter words are no terms
        first = decode_many([items[0].record.term_vector[1]])
        assert items[0].record.term_vector[0] == 3
        by_id = dict(zip(first.term_ids.tolist(), first.tf().tolist()))
        assert by_id == {ids["older"]: 1.0, ids["apt"]: pytest.approx(2 ** 1.5), ids["dpkg"]: 1.0}
        assert decode_many([items[1].record.term_vector[1]]).term_ids.tolist() == [ids["dpkg"]]
        # Two pages reached flush_pages: their counts are in the store, added to the earlier ones.
        df = {term: count for _, term, count in store.term_dictionary()}
        assert df == {"older": 5, "apt": 1, "dpkg": 2}
        assert pipeline.frequencies.n_documents == 6
    finally:
        store.close()


# -- a real crawl of the real-page world ------------------------------------------------------


@pytest.mark.timeout(900)
@requires_real_pages
def test_real_crawl_labels_mirror_clusters_with_their_documents_terms(tmp_path) -> None:
    """The small real-page world crawled with the defaults, then ``mirror-report detect``:
    every HTML page has a vector, and each mirror cluster's topic terms are words of its
    own pages (the Jinja copy's name, the Werkzeug manual's API words, the French Debian
    guide's "paquet", the Chinese Debian Reference's bigrams). Note what it cannot ask:
    stopwords are English only, so a German copy's label is German function words."""
    import json
    from urllib.parse import urlsplit

    from mirrorscope.jobs.topics import mirror_cluster_pages
    from mirrorscope.sandbox import build_real_world
    from mirrorscope.storage.store import Store
    from tests.helpers import crawl_world, mirror_report

    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    crawl_world(build_real_world(0, small=True), tmp_path, db_url, "-s", "RESOLVE_ONLY_HOSTS_FILE=True")
    detect = mirror_report("detect", "--db", db_url, timeout=600)
    assert detect.returncode == 0, detect.stderr[-2000:]
    assert "topics:" in detect.stderr
    shown = mirror_report("--db", db_url, "--format", "json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    report = json.loads(shown.stdout)

    store = Store(db_url, access="read")
    try:
        assert store.term_vector_count() == len(store.sketches()) > 200
        rows = [row for batch in store.term_vector_batches() for row in batch]
        words = {tid: term for tid, term, _ in store.term_dictionary()}
    finally:
        store.close()
    urls = [url for _, url, _ in rows]
    vectors = decode_many([bytes(data) for _, _, data in rows])
    assert 60 < np.mean([len(data) for _, _, data in rows]) < 130  # about 100 bytes a page
    assert report["coclustering"]["loss"] == sorted(report["coclustering"]["loss"], reverse=True)

    clusters = report["mirror_clusters"]
    labels = dict(zip((c[0] for c in clusters), report["mirror_cluster_topics"]))
    assert len(labels) >= 5 and all(labels.values()), labels
    group = mirror_cluster_pages(urls, clusters)
    for number, cluster in enumerate(clusters):
        # Every label term is in the vector of a page of that cluster.
        own = {words[t] for t in vectors.term_ids[np.isin(vectors.rows, np.flatnonzero(group == number))].tolist()}
        assert set(report["mirror_cluster_topics"][number]) <= own, cluster
    by_host = {urlsplit(root).hostname: terms for c, terms in zip(clusters, report["mirror_cluster_topics"]) for root in c}
    # Which pages of a copy the crawl holds varies from run to run, and the label's order with it.
    assert {"jinja2", "jinja", "template", "templates"} & set(by_host["archive.opendocs-library.org"])
    assert {"werkzeug", "datastructures", "wrappers", "environ", "request", "response", "multidict"} & set(by_host["werkzeug.wsgi-toolkit.org"])
    assert {"paquet", "paquets", "debian", "dpkg"} & set(by_host["debian.miroir-docs.fr"])
    assert any("\u4e00" <= ch <= "\u9fff" for term in by_host["reference.debian-tw.org"] for ch in term)


def test_a_crawl_stores_a_vector_for_every_sketched_page(tmp_path, db_url: str) -> None:
    """The standard sandbox world crawled with the defaults, on SQLite and PostgreSQL:
    every sketched (HTML) page has a term vector, the dictionary holds each vector's terms,
    and the document frequencies were written at close."""
    from mirrorscope.sandbox import build_world
    from mirrorscope.storage.store import Store
    from tests.helpers import crawl_world

    crawl_world(build_world(0), tmp_path, db_url)
    store = Store(db_url, access="read")
    try:
        sketched = len(store.sketches())
        blobs = [bytes(data) for batch in store.term_vector_batches() for _, _, data in batch]
        dictionary = store.term_dictionary()
    finally:
        store.close()
    assert len(blobs) == sketched > 20
    vectors = decode_many(blobs)
    ids = {tid for tid, _, _ in dictionary}
    assert set(vectors.term_ids.tolist()) <= ids
    df = {tid: count for tid, _, count in dictionary}
    # A term in k vectors was in at least k pages.
    in_vectors = np.bincount(vectors.term_ids)
    assert all(df[t] >= in_vectors[t] for t in np.flatnonzero(in_vectors).tolist())
    assert max(df.values()) <= sketched
