"""Page change over re-crawls, characterised from sketches, and rapid complete change as
a spam feature.

Broder's notes ("A nice application: page changing characterisation"; Broder, Glassman,
Manasse and Zweig, "Syntactic clustering of the Web", WWW6 1997) compare the sketch of a
page at one time with its sketch at another: how often pages change, how much, whether
they move, how many die. A re-crawl gives, for every stored page, its old sketch and what
the new fetch brought, and :func:`classify` sorts each into

- ``unchanged``: the server answered 304 Not Modified to the conditional request, or the
  new canonical token sequence has the old one's fingerprint;
- ``changed``: fetched again with other content; its resemblance is the fraction of the
  old and new min-hash signatures' positions that agree (``signature_size`` = 84
  independent min-hashes: an unbiased estimate of the Jaccard resemblance of the two
  versions' shingle sets, standard deviation sqrt(r(1 − r)/84) ≈ 0.05 at r = 0.5);
- ``gone``: the URL answers 404, 410 or another client error, or redirects;
- ``moved``: a gone page whose old signature agrees on at least ``move_threshold`` (0.8,
  the crawl's near-duplicate threshold) of its positions with a page of the same host that
  the store did not hold before (Broder's "how often do pages move, within a server"): the
  best such page, ties to the first.

Pages the re-crawl could not reach (timeouts, refused connections, 5xx) are not
classified: a transient failure says nothing about the page.

Per host, :func:`host_rates` counts the kinds, the change rate (changed, gone or moved
over all classified pages) and the share of pages still there that changed completely
(resemblance below ``complete_below``, 0.1: at most about 8 of the 84 min-hashes agree,
which two unrelated texts of one template reach). Fetterly, Manasse and Najork ("Spam,
damn spam, and statistics", WebDB 2004) found that hosts whose pages nearly all change
completely between weekly crawls are overwhelmingly machine-generated spam;
:func:`rapid_change` flags a host when at least ``rapid_min_pages`` (5) of its pages were
compared and at least ``rapid_share`` (0.8) of them changed completely. A real site
rewrites a page or two between crawls; a site rewritten whole is the outlier they describe.

Pure numpy: one comparison of two (n, 84) arrays for the changed pages, and for moves a
join of gone and new pages by host (sorted, ``searchsorted``), compared pair by pair in
one array operation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Kind codes, in the order of :data:`KINDS`.
UNCHANGED, CHANGED, GONE, MOVED = 0, 1, 2, 3
KINDS = ("unchanged", "changed", "gone", "moved")
#: What a re-fetch brought: a new sketch, a 304, a client error or redirect, nothing usable.
FETCHED, NOT_MODIFIED, MISSING, UNREACHABLE = 0, 1, 2, 3
#: Kind of a page the re-crawl could not reach: not classified.
UNKNOWN = -1


@dataclass(frozen=True, slots=True)
class ChangeParams:
    """The thresholds of the module docstring."""

    move_threshold: float = 0.8
    complete_below: float = 0.1
    rapid_min_pages: int = 5
    rapid_share: float = 0.8


DEFAULT_CHANGE = ChangeParams()


@dataclass(frozen=True, slots=True)
class Changes:
    """One re-crawl's classification of n stored pages: ``kind`` (a code of :data:`KINDS`,
    or :data:`UNKNOWN`), ``resemblance`` (1.0 when unchanged, the estimate when changed,
    the agreement with the new page when moved, nan when gone or unknown) and ``moved_to``
    (an index into the new pages, -1 when not moved)."""

    kind: np.ndarray
    resemblance: np.ndarray
    moved_to: np.ndarray


def agreement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row by row, the fraction of equal positions of two (n, k) signature arrays."""
    if a.shape != b.shape:
        raise ValueError(f"signature arrays differ in shape: {a.shape} and {b.shape}")
    if a.shape[0] == 0:
        return np.zeros(0)
    return (a == b).mean(axis=1)


def _pairs_by_host(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) with ``left[i] == right[j]``: the join of two host-code arrays."""
    order = np.argsort(right, kind="stable")
    keys = right[order]
    start = np.searchsorted(keys, left, side="left")
    count = np.searchsorted(keys, left, side="right") - start
    i = np.repeat(np.arange(left.size), count)
    # Position of each pair within its left row's run: 0 .. count - 1.
    offsets = np.arange(i.size) - np.repeat(np.cumsum(count) - count, count)
    return i, order[np.repeat(start, count) + offsets]


def find_moves(
    gone_hosts: np.ndarray, gone_signatures: np.ndarray, new_hosts: np.ndarray, new_signatures: np.ndarray,
    threshold: float = DEFAULT_CHANGE.move_threshold,
) -> tuple[np.ndarray, np.ndarray]:
    """For each gone page, the index of the new page of its host whose signature agrees
    best with its old one, if at least ``threshold``, else -1; and that agreement (nan
    when none)."""
    target = np.full(gone_hosts.size, -1, dtype=np.int64)
    best = np.full(gone_hosts.size, np.nan)
    if gone_hosts.size == 0 or new_hosts.size == 0:
        return target, best
    i, j = _pairs_by_host(np.asarray(gone_hosts), np.asarray(new_hosts))
    if i.size == 0:
        return target, best
    score = (gone_signatures[i] == new_signatures[j]).mean(axis=1)
    keep = score >= threshold
    i, j, score = i[keep], j[keep], score[keep]
    # Best first within each gone page, ties to the first new page.
    order = np.lexsort((j, -score, i))
    i, j, score = i[order], j[order], score[order]
    first = np.ones(i.size, dtype=bool)
    first[1:] = i[1:] != i[:-1]
    target[i[first]] = j[first]
    best[i[first]] = score[first]
    return target, best


def classify(
    fetch: np.ndarray, old_fingerprints: np.ndarray, new_fingerprints: np.ndarray,
    old_signatures: np.ndarray, new_signatures: np.ndarray,
    hosts: np.ndarray, new_page_hosts: np.ndarray, new_page_signatures: np.ndarray,
    params: ChangeParams = DEFAULT_CHANGE,
) -> Changes:
    """Classify n stored pages re-crawled.

    ``fetch``: what each re-fetch brought (:data:`FETCHED`, :data:`NOT_MODIFIED`,
    :data:`MISSING`, :data:`UNREACHABLE`); fingerprints (uint64) and signatures ((n, k)
    uint64) of the old and new versions (the new ones are read only where FETCHED);
    ``hosts`` the pages' host codes; ``new_page_hosts`` and ``new_page_signatures`` the
    pages the re-crawl found that the store did not hold, candidates for moves.
    """
    fetch = np.asarray(fetch)
    n = fetch.size
    kind = np.full(n, UNKNOWN, dtype=np.int8)
    resemblance = np.full(n, np.nan)
    fetched = fetch == FETCHED
    same = fetched & (np.asarray(old_fingerprints, dtype=np.uint64) == np.asarray(new_fingerprints, dtype=np.uint64))
    unchanged = (fetch == NOT_MODIFIED) | same
    kind[unchanged] = UNCHANGED
    resemblance[unchanged] = 1.0
    changed = fetched & ~same
    kind[changed] = CHANGED
    resemblance[changed] = agreement(old_signatures[changed], new_signatures[changed])
    missing = np.flatnonzero(fetch == MISSING)
    kind[missing] = GONE
    moved_to = np.full(n, -1, dtype=np.int64)
    target, score = find_moves(hosts[missing], old_signatures[missing], new_page_hosts, new_page_signatures, params.move_threshold)
    found = target >= 0
    kind[missing[found]] = MOVED
    moved_to[missing[found]] = target[found]
    resemblance[missing[found]] = score[found]
    return Changes(kind, resemblance, moved_to)


@dataclass(frozen=True, slots=True)
class HostRates:
    """Per host code 0 .. h − 1: ``counts`` (h, 4) of each kind, ``change_rate`` (changed,
    gone or moved over classified pages; nan with none), ``compared`` (pages re-fetched
    with content: unchanged or changed), ``complete`` (of those, changed with resemblance
    below ``complete_below``) and ``complete_share`` (complete / compared, nan with none)."""

    counts: np.ndarray
    change_rate: np.ndarray
    compared: np.ndarray
    complete: np.ndarray
    complete_share: np.ndarray


def host_rates(hosts: np.ndarray, changes: Changes, host_count: int, params: ChangeParams = DEFAULT_CHANGE) -> HostRates:
    """Per-host change rates of one re-crawl (``hosts``: each page's host code)."""
    hosts = np.asarray(hosts, dtype=np.int64)
    known = changes.kind >= 0
    counts = np.zeros((host_count, len(KINDS)), dtype=np.int64)
    np.add.at(counts, (hosts[known], changes.kind[known].astype(np.int64)), 1)
    total = counts.sum(axis=1)
    moved_away = counts[:, CHANGED] + counts[:, GONE] + counts[:, MOVED]
    compared = counts[:, UNCHANGED] + counts[:, CHANGED]
    complete_page = (changes.kind == CHANGED) & (changes.resemblance < params.complete_below)
    complete = np.bincount(hosts[complete_page], minlength=host_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(total > 0, moved_away / np.maximum(total, 1), np.nan)
        share = np.where(compared > 0, complete / np.maximum(compared, 1), np.nan)
    return HostRates(counts, rate, compared, complete, share)


def rapid_change(rates: HostRates, params: ChangeParams = DEFAULT_CHANGE) -> np.ndarray:
    """Hosts whose pages nearly all changed completely (Fetterly et al. 2004): at least
    ``rapid_min_pages`` compared and ``complete_share`` >= ``rapid_share``."""
    return (rates.compared >= params.rapid_min_pages) & (np.nan_to_num(rates.complete_share) >= params.rapid_share)


def follow_lags(a_keys: np.ndarray, a_runs: np.ndarray, b_keys: np.ndarray, b_runs: np.ndarray) -> np.ndarray:
    """For each change of a page on one side of a mirror (``a_keys``: the page pair's
    code, ``a_runs``: the ordinal of the re-crawl that saw it), the index of the first
    change of its counterpart (``b_keys``, ``b_runs``) seen by the same re-crawl or a later
    one; -1 when the counterpart has not changed since. A stale mirror's lag is the
    difference of the two ordinals (or of the versions' dates)."""
    a_keys, a_runs = np.asarray(a_keys, dtype=np.int64), np.asarray(a_runs, dtype=np.int64)
    b_keys, b_runs = np.asarray(b_keys, dtype=np.int64), np.asarray(b_runs, dtype=np.int64)
    found = np.full(a_keys.size, -1, dtype=np.int64)
    if a_keys.size == 0 or b_keys.size == 0:
        return found
    span = int(max(a_runs.max(), b_runs.max())) + 1
    order = np.lexsort((b_runs, b_keys))
    composite = b_keys[order] * span + b_runs[order]
    at = np.searchsorted(composite, a_keys * span + a_runs, side="left")
    inside = at < composite.size
    hit = np.zeros(a_keys.size, dtype=bool)
    hit[inside] = b_keys[order][at[inside]] == a_keys[inside]
    found[hit] = order[at[hit]]
    return found
