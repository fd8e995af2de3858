"""The shared kernels: pairs within runs of equal keys, and host keys without ports."""

from __future__ import annotations

import itertools

import numpy as np

from mirrorscope.detectors.host_keys import strip_port
from mirrorscope.detectors.runs import run_pairs, runs


def test_run_pairs_match_brute_force_and_star_large_runs() -> None:
    keys = np.sort(np.random.default_rng(5).integers(0, 9, 60))
    for star_above, batch in ((None, 7), (3, 1 << 20), (3, 5)):
        got = sorted((int(a), int(b)) for left, right in run_pairs(*runs(keys), star_above=star_above, batch=batch)
                     for a, b in zip(left, right))
        want = []
        for start, length in zip(*runs(keys)):
            members = range(int(start), int(start + length))
            if star_above is not None and length > star_above:
                want += [(members[0], m) for m in members[1:]]
            else:
                want += list(itertools.combinations(members, 2))
        assert got == sorted(want)


def test_strip_port_keeps_ipv6_addresses_whole() -> None:
    assert strip_port("example.org") == "example.org"
    assert strip_port("example.org:8080") == "example.org"
    assert strip_port("[2001:db8::1]:8080") == "2001:db8::1"
    assert strip_port("[::1]") == "::1"
    assert strip_port("::1") == "::1"
