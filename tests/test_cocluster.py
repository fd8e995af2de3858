"""Information-theoretic co-clustering (detectors/cocluster.py): exact small cases, the
loss never rising, determinism, labels."""

from __future__ import annotations

import numpy as np
import pytest

from mirrorscope.detectors.cocluster import cocluster, label_groups, page_term_matrix


def _blocks(row_sizes: list[int], col_sizes: list[int], rng: np.random.Generator | None = None):
    """A block-diagonal matrix in COO form: row block b meets only column block b."""
    rows, cols, vals = [], [], []
    r0 = c0 = 0
    for rs, cs in zip(row_sizes, col_sizes):
        rr, cc = np.meshgrid(np.arange(r0, r0 + rs), np.arange(c0, c0 + cs), indexing="ij")
        rows.append(rr.ravel()); cols.append(cc.ravel())
        vals.append(np.ones(rr.size) if rng is None else rng.uniform(0.5, 2.0, rr.size))
        r0 += rs; c0 += cs
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), (r0, c0)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_block_diagonal_is_recovered_exactly() -> None:
    rows, cols, vals, shape = _blocks([4, 6, 3], [5, 2, 7], np.random.default_rng(1))
    result = cocluster(rows, cols, vals, shape, k=3, l=3, seed=5)
    assert _same_partition(result.row_clusters, np.repeat([0, 1, 2], [4, 6, 3]))
    assert _same_partition(result.column_clusters, np.repeat([0, 1, 2], [5, 2, 7]))
    # Every co-cluster off the diagonal is empty.
    assert np.count_nonzero(result.joint) == 3


def test_uniform_blocks_lose_no_information() -> None:
    # Two blocks of equal mass, uniform within: I(X; Y) = ln 2 and the co-clustering keeps all of it.
    rows, cols, vals, shape = _blocks([3, 3], [4, 4])
    result = cocluster(rows, cols, vals, shape, k=2, l=2)
    assert result.mutual_information == pytest.approx(np.log(2), abs=1e-12)
    assert result.loss[-1] == pytest.approx(0.0, abs=1e-12)
    assert result.joint.tolist() in ([[0.5, 0.0], [0.0, 0.5]], [[0.0, 0.5], [0.5, 0.0]])
    # Nothing moved after the first iteration: the loop stopped there.
    assert result.iterations == 1


def test_one_cluster_loses_everything() -> None:
    rows, cols, vals, shape = _blocks([3, 3], [4, 4])
    result = cocluster(rows, cols, vals, shape, k=1, l=1)
    assert result.loss[0] == pytest.approx(np.log(2), abs=1e-12)
    assert result.joint.tolist() == [[pytest.approx(1.0)]]


def _random_sparse(seed: int, m: int = 300, n: int = 400, nnz: int = 5000):
    rng = np.random.default_rng(seed)
    # Three loose topics plus noise, so there is structure to find and local moves to make.
    topic = rng.integers(0, 3, m)
    rows = rng.integers(0, m, nnz)
    cols = np.where(rng.random(nnz) < 0.7, rng.integers(0, n // 3, nnz) + (n // 3) * topic[rows], rng.integers(0, n, nnz))
    return rows, cols, rng.exponential(1.0, nnz), (m, n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loss_decreases_monotonically(seed: int) -> None:
    rows, cols, vals, shape = _random_sparse(seed)
    result = cocluster(rows, cols, vals, shape, k=8, l=12, iterations=20, seed=seed)
    assert result.iterations >= 2
    assert np.all(np.diff(result.loss) <= 1e-12), result.loss
    assert result.loss[-1] < result.loss[0]
    assert 0 <= result.loss[-1] <= result.mutual_information
    # Marginals are kept: q(x̂, ŷ) sums to p over each cluster.
    assert result.joint.sum() == pytest.approx(1.0)


def test_same_seed_same_result() -> None:
    rows, cols, vals, shape = _random_sparse(3)
    a = cocluster(rows, cols, vals, shape, k=6, l=9, seed=11)
    b = cocluster(rows, cols, vals, shape, k=6, l=9, seed=11)
    assert np.array_equal(a.row_clusters, b.row_clusters)
    assert np.array_equal(a.column_clusters, b.column_clusters)
    assert np.array_equal(a.loss, b.loss)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        cocluster([0], [0], [-1.0], (1, 1))
    with pytest.raises(ValueError):
        cocluster([0], [3], [1.0], (1, 2))
    with pytest.raises(ValueError):
        cocluster([0], [0], [0.0], (1, 1))


def test_page_term_matrix_weights_and_drops_terms() -> None:
    # Four vectors; term 9 in one vector (dropped), term 5 in all four (> half: dropped).
    rows = [0, 0, 1, 1, 2, 3, 3, 0]
    terms = [5, 7, 5, 7, 5, 5, 8, 9]
    tf = [1, 2, 1, 4, 1, 1, 3, 1]
    matrix = page_term_matrix(rows, terms, tf, 4)
    assert matrix.terms.tolist() == [7]
    assert matrix.rows.tolist() == [0, 1] and matrix.cols.tolist() == [0, 0]
    assert matrix.values.tolist() == pytest.approx([2 * np.log(2), 4 * np.log(2)])
    assert matrix.shape == (4, 1)


def test_labels_rank_the_groups_own_term_cluster_first() -> None:
    rows, cols, vals, shape = _blocks([2, 2], [3, 3])
    vals = vals.copy()
    vals[1] = 5.0  # page 0 leans on term 1
    result = cocluster(rows, cols, vals, shape, k=2, l=2)
    groups = np.array([0, 0, 1, -1])  # page 3 belongs to no group
    labels = label_groups(result, rows, cols, vals, groups, 3, top=2)
    assert labels[0].tolist() == [1, 0]  # term 1 weighs 6 in the group, terms 0 and 2 weigh 2 each
    assert labels[1].tolist() == [3, 4]
    assert labels[2].tolist() == []


# -- the job and the report -------------------------------------------------------------------


def _topic_store(url: str):
    """A store of 8 pages with term vectors: a mirrored Debian manual on a.test and
    b.test, Python pages on c.test, and a spam host whose words include markup."""
    from mirrorscope.detectors.term_vectors import encode_many, TermVectors
    from mirrorscope.storage.store import Store
    from tests.helpers import page

    store = Store(url)
    words = ["apt", "dpkg", "debian", "python", "numpy", "casino", "<b>pills</b>", "install"]
    ids = dict(zip(words, store.term_ids(words)))
    pages = {
        "http://a.test/ref/1": {"apt": 4, "dpkg": 2, "debian": 3}, "http://a.test/ref/2": {"apt": 2, "debian": 1, "install": 1},
        "http://b.test/ref/1": {"apt": 4, "dpkg": 2, "debian": 3}, "http://b.test/ref/2": {"apt": 2, "debian": 1, "install": 1},
        "http://c.test/1": {"python": 3, "numpy": 2}, "http://c.test/2": {"python": 1, "numpy": 4, "install": 1},
        "http://s.test/1": {"casino": 5, "<b>pills</b>": 2}, "http://s.test/2": {"casino": 2, "<b>pills</b>": 3},
    }
    records = []
    for url_, terms in pages.items():
        pairs = sorted((ids[w], n) for w, n in terms.items())
        from mirrorscope.detectors.term_vectors import quantise

        v = TermVectors(np.array([0, len(pairs)]), np.array([t for t, _ in pairs]), quantise([n for _, n in pairs]))
        records.append(page(url_, term_vector=(len(pairs), encode_many(v)[0])))
    store.write_pages(records, None)
    store.replace_mirrors([], [[("http://a.test/ref/", True), ("http://b.test/ref/", False)]])
    store.replace_host_verdicts([{"host": "s.test", "kind": "spam", "flagged": True, "score": 0.9, "pages": 2, "reasons": ["farm"], "features": {}}])
    return store


def test_topics_job_labels_mirror_clusters_and_spam_hosts(sqlite_url: str) -> None:
    from mirrorscope.jobs.topics import detect_topics

    store = _topic_store(sqlite_url)
    try:
        summary = detect_topics(store, k=3, l=3)
        assert summary["pages"] == 8 and summary["nonzeros"] > 0
        labels = {(t["kind"], t["subject"]): t for t in store.topic_labels()}
        mirror = labels[("mirror", "http://a.test/ref/")]
        assert mirror["pages"] == 4
        assert set(mirror["terms"][:3]) == {"apt", "dpkg", "debian"}
        assert set(labels[("spam", "s.test")]["terms"]) == {"casino", "<b>pills</b>"}
        stored = store.coclustering()
        assert stored["loss"] == sorted(stored["loss"], reverse=True)
        assert sum(c["pages"] for c in stored["page_clusters"]) == 8
    finally:
        store.close()


def test_report_shows_topics_escaped(sqlite_url: str, tmp_path, capsys) -> None:
    import json

    import jsonschema

    from mirrorscope.jobs.topics import detect_topics
    from mirrorscope.report.cli import main
    from mirrorscope.report.document import report_schema

    store = _topic_store(sqlite_url)
    try:
        detect_topics(store, k=3, l=3)
    finally:
        store.close()
    assert main(["--db", sqlite_url, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    jsonschema.validate(document, report_schema(), cls=jsonschema.Draft202012Validator)
    assert document["mirror_clusters"] == [["http://a.test/ref/", "http://b.test/ref/"]]
    assert set(document["mirror_cluster_topics"][0][:3]) == {"apt", "dpkg", "debian"}
    assert {t["kind"] for t in document["topics"]} == {"mirror", "spam"}
    assert document["coclustering"]["k"] == 3
    html = tmp_path / "report.html"
    assert main(["--db", sqlite_url, "--format", "html", "--output", str(html)]) == 0
    text = html.read_text()
    assert "&lt;b&gt;pills&lt;/b&gt;" in text and "<b>pills" not in text
    assert 'id="topics"' in text
    table = tmp_path / "report.txt"
    assert main(["--db", sqlite_url, "--output", str(table)]) == 0
    shown = table.read_text()
    assert "Topic terms" in shown and "casino" in shown and "apt" in shown
