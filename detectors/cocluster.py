"""Information-theoretic co-clustering of the sparse page-term matrix, and topic labels.

Dhillon, Mallela and Modha, "Information-theoretic co-clustering" (KDD 2003). The
matrix, normalised to sum 1, is a joint distribution p(X, Y) of pages X and terms Y. A
co-clustering (C_X, C_Y) maps pages into k clusters X̂ and terms into l clusters Ŷ; the
best loses least mutual information, I(X; Y) − I(X̂; Ŷ), which equals
D(p(X, Y) || q(X, Y)) for q(x, y) = p(x̂, ŷ) p(x | x̂) p(y | ŷ) (the paper's Lemma 2.1).
The algorithm alternates:

1. rows: each page x moves to the cluster x̂ minimising D(p(Y | x) || q(Y | x̂)), where
   q(y | x̂) = q(ŷ | x̂) p(y | ŷ); only Σ_ŷ p(x, ŷ) log q(ŷ | x̂) depends on x̂, so the
   step is a (pages × l) by (l × k) product, p(x, ŷ) summed from the nonzeros;
2. q(X̂, Ŷ) recomputed;
3. columns: each term y moves to the ŷ minimising D(p(X | y) || q(X | ŷ)), the same
   with the roles swapped;
4. q recomputed; repeat.

Each step cannot increase the loss (the paper's Theorem 4.1; a page or term stays put
unless another cluster is strictly better, so ties do not cycle), and the loop stops
early when nothing moves. The cost of an iteration is O(nz + m l k + n k l) for nz
nonzeros, m pages and n terms: O(nz (k + l)) as the paper states, since a page vector
holds about 50 terms and m, n <= nz. Memory: the dense p(x, ŷ) and p(x̂, y) tables,
8 (m l + n k) bytes. Defaults: k = 16 page clusters, l = 32 term clusters, 20
iterations (the paper: "experimentally t ≈ 20"). scipy is not used: sums are
``np.bincount`` over COO arrays.

Initialisation (the paper leaves it open; random starts fall into local minima on
block structure): farthest-first on the cosine of the rows' (then the columns')
distributions: the first centre drawn with ``seed``, each next the row least similar
to every centre so far, each row then joining its most similar centre. Cost O(nz (k + l)).

The matrix (:func:`page_term_matrix`): page vectors (``detectors.term_vectors``) weighted
tf · idf at run time, as the term vector database's notes say, dropping terms found in
one vector only (noise: no co-occurrence to learn from) and in more than ``max_share``
of the vectors (the notes' term vectors keep only the middle of the lexicon by df).

Labels (:func:`label_groups`): a group of pages (a mirror cluster, a near-duplicate
cluster, a spam host) gets its term clusters ranked by what they add to the group's
divergence from the whole, p(ŷ | S) log(p(ŷ | S) / p(ŷ)), and, in that order, the terms
of each cluster the group's pages weigh most.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mirrorscope.detectors.runs import ramp, runs

__all__ = [
    "DEFAULT_COLUMN_CLUSTERS",
    "DEFAULT_ITERATIONS",
    "DEFAULT_LABEL_TERMS",
    "DEFAULT_MAX_SHARE",
    "DEFAULT_MIN_DF",
    "DEFAULT_ROW_CLUSTERS",
    "CoClustering",
    "PageTermMatrix",
    "cocluster",
    "label_groups",
    "page_term_matrix",
]

#: Page clusters k.
DEFAULT_ROW_CLUSTERS = 16
#: Term clusters l.
DEFAULT_COLUMN_CLUSTERS = 32
#: Iterations at most (each: a row step and a column step).
DEFAULT_ITERATIONS = 20
#: Terms must be in at least this many vectors to be columns.
DEFAULT_MIN_DF = 2
#: Terms in more than this share of the vectors are not columns.
DEFAULT_MAX_SHARE = 0.5
#: Terms a label gives.
DEFAULT_LABEL_TERMS = 8
#: log q where q is 0: a move there is never better than staying (0 · this is 0).
_LOG_ZERO = -1e300
#: A move must gain at least this much (in nats times p(x)) over staying: float noise does not move.
_MOVE_GAIN = 1e-15


@dataclass(frozen=True)
class CoClustering:
    """Cluster of each row (page) and column (term), the joint p(x̂, ŷ) (k × l),
    I(X; Y), and the loss I(X; Y) − I(X̂; Ŷ) after the initialisation and after each
    iteration run (nats, non-increasing)."""

    row_clusters: np.ndarray
    column_clusters: np.ndarray
    joint: np.ndarray
    mutual_information: float
    loss: np.ndarray

    @property
    def iterations(self) -> int:
        return int(self.loss.size - 1)


@dataclass(frozen=True)
class PageTermMatrix:
    """A sparse matrix in COO form over ``shape`` (pages, terms): entries (rows[i],
    cols[i]) = values[i], no repeats; ``terms`` maps column j to the caller's term id."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]
    terms: np.ndarray

    @property
    def nonzeros(self) -> int:
        return int(self.values.size)


def page_term_matrix(
    rows: ArrayLike, term_ids: ArrayLike, tf: ArrayLike, n_pages: int,
    min_df: int = DEFAULT_MIN_DF, max_share: float = DEFAULT_MAX_SHARE,
) -> PageTermMatrix:
    """The tf·idf matrix of term vectors given as entries (page row, term id, tf), with
    idf ln(N / df) over the N = ``n_pages`` vectors, columns the term ids kept (module
    docstring), numbered in ascending term id."""
    r = np.asarray(rows, dtype=np.int64)
    t = np.asarray(term_ids, dtype=np.int64)
    f = np.asarray(tf, dtype=np.float64)
    terms, cols, df = np.unique(t, return_inverse=True, return_counts=True)
    keep_term = (df >= min_df) & (df <= max_share * n_pages)
    keep = keep_term[cols]
    new_col = np.cumsum(keep_term) - 1
    weight = f[keep] * np.log(n_pages / df[cols[keep]])
    return PageTermMatrix(r[keep], new_col[cols[keep]], weight, (n_pages, int(keep_term.sum())), terms[keep_term])


def _sum_repeats(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = rows * n + cols
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts, _ = runs(keys)
    summed = np.add.reduceat(values[order], starts) if starts.size else values[:0]
    first = keys[starts]
    return first // n, first % n, summed


def _farthest_first(rows: np.ndarray, cols: np.ndarray, p: np.ndarray, m: int, n: int, k: int, first: int) -> np.ndarray:
    """Row clusters by farthest-first centres on the cosine of the rows (module docstring)."""
    norms = np.sqrt(np.bincount(rows, p * p, minlength=m))
    order = np.argsort(rows, kind="stable")
    offsets = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=m))))
    similarity = np.zeros((m, k))
    closest = np.full(m, -np.inf)
    closest[norms == 0] = np.inf  # rows without mass are never centres
    centre = first
    dense = np.zeros(n)
    for c in range(k):
        entries = order[offsets[centre] : offsets[centre + 1]]
        dense[cols[entries]] = p[entries] / norms[centre]
        dots = np.bincount(rows, p * dense[cols], minlength=m)
        similarity[:, c] = np.divide(dots, norms, out=np.zeros(m), where=norms > 0)
        similarity[centre, c] = 2.0  # a centre belongs to its own cluster whatever the rounding
        dense[cols[entries]] = 0.0
        closest = np.maximum(closest, similarity[:, c])
        centre = int(np.argmin(closest))
    return np.argmax(similarity, axis=1).astype(np.int64)


def _mutual_information(joint: np.ndarray) -> float:
    px, py = joint.sum(axis=1), joint.sum(axis=0)
    nz = joint > 0
    return float(np.sum(joint[nz] * np.log(joint[nz] / np.outer(px, py)[nz])))


def _conditional_log(joint: np.ndarray, marginal: np.ndarray, axis: int) -> np.ndarray:
    """log of joint / marginal along ``axis`` (log q(ŷ | x̂) or log q(x̂ | ŷ)); log 0 floored."""
    denominator = marginal[:, None] if axis == 1 else marginal[None, :]
    ratio = np.divide(joint, denominator, out=np.zeros_like(joint), where=denominator > 0)
    return np.log(ratio, out=np.full_like(ratio, _LOG_ZERO), where=ratio > 0)


def _reassign(aggregate: np.ndarray, log_q: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row of ``aggregate`` (p(x, ŷ), or p(x̂, y) transposed) to the cluster
    maximising aggregate · log_q, staying unless another is strictly better."""
    # einsum, not BLAS: threaded BLAS on matrices this thin spent 3x the wall time waiting on a busy machine.
    score = np.einsum("ij,kj->ik", aggregate, log_q)
    best = np.argmax(score, axis=1)
    index = np.arange(current.size)
    moves = score[index, best] > score[index, current] + _MOVE_GAIN
    updated = np.where(moves, best, current)
    return updated, int(moves.sum())


def cocluster(
    rows: ArrayLike, cols: ArrayLike, values: ArrayLike, shape: tuple[int, int],
    k: int = DEFAULT_ROW_CLUSTERS, l: int = DEFAULT_COLUMN_CLUSTERS,
    iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
) -> CoClustering:
    """Co-cluster the non-negative COO matrix (rows, cols, values) of ``shape`` into at
    most ``k`` row and ``l`` column clusters (module docstring); repeats are summed.
    Deterministic for a ``seed``."""
    m, n = shape
    if k < 1 or l < 1 or iterations < 0:
        raise ValueError("k and l must be at least 1 and iterations not negative")
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if v.size and (v.min() < 0 or r.min() < 0 or c.min() < 0 or r.max() >= m or c.max() >= n):
        raise ValueError("entries must be non-negative and inside the shape")
    r, c, v = _sum_repeats(r, c, v, max(n, 1))
    nz = v > 0
    r, c, v = r[nz], c[nz], v[nz]
    if not v.size:
        raise ValueError("the matrix has no positive entry")
    p = v / v.sum()
    px = np.bincount(r, p, minlength=m)
    py = np.bincount(c, p, minlength=n)
    mi = float(np.sum(p * np.log(p / (px[r] * py[c]))))
    k = min(k, int(np.count_nonzero(px)))
    l = min(l, int(np.count_nonzero(py)))
    rng = np.random.default_rng(seed)
    live_rows, live_cols = np.flatnonzero(px), np.flatnonzero(py)
    row_c = _farthest_first(r, c, p, m, n, k, int(live_rows[rng.integers(live_rows.size)]))
    col_c = _farthest_first(c, r, p, n, m, l, int(live_cols[rng.integers(live_cols.size)]))

    def joint_of() -> np.ndarray:
        return np.bincount(row_c[r] * l + col_c[c], p, minlength=k * l).reshape(k, l)

    joint = joint_of()
    losses = [mi - _mutual_information(joint)]
    for _ in range(iterations):
        # Rows: p(x, ŷ) against log q(ŷ | x̂).
        by_row = np.bincount(r * l + col_c[c], p, minlength=m * l).reshape(m, l)
        row_c, row_moves = _reassign(by_row, _conditional_log(joint, joint.sum(axis=1), 1), row_c)
        joint = joint_of()
        # Columns: p(x̂, y) against log q(x̂ | ŷ).
        by_col = np.bincount(c * k + row_c[r], p, minlength=n * k).reshape(n, k)
        col_c, col_moves = _reassign(by_col, _conditional_log(joint, joint.sum(axis=0), 0).T, col_c)
        joint = joint_of()
        losses.append(mi - _mutual_information(joint))
        if not row_moves and not col_moves:
            break
    return CoClustering(row_c, col_c, joint, mi, np.asarray(losses))


def label_groups(
    result: CoClustering, rows: ArrayLike, cols: ArrayLike, values: ArrayLike,
    groups: ArrayLike, n_groups: int, top: int = DEFAULT_LABEL_TERMS,
) -> list[np.ndarray]:
    """For each of ``n_groups`` groups of rows (``groups[row]``, -1 for none) the
    columns of its label, at most ``top`` (module docstring), best first."""
    g_of_row = np.asarray(groups, dtype=np.int64)
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    l = result.joint.shape[1]
    n = result.column_clusters.size
    g = g_of_row[r]
    inside = g >= 0
    g, c, v = g[inside], c[inside], v[inside] / max(v.sum(), np.finfo(float).tiny)
    if not g.size:
        return [np.zeros(0, dtype=np.int64) for _ in range(n_groups)]
    cluster = result.column_clusters[c]
    by_group = np.bincount(g * l + cluster, v, minlength=n_groups * l).reshape(n_groups, l)
    share = by_group / np.maximum(by_group.sum(axis=1, keepdims=True), np.finfo(float).tiny)
    py_hat = result.joint.sum(axis=0)
    ratio = np.divide(share, py_hat[None, :], out=np.zeros_like(share), where=py_hat[None, :] > 0)
    gain = share * np.log(ratio, out=np.zeros_like(ratio), where=ratio > 0)
    gain[share == 0] = -np.inf  # clusters the group has no term of come last, never
    rank = np.argsort(np.argsort(-gain, axis=1, kind="stable"), axis=1, kind="stable")
    # Each (group, term) once with the group's weight on it.
    gg, cc, weight = _sum_repeats(g, c, v, max(n, 1))
    order = np.lexsort((cc, -weight, rank[gg, result.column_clusters[cc]], gg))
    gg, cc = gg[order], cc[order]
    starts, lengths = runs(gg)
    keep = ramp(lengths) < top
    gg, cc = gg[keep], cc[keep]
    counts = np.bincount(gg, minlength=n_groups)
    return np.split(cc, np.cumsum(counts)[:-1])
