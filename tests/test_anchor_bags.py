"""Anchor-based bags, multiplicities, MH signatures, ExtractSimilarPairs and CENTER
(Haveliwala, Gionis and Indyk, WebDB 2000): ``detectors.anchors`` and
``detectors.anchor_lsh``.

The estimator's spread is tested, not only its mean: agreement - exact weighted Jaccard
must have a standard deviation within [0.8, 1.25] of sqrt(J (1 - J) / m); a weak hash
family shows up as an inflated spread. Pair extraction is checked against brute force
over all pairs of a small set.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mirrorscope.detectors.anchor_lsh import (
    DEFAULT_K,
    DEFAULT_L,
    EMPTY,
    lsh_tables,
    similar_pairs,
    similar_to,
)
from mirrorscope.detectors import url_bags
from mirrorscope.detectors.anchor_bags import (
    BagBuilder,
    Bags,
    Vocabulary,
    bags_from_arrays,
    fragment_terms,
    merge_bags,
    title_terms,
)
from mirrorscope.detectors.anchors import cluster_bags
from mirrorscope.detectors.lsh import candidate_probability
from mirrorscope.detectors.tfidf import DEFAULT_CAP, DEFAULT_SCALE, Idf, multiplicities
from mirrorscope.detectors.url_bags import UrlBags
from mirrorscope.detectors.weighted_minhash import DEFAULT_M, DEFAULT_SEED, minhash_signatures
from mirrorscope.detectors.canonical import canonical_document
from mirrorscope.detectors.center import center_clusters
from mirrorscope.detectors.minhash import splitmix64

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def bag_dict(bags: Bags) -> dict[int, dict[int, int]]:
    return {
        int(b): dict(zip(bags.term_ids[lo:hi].tolist(), bags.counts[lo:hi].tolist()))
        for b, lo, hi in zip(bags.bag_ids, bags.offsets[:-1], bags.offsets[1:])
    }


def words_of(builder: BagBuilder, bags: Bags, bag_id: int) -> dict[str, int]:
    terms = builder.vocabulary.terms()
    return {terms[t]: c for t, c in bag_dict(bags)[bag_id].items()}


# --- bags from links --------------------------------------------------------------------


def test_fragment_window_cuts_page_words_then_drops_stopwords() -> None:
    before = "w1 w2 w3 the w5 w6 w7 w8 of w10"  # 10 words: the last 8 are w3 .. w10
    after = "a1 and a3 a4 a5 a6 a7 a8 a9 a10"
    assert fragment_terms("go home", before, after) == [
        *("w3", "w5", "w6", "w7", "w8", "w10"),
        *("go", "home"),
        *("a1", "a3", "a4", "a5", "a6", "a7", "a8"),
    ]
    assert fragment_terms("python docs", before, after, window=2) == ["w10", "python", "docs", "a1"]
    assert fragment_terms("python docs", before, after, window=0) == ["python", "docs"]
    # Fewer words than the window before the anchor (an anchor near the start of a
    # page): all of them, not only the last len - window.
    assert fragment_terms("json", "re os json", "x") == ["re", "os", "json", "json"]
    assert fragment_terms("go", "alpha beta gamma delta epsilon", "", window=8) == ["alpha", "beta", "gamma", "delta", "epsilon", "go"]
    # One-character words and stopwords go; empty and blank inputs give nothing.
    assert fragment_terms("x y zz", "", "") == ["zz"]
    assert fragment_terms("", "", "") == []
    assert fragment_terms("the of", "  \t ", "\n") == []
    with pytest.raises(ValueError):
        fragment_terms("a", "b", "c", window=-1)


def test_title_terms_are_canonical() -> None:
    assert title_terms("The Python Tutorial — Python 3.11 docs") == ["python", "tutorial", "python", "11", "docs"]
    assert title_terms("") == []


PAGE = """<html><body><a href="/first">First link</a> one two three four five six seven eight nine ten
<p>alpha beta gamma delta epsilon zeta eta theta iota kappa <a href="/nested"><b>Deep</b>
<i>nest</i><span>ed</span> markup</a> lambda mu nu xi omicron pi rho sigma tau upsilon</p>
<p>Logo: <a href="/img"><img src="x.png" alt="Company Logo"></a> trailing words</p>
<p>an empty anchor <a href="/empty"></a> between words</p>
<p>stop <a href="/stop">the of</a></p>
<p>final words before the <a href="/last">last link</a></p></body></html>"""

EXPECTED_FRAGMENTS = {
    # A link opening the page: nothing before it.
    "/first": "first link one two three four five six seven eight",
    # Nested inline markup is one anchor text; 8 words each side.
    "/nested": "gamma delta epsilon zeta eta theta iota kappa deep nested markup lambda mu nu xi omicron pi rho sigma",
    # An image's alt text is the anchor text.
    "/img": "xi omicron pi rho sigma tau upsilon logo company logo trailing words empty anchor words stop",
    # An empty anchor still brings its windows.
    "/empty": "logo company logo trailing words empty anchor words stop final words",
    # An anchor of stopwords only: its windows remain.
    "/stop": "trailing words empty anchor words stop final words last link",
    # A link closing the page: nothing after it.
    "/last": "words stop final words last link",
}


def test_bags_from_a_parsed_page() -> None:
    doc = canonical_document(PAGE)
    url_ids = {href: i for i, href in enumerate(EXPECTED_FRAGMENTS)}
    assert [a.href for a in doc.anchors] == list(EXPECTED_FRAGMENTS)
    builder = BagBuilder()
    for anchor in doc.anchors:
        builder.add_fragment(url_ids[anchor.href], doc.anchor_text(anchor), doc.window_before(anchor), doc.window_after(anchor))
    for anchor in doc.anchors:
        fragment = fragment_terms(doc.anchor_text(anchor), doc.window_before(anchor), doc.window_after(anchor))
        assert " ".join(fragment) == EXPECTED_FRAGMENTS[anchor.href], anchor.href
    bags = builder.bags()
    assert bags.bag_ids.tolist() == sorted(url_ids.values())
    for href, text in EXPECTED_FRAGMENTS.items():
        expected: dict[str, int] = {}
        for word in text.split():
            expected[word] = expected.get(word, 0) + 1
        assert words_of(builder, bags, url_ids[href]) == expected, href


def test_bag_is_multiset_union_of_fragments_plus_latest_title() -> None:
    builder = BagBuilder()
    builder.add_fragment(7, "python tutorial", "read the", "online")
    builder.add_fragment(7, "tutorial", "", "for beginners")
    builder.add_fragment(8, "unrelated", "", "")
    builder.add_title(7, "Old Title")
    builder.add_title(7, "The Python Tutorial")
    builder.add_title(9, "")  # a page without title words: an empty bag
    bags = builder.bags()
    assert words_of(builder, bags, 7) == {"read": 1, "python": 2, "tutorial": 3, "online": 1, "beginners": 1}
    assert words_of(builder, bags, 9) == {}
    assert builder.changed().tolist() == [7, 8, 9]
    assert builder.changed().tolist() == []
    # Selecting bags: ids never seen come out empty.
    some = builder.bags([9, 7, 12])
    assert some.bag_ids.tolist() == [7, 9, 12]
    assert some.sizes.tolist() == [5, 0, 0]
    # A title set after bags were read replaces the one those reads saw.
    builder.add_title(9, "Beginners")
    builder.add_title(7, "Tutorial")
    assert words_of(builder, builder.bags([7, 9]), 9) == {"beginners": 1}
    assert words_of(builder, builder.bags([7]), 7) == {"read": 1, "python": 1, "tutorial": 3, "online": 1, "beginners": 1}


# --- CSR construction ---------------------------------------------------------------------


def test_bags_from_arrays_merges_and_sorts() -> None:
    bags = bags_from_arrays([5, 2, 5, 2, 5], [3, 1, 3, 0, 1], include=[9, 2])
    assert bags.bag_ids.tolist() == [2, 5, 9]
    assert bags.offsets.tolist() == [0, 2, 4, 4]
    assert bags.term_ids.tolist() == [0, 1, 1, 3]
    assert bags.counts.tolist() == [1, 1, 1, 2]
    assert bags.counts.dtype == np.int32 and bags.term_ids.dtype == np.int32
    for term in (-1, 2**31):  # term ids are kept in 32 bits
        with pytest.raises(ValueError, match="term ids"):
            bags_from_arrays([0], [term])
    weighted = bags_from_arrays([1, 1, 0], [4, 4, 4], counts=[2, 3, 7])
    assert bag_dict(weighted) == {0: {4: 7}, 1: {4: 5}}
    empty = bags_from_arrays([], [], include=[3])
    assert len(empty) == 1 and empty.offsets.tolist() == [0, 0]
    with pytest.raises(ValueError):
        bags_from_arrays([1], [-1])
    with pytest.raises(ValueError):
        bags_from_arrays([1, 2], [1])


# --- tf-idf multiplicities ----------------------------------------------------------------


def test_multiplicities_follow_the_documented_formula() -> None:
    # Term 0 in every bag, term 1 in two of four, terms 2 and 3 in one, tf up to 40.
    bags = bags_from_arrays([0, 1, 2, 3, 0, 1, 0, 0], [0, 0, 0, 0, 1, 1, 2, 3], counts=[1, 1, 1, 1, 3, 1, 40, 1])
    keys = np.array([50, 10, 40, 30, 20], dtype=np.uint64)  # term 4 in no bag
    idf = Idf.of(bags, keys)
    assert idf.n_bags == 4
    assert idf.term_keys.tolist() == [10, 30, 40, 50]
    assert idf.document_frequency.tolist() == [2, 1, 1, 4]
    weighted = multiplicities(bags, keys, idf)
    expected = {
        0: {0: 1, 1: round(0.5 * 3 * math.log(2)), 2: min(DEFAULT_CAP, round(0.5 * 40 * math.log(4))), 3: round(0.5 * math.log(4))},
        1: {0: 1, 1: max(1, round(0.5 * math.log(2)))},
        2: {0: 1},
        3: {0: 1},
    }
    assert bag_dict(weighted) == expected
    assert DEFAULT_SCALE == 0.5 and DEFAULT_CAP == 255
    # Scale and cap.
    assert bag_dict(multiplicities(bags, keys, idf, scale=10.0, cap=50))[0] == {0: 1, 1: 21, 2: 50, 3: 14}
    # A term unseen by the snapshot counts as in one bag: log(N).
    later = bags_from_arrays([0], [4])
    assert multiplicities(later, keys, idf, scale=1.0).counts.tolist() == [round(math.log(4))]
    # One bag (or none): idf is 0 everywhere, every term kept once.
    single = bags_from_arrays([0, 0], [0, 1], counts=[5, 1])
    assert multiplicities(single, keys, Idf.of(single, keys)).counts.tolist() == [1, 1]
    nothing = Idf.of(bags_from_arrays([], []), keys)
    assert nothing.n_bags == 0 and multiplicities(bags, keys, nothing).counts.tolist() == [1] * 8
    with pytest.raises(ValueError):
        multiplicities(bags, keys, idf, scale=0.0)


# --- MH signatures --------------------------------------------------------------------------


def _fin64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _fmix32(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def reference_signature(term_keys: list[int], counts: list[int], m: int = DEFAULT_M, seed: int = DEFAULT_SEED) -> list[int]:
    """The documented scheme in plain Python integers."""
    words = splitmix64(seed)
    seeds = [next(words) >> 32 for _ in range(m)]
    elements = [_fin64((key + c * 0x9E3779B97F4A7C15) & M64) >> 32 for key, k in zip(term_keys, counts) for c in range(1, k + 1)]
    return [min(_fmix32(e ^ s) for e in elements) for s in seeds]


def test_signature_matches_the_documented_scheme() -> None:
    vocabulary = Vocabulary()
    ids = vocabulary.ids(["anchor", "text", "window", "anchor"])
    assert ids == [0, 1, 2, 0]
    bags = bags_from_arrays([0, 0, 0], [0, 1, 2], counts=[3, 1, 2])
    sig = minhash_signatures(bags, vocabulary.keys)
    assert sig.dtype == np.uint32 and sig.shape == (1, DEFAULT_M)
    assert sig[0].tolist() == reference_signature([int(k) for k in vocabulary.keys], [3, 1, 2])


def test_giant_bag_sliced_like_small_ones() -> None:
    # 1,400 terms x multiplicity 5 = 7,000 elements: more than one chunk (6,553 at m = 80).
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**63, 1400, dtype=np.int64).astype(np.uint64)
    giant = bags_from_arrays(np.zeros(1400), np.arange(1400), counts=np.full(1400, 5))
    sig = minhash_signatures(giant, keys)
    assert sig[0].tolist() == reference_signature([int(k) for k in keys], [5] * 1400)
    # The same bag among small ones gets the same signature.
    mixed = bags_from_arrays(
        np.concatenate((np.zeros(1400), [1, 2, 2])),
        np.concatenate((np.arange(1400), [1, 2, 3])),
        counts=np.concatenate((np.full(1400, 5), [1, 2, 1])),
    )
    sig_mixed = minhash_signatures(mixed, keys)
    assert (sig_mixed[0] == sig[0]).all()
    assert sig_mixed[2].tolist() == reference_signature([int(keys[2]), int(keys[3])], [2, 1])


def random_weighted_pairs(rng: np.random.Generator, count: int) -> tuple[Bags, np.ndarray]:
    """Pairs (2p, 2p + 1) of weighted bags over disjoint term ranges, and their exact
    weighted Jaccard similarity."""
    bag_rows, term_rows, count_rows, exact = [], [], [], []
    next_term = 0
    for p in range(count):
        union = int(rng.integers(10, 60))
        terms = np.arange(next_term, next_term + union)
        next_term += union
        a = rng.integers(1, 7, union)
        b = rng.integers(1, 7, union)
        # Every fourth pair keeps the same term set with other weights (set Jaccard 1);
        # the others share a random part of the terms and split the rest.
        if p % 4:
            side = rng.random(union)
            share = rng.uniform(0.05, 0.95)
            a[side > share + (1 - share) / 2] = 0
            b[(side > share) & (side <= share + (1 - share) / 2)] = 0
        exact.append(np.minimum(a, b).sum() / np.maximum(a, b).sum())
        for bag, mult in ((2 * p, a), (2 * p + 1, b)):
            held = mult > 0
            bag_rows.append(np.full(held.sum(), bag))
            term_rows.append(terms[held])
            count_rows.append(mult[held])
    bags = bags_from_arrays(np.concatenate(bag_rows), np.concatenate(term_rows), np.concatenate(count_rows))
    return bags, np.array(exact)


def test_agreement_estimates_weighted_jaccard_within_theory() -> None:
    rng = np.random.default_rng(11)
    bags, exact = random_weighted_pairs(rng, 800)
    keys = rng.integers(0, 2**63, int(bags.term_ids.max()) + 1, dtype=np.int64).astype(np.uint64)
    sig = minhash_signatures(bags, keys)
    estimate = (sig[0::2] == sig[1::2]).mean(axis=1)
    error = estimate - exact
    theory = math.sqrt(float(np.mean(exact * (1 - exact))) / DEFAULT_M)
    assert abs(error.mean()) < 4 * theory / math.sqrt(exact.size)
    assert 0.8 * theory < error.std() < 1.25 * theory, (error.std(), theory)
    # Per-pair z-scores: no more outliers than a normal law allows.
    z = error / np.sqrt(np.maximum(exact * (1 - exact), 1e-3) / DEFAULT_M)
    assert np.mean(np.abs(z) > 3) < 0.01
    # Equal term sets with unequal weights follow the weighted similarity, not 1.
    same_set = np.arange(exact.size) % 4 == 0
    assert exact[same_set].mean() < 0.7
    assert abs(estimate[same_set].mean() - exact[same_set].mean()) < 0.02


def test_signatures_do_not_depend_on_vocabulary_order() -> None:
    a, b = Vocabulary(), Vocabulary()
    a.ids(["x1", "x2", "x3"])
    b.ids(["x3", "x1", "x2"])
    bag_a = bags_from_arrays([0, 0], a.ids(["x1", "x3"]), counts=[2, 1])
    bag_b = bags_from_arrays([0, 0], b.ids(["x1", "x3"]), counts=[2, 1])
    assert (minhash_signatures(bag_a, a.keys) == minhash_signatures(bag_b, b.keys)).all()


# --- LSH and ExtractSimilarPairs ---------------------------------------------------------------


def test_lsh_tables_and_probability() -> None:
    tables = lsh_tables(DEFAULT_M)
    assert tables.shape == (DEFAULT_L, DEFAULT_K)
    assert ((tables >= 0) & (tables < DEFAULT_M)).all()
    assert all(len(set(row)) == DEFAULT_K for row in tables.tolist())
    assert (tables == lsh_tables(DEFAULT_M)).all()
    assert not (tables == lsh_tables(DEFAULT_M, seed=1)).all()
    # Positions are spread over the whole signature.
    assert len(np.unique(tables)) > 70
    assert candidate_probability(0.5, bands=DEFAULT_L, rows=DEFAULT_K) > 1 - 1e-7
    assert candidate_probability(0.2, bands=DEFAULT_L, rows=DEFAULT_K) == pytest.approx(0.634, abs=0.001)
    with pytest.raises(ValueError):
        lsh_tables(2, k=3)


def planted_bags(rng: np.random.Generator, groups: int, background: int, vocabulary: int = 5000) -> Bags:
    """Groups of 3 bags copying a base with a share of words redrawn, plus background."""
    bag_rows, term_rows = [], []
    bag = 0
    for _ in range(groups):
        base = rng.integers(0, vocabulary, int(rng.integers(15, 50)))
        for _ in range(3):
            words = base.copy()
            redraw = rng.random(words.size) < rng.uniform(0, 0.6)
            words[redraw] = rng.integers(0, vocabulary, int(redraw.sum()))
            bag_rows.append(np.full(words.size, bag))
            term_rows.append(words)
            bag += 1
    for _ in range(background):
        words = rng.integers(0, vocabulary, int(rng.integers(15, 50)))
        bag_rows.append(np.full(words.size, bag))
        term_rows.append(words)
        bag += 1
    return bags_from_arrays(np.concatenate(bag_rows), np.concatenate(term_rows))


def exact_similarity_matrix(weighted: Bags) -> np.ndarray:
    used, column = np.unique(weighted.term_ids, return_inverse=True)
    dense = np.zeros((len(weighted), used.size))
    dense[np.repeat(np.arange(len(weighted)), weighted.sizes), column] = weighted.counts
    exact = np.zeros((len(weighted), len(weighted)))
    for row in range(len(weighted)):
        exact[row] = np.minimum(dense[row], dense).sum(axis=1) / np.maximum(dense[row], dense).sum(axis=1)
    return exact


def test_pairs_match_brute_force() -> None:
    rng = np.random.default_rng(5)
    bags = planted_bags(rng, groups=60, background=120)
    keys = rng.integers(0, 2**63, 5000, dtype=np.int64).astype(np.uint64)
    weighted = multiplicities(bags, keys, Idf.of(bags, keys))
    sig = minhash_signatures(weighted, keys)
    pairs = similar_pairs(sig)
    n = len(bags)
    agree = (sig[:, None, :] == sig[None, :, :]).sum(axis=2)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    found = set(zip(pairs.first.tolist(), pairs.second.tolist()))
    # Every pair kept passes the 20% filter, with its brute-force agreement as similarity.
    assert (pairs.first < pairs.second).all()
    assert (agree[pairs.first, pairs.second] >= 16).all()
    assert np.allclose(pairs.similarity, agree[pairs.first, pairs.second] / DEFAULT_M)
    # Every pair agreeing on half the positions is found (misses: ~6e-8 each).
    half = set(zip(*np.nonzero(upper & (agree >= 40))))
    assert half and half <= found
    # And every pair whose exact weighted similarity is >= 0.5 (the estimate's spread
    # could put one below 0.5, never below 0.2).
    exact = exact_similarity_matrix(weighted)
    assert set(zip(*np.nonzero(upper & (exact >= 0.5)))) <= found
    # Pairs between 0.2 and 0.3 are candidates with probability 0.63 .. 0.97.
    low = upper & (agree >= 16) & (agree < 24)
    share = np.mean([pair in found for pair in zip(*np.nonzero(low))]) if low.any() else 1.0
    assert share > 0.5
    # Descending similarity, then ascending (first, second).
    order = np.lexsort((pairs.second, pairs.first, -pairs.similarity))
    assert (order == np.arange(len(pairs))).all()


def test_filter_and_parameters_are_arguments() -> None:
    rng = np.random.default_rng(8)
    bags = planted_bags(rng, groups=20, background=20)
    keys = rng.integers(0, 2**63, 5000, dtype=np.int64).astype(np.uint64)
    sig = minhash_signatures(multiplicities(bags, keys, Idf.of(bags, keys)), keys, m=40, seed=3)
    assert sig.shape == (len(bags), 40)
    strict = similar_pairs(sig, k=2, l=30, min_agreement=0.6, seed=9)
    assert (strict.similarity >= 0.6).all()
    loose = similar_pairs(sig, k=2, l=30, min_agreement=0.0)
    assert len(loose) >= len(strict)
    with pytest.raises(ValueError):
        similar_pairs(sig, max_group=1)
    with pytest.raises(ValueError):
        similar_pairs(sig.astype(np.uint64))


def test_large_groups_give_a_star_around_the_lowest_row() -> None:
    # 250 bags with identical signatures (rows 10 ..) among distinct ones.
    rng = np.random.default_rng(2)
    sig = rng.integers(0, 2**32 - 1, (300, DEFAULT_M), dtype=np.int64).astype(np.uint32)
    sig[10:260] = sig[10]
    pairs = similar_pairs(sig, max_group=100)
    assert set(pairs.first.tolist()) == {10}
    assert sorted(pairs.second.tolist()) == list(range(11, 260))
    assert (pairs.similarity == 1.0).all()
    centres = center_clusters(300, pairs.first, pairs.second, pairs.similarity)
    assert (centres[10:260] == 10).all()
    assert (centres[:10] == np.arange(10)).all() and (centres[260:] == np.arange(260, 300)).all()
    # At or under the cap: every pair.
    assert len(similar_pairs(sig[:60])) == 50 * 49 // 2


def test_similar_to_scans_all_rows() -> None:
    rng = np.random.default_rng(4)
    sig = rng.integers(0, 2**32 - 1, (50, DEFAULT_M), dtype=np.int64).astype(np.uint32)
    sig[7, :60] = sig[3, :60]
    sig[9, :20] = sig[3, :20]
    rows, similarity = similar_to(sig[3], sig)
    assert rows.tolist() == [3, 7, 9]
    assert similarity.tolist() == [1.0, 0.75, 0.25]
    empty_rows, _ = similar_to(np.full(DEFAULT_M, EMPTY), sig)
    assert empty_rows.size == 0


# --- clusters ------------------------------------------------------------------------------------


def test_cluster_bags_end_to_end() -> None:
    rng = np.random.default_rng(6)
    vocabulary = Vocabulary()
    words = [f"w{i}" for i in range(3000)]
    builder = BagBuilder(vocabulary=vocabulary)
    # Three groups of five URLs linked with nearly the same words, and 200 others.
    for group in range(3):
        base = rng.choice(words, 30)
        for member in range(5):
            text = base.copy()
            text[rng.random(30) < 0.15] = rng.choice(words, 1)[0]
            url = 1000 * (group + 1) + member
            builder.add_fragment(url, " ".join(text[:5]), " ".join(text[5:15]), " ".join(text[15:]))
    for url in range(200):
        builder.add_fragment(url, " ".join(rng.choice(words, 5)), " ".join(rng.choice(words, 8)), "")
    bags = builder.bags()
    result = cluster_bags(bags, vocabulary.keys)
    assert result.signatures.shape == (len(bags), DEFAULT_M)
    centre_ids = result.bag_ids[result.centres]
    pairs = set(zip(result.pairs.first.tolist(), result.pairs.second.tolist()))
    for group in range(3):
        members = 1000 * (group + 1) + np.arange(5)
        rows = np.searchsorted(result.bag_ids, members)
        # CENTER: members gather around centres of their own group, each similar to its
        # centre (a group may split: similarity is not transitive).
        assert set(centre_ids[rows].tolist()) <= set(members.tolist())
        assert len(set(centre_ids[rows].tolist())) < 5
        for row in rows.tolist():
            centre = int(result.centres[row])
            assert centre == row or (min(row, centre), max(row, centre)) in pairs
    # Background URLs stay alone.
    assert (centre_ids[:200] == result.bag_ids[:200]).all()


# --- incremental building --------------------------------------------------------------------------


def random_links(rng: np.random.Generator, urls: list[int], count: int) -> list[tuple[int, str, str, str]]:
    words = np.array([f"t{i}" for i in range(400)])
    return [
        (int(rng.choice(urls)), " ".join(rng.choice(words, 3)), " ".join(rng.choice(words, 8)), " ".join(rng.choice(words, 8)))
        for _ in range(count)
    ]


def signatures_by_id(builder: BagBuilder, idf: Idf, ids: np.ndarray | None = None) -> dict[int, list[int]]:
    bags = builder.bags(ids)
    keys = builder.vocabulary.keys
    sig = minhash_signatures(multiplicities(bags, keys, idf), keys)
    return dict(zip(bags.bag_ids.tolist(), sig.tolist()))


def test_incremental_builder_recomputes_only_touched_bags() -> None:
    rng = np.random.default_rng(9)
    first = random_links(rng, list(range(40)), 300)
    builder = BagBuilder()
    for link in first:
        builder.add_fragment(*link)
    builder.add_title(5, "Welcome page")
    assert builder.changed().tolist() == sorted({link[0] for link in first} | {5})
    idf = Idf.of(builder.bags(), builder.vocabulary.keys)
    stored = signatures_by_id(builder, idf)
    # New links to a few URLs (one new, with new words), a new title: only those are
    # reported, and only those recomputed.
    second = random_links(rng, [3, 7, 40], 12) + [(3, "brand new words", "", "")]
    for link in second:
        builder.add_fragment(*link)
    builder.add_title(5, "Welcome home page")
    touched = builder.changed()
    assert touched.tolist() == [3, 5, 7, 40]
    recomputed = signatures_by_id(builder, idf, touched)
    assert sorted(recomputed) == [3, 5, 7, 40]
    assert recomputed[3] != stored[3]
    stored.update(recomputed)
    # Same snapshot, full recompute: identical everywhere.
    assert stored == signatures_by_id(builder, idf)
    # Another builder fed in another order (other term ids) with the first builder's
    # snapshot, which is keyed by term, not id: the same signatures.
    other = BagBuilder()
    links = first + second
    for i in rng.permutation(len(links)):
        other.add_fragment(*links[i])
    other.add_title(5, "Welcome home page")
    assert other.vocabulary.terms() != builder.vocabulary.terms()
    assert signatures_by_id(other, idf) == stored


def test_builder_merges_rows_without_changing_bags() -> None:
    rng = np.random.default_rng(10)
    builder = BagBuilder(window=4, merge_floor=1 << 16)
    links = random_links(rng, list(range(500)), 9000)  # ~ 90,000 rows: merged once or more
    rows: list[tuple[int, str]] = []
    for url, anchor, before, after in links:
        builder.add_fragment(url, anchor, before, after)
        rows.extend((url, word) for word in fragment_terms(anchor, before, after, window=4))
    assert builder._merged.term_ids.size > 0  # the merge path ran
    ids = builder.vocabulary.ids(word for _, word in rows)
    expected = bags_from_arrays([url for url, _ in rows], ids)
    got = builder.bags()
    for field in ("bag_ids", "offsets", "term_ids", "counts"):
        assert (getattr(got, field) == getattr(expected, field)).all()
    assert builder.changed().tolist() == sorted({url for url, *_ in links})
    builder.add_fragment(3, "late", "", "")
    assert builder.changed().tolist() == [3]


@pytest.mark.parametrize("slice_entries", [1 << 20, 50, 1])
def test_merge_bags_equals_one_sort_of_both(slice_entries: int) -> None:
    rng = np.random.default_rng(13)
    rows = [(rng.integers(0, 40, n), rng.integers(0, 25, n), rng.integers(1, 4, n)) for n in (600, 300)]
    first, second = (bags_from_arrays(*r, include=[99]) for r in rows)  # 99: an empty bag in both
    expected = bags_from_arrays(*(np.concatenate(parts) for parts in zip(*rows)), include=[99])
    got = merge_bags(first, second, slice_entries)
    for field in ("bag_ids", "offsets", "term_ids", "counts"):
        assert (getattr(got, field) == getattr(expected, field)).all(), field
    empty = bags_from_arrays([], [])
    assert bag_dict(merge_bags(empty, second)) == bag_dict(second) and len(merge_bags(empty, empty)) == 0


def test_builder_merges_again_and_again_without_changing_bags() -> None:
    rng = np.random.default_rng(14)
    builder = BagBuilder(window=3, merge_floor=2000)
    links = random_links(rng, list(range(300)), 6000)
    for url, anchor, before, after in links:
        builder.add_fragment(url, anchor, before, after)
    reference = BagBuilder(window=3, vocabulary=builder.vocabulary, merge_floor=1 << 30)
    for link in links:
        reference.add_fragment(*link)
    assert not len(reference._merged) and len(builder._merged)
    assert bag_dict(builder.bags()) == bag_dict(reference.bags())


def bag_words(builder: BagBuilder) -> dict[int, dict[str, int]]:
    terms = builder.vocabulary.terms()
    return {bag: {terms[t]: c for t, c in counts.items()} for bag, counts in bag_dict(builder.bags()).items()}


@pytest.mark.parametrize("window", [8, 3, 1, 0])
def test_add_fragments_equals_add_fragment_link_by_link(window: int) -> None:
    rng = np.random.default_rng(11 + window)
    # Stopwords, one-character words, empty fields and fields longer than the window.
    vocab = np.array(["the", "of", "a", "x", "python", "docs", "module", "home", "and", "zz", "os", "json", "é"])

    def words(most: int) -> str:
        return " ".join(rng.choice(vocab, int(rng.integers(0, most + 1))))

    links = [(int(rng.integers(0, 40)), words(4), words(12), words(12)) for _ in range(3000)]
    one, many = BagBuilder(window), BagBuilder(window)
    for link in links:
        one.add_fragment(*link)
    for start in range(0, len(links), 700):  # several batches
        many.add_fragments(*zip(*links[start : start + 700]))
    assert bag_words(many) == bag_words(one)
    assert many.changed().tolist() == one.changed().tolist()
    # Inputs holding the marker characters go link by link, with the same result.
    odd = [(1, "odd \x02 anchor", "be\x03fore words", "after"), (2, "", "", "")]
    one.add_fragments(*zip(*odd))
    for link in odd:
        many.add_fragment(*link)
    assert bag_words(many) == bag_words(one)
    with pytest.raises(ValueError):
        one.add_fragments([1, 2], ["a"], ["b"], ["c"])


@pytest.mark.parametrize("slice_bags", [2048, 7])
def test_url_bags_give_full_recompute_signatures_and_retake_the_snapshot_on_doubling(slice_bags: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(url_bags, "SIGN_SLICE_BAGS", slice_bags)  # 7: signed and counted in many slices
    rng = np.random.default_rng(12)
    urls = [f"http://h{i % 3}.test/p{i}" for i in range(60)]
    links = [(urls[int(i)], a, b, f) for i, a, b, f in random_links(rng, list(range(30)), 400)]
    bags = UrlBags()
    bags.add_links(*zip(*links))
    bags.add_title(urls[0], "Welcome page")
    first = bags.changed_signatures()
    assert first.refreshed and sorted(first.urls) == sorted(set(urls[:30]))
    # The first call is the full recompute: cluster_bags over the same bags.
    full = cluster_bags(bags.builder.bags(), bags.builder.vocabulary.keys)
    assert (first.signatures == full.signatures).all()
    assert first.terms.tolist() == bags.builder.bags().sizes.tolist()
    # Links to a few known URLs: only those come back, against the same snapshot.
    more = [(urls[int(i)], a, b, f) for i, a, b, f in random_links(rng, [2, 5, 29], 20)]
    bags.add_links(*zip(*more))
    second = bags.changed_signatures()
    assert not second.refreshed and sorted(second.urls) == sorted({urls[2], urls[5], urls[29]})
    assert second.idf is first.idf
    assert bags.changed_signatures().urls == []
    # The bag count doubles (30 new URLs): the snapshot is retaken and every bag signed.
    late = [(urls[int(i)], a, b, f) for i, a, b, f in random_links(rng, list(range(30, 60)), 300)]
    bags.add_links(*zip(*late))
    assert bags.stale()
    third = bags.changed_signatures()
    assert third.refreshed and len(third.urls) == 60 and third.idf.n_bags == 60
    again = cluster_bags(bags.builder.bags(), bags.builder.vocabulary.keys)
    assert (third.signatures == again.signatures).all()
    with pytest.raises(ValueError):
        UrlBags(growth=1.0)


# --- hostile inputs --------------------------------------------------------------------------------


def test_no_bags_and_empty_bags() -> None:
    nothing = bags_from_arrays([], [])
    assert len(nothing) == 0
    assert minhash_signatures(nothing, np.empty(0, np.uint64)).shape == (0, DEFAULT_M)
    result = cluster_bags(nothing, np.empty(0, np.uint64))
    assert len(result.pairs) == 0 and result.centres.size == 0
    assert BagBuilder().bags().bag_ids.size == 0
    assert BagBuilder().changed().size == 0
    # Bags without words: all-EMPTY signatures, never paired.
    builder = BagBuilder()
    for url in range(5):
        builder.add_fragment(url, "", "the", "of and")
    bags = builder.bags()
    assert len(bags) == 5 and bags.term_ids.size == 0
    result = cluster_bags(bags, builder.vocabulary.keys)
    assert (result.signatures == EMPTY).all()
    assert len(result.pairs) == 0
    assert result.centres.tolist() == list(range(5))


def test_one_giant_bag_among_small_ones() -> None:
    # One URL linked by 20,000 different words (a link farm's target), two similar small bags.
    rows_bag = np.concatenate((np.zeros(20_000, dtype=np.int64), [1, 1, 1, 2, 2, 2]))
    rows_term = np.concatenate((np.arange(20_000), [20_000, 20_001, 20_002, 20_000, 20_001, 20_002]))
    bags = bags_from_arrays(rows_bag, rows_term, counts=np.concatenate((np.full(20_000, 1000), np.ones(6))))
    keys = np.arange(20_003, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    result = cluster_bags(bags, keys)
    weighted = multiplicities(bags, keys, Idf.of(bags, keys))
    assert int(weighted.counts[:20_000].max()) == DEFAULT_CAP  # tf 1000 capped
    assert (result.signatures[0] != EMPTY).all()
    assert list(zip(result.pairs.first.tolist(), result.pairs.second.tolist())) == [(1, 2)]
    assert result.centres.tolist() == [0, 1, 1]


def test_invalid_inputs_are_refused() -> None:
    bags = bags_from_arrays([0, 0], [0, 5])
    with pytest.raises(ValueError):
        minhash_signatures(bags, np.zeros(3, np.uint64))  # term 5 has no key
    with pytest.raises(ValueError):
        minhash_signatures(Bags(bags.bag_ids, bags.offsets, bags.term_ids, np.zeros(2, np.int32)), np.zeros(6, np.uint64))
    with pytest.raises(ValueError):
        minhash_signatures(bags, np.zeros(6, np.uint64), m=0)
    with pytest.raises(ValueError):
        similar_pairs(np.zeros(DEFAULT_M, np.uint32))
    with pytest.raises(ValueError):
        similar_pairs(np.zeros((2, DEFAULT_M), np.uint32), min_agreement=1.5)
    with pytest.raises(ValueError):
        BagBuilder(window=-1)
