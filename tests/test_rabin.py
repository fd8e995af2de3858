"""Rabin fingerprints against slow, obviously-correct polynomial arithmetic."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorscope.detectors.minhash import Permutation64, splitmix64
from mirrorscope.detectors.rabin import POLY40, POLY64, RABIN40, RABIN64, Rabin

RABINS = [RABIN64, RABIN40]
MASK64 = (1 << 64) - 1


# --- polynomials over GF(2) as Python ints (bit i = coefficient of x^i) -------------


def clmul(a: int, b: int) -> int:
    product = 0
    while b:
        if b & 1:
            product ^= a
        a <<= 1
        b >>= 1
    return product


def polymod(a: int, p: int) -> int:
    degree = p.bit_length() - 1
    while a.bit_length() - 1 >= degree:
        a ^= p << (a.bit_length() - 1 - degree)
    return a


def polygcd(a: int, b: int) -> int:
    while b:
        a, b = b, polymod(a, b)
    return a


def x_to_2_to_the(k: int, p: int) -> int:
    """x^(2^k) mod p by k squarings."""
    r = 2
    for _ in range(k):
        r = polymod(clmul(r, r), p)
    return r


def prime_factors(n: int) -> list[int]:
    return [q for q in range(2, n + 1) if n % q == 0 and all(q % d for d in range(2, q))]


def is_irreducible(p: int) -> bool:
    """Rabin's test: p of degree n is irreducible over GF(2) iff x^(2^n) = x mod p and
    gcd(x^(2^(n/q)) - x, p) = 1 for every prime q dividing n."""
    n = p.bit_length() - 1
    if x_to_2_to_the(n, p) != polymod(2, p):
        return False
    return all(polygcd(x_to_2_to_the(n // q, p) ^ 2, p) == 1 for q in prime_factors(n))


def reference_fingerprint(data: bytes, poly: int, degree: int) -> int:
    """Bit by bit long division of 1 || data by x^degree + poly."""
    full = (1 << degree) | poly
    remainder = 1
    for byte in data:
        for bit in range(7, -1, -1):
            remainder = (remainder << 1) | ((byte >> bit) & 1)
            if remainder >> degree:
                remainder ^= full
    return remainder


# --- irreducibility ------------------------------------------------------------------


def test_rabin_test_itself_accepts_and_rejects_known_polynomials() -> None:
    assert is_irreducible((1 << 64) | 0b11011)  # x^64 + x^4 + x^3 + x + 1, tabulated
    assert is_irreducible(0b111)  # x^2 + x + 1
    assert not is_irreducible((1 << 64) | 1)  # (x + 1)^64
    assert not is_irreducible(clmul(0b111, (1 << 62) | 0b11))  # a product
    assert not is_irreducible(clmul(0b1011, 0b1011))  # a square


@pytest.mark.parametrize(("poly", "degree"), [(POLY64, 64), (POLY40, 40)])
def test_polynomials_are_irreducible(poly: int, degree: int) -> None:
    assert poly & 1, "x must not divide P"
    assert is_irreducible((1 << degree) | poly)


# --- fingerprints ----------------------------------------------------------------------


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=120))
def test_fingerprint_matches_long_division(rabin: Rabin, data: bytes) -> None:
    assert rabin.fingerprint(data) == reference_fingerprint(data, rabin.poly, rabin.degree)


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
@settings(max_examples=40, deadline=None)
@given(strings=st.lists(st.binary(max_size=70), max_size=60))
def test_fingerprint_many_matches_one_by_one(rabin: Rabin, strings: list[bytes]) -> None:
    expected = [reference_fingerprint(s, rabin.poly, rabin.degree) for s in strings]
    assert rabin.fingerprint_many(strings).tolist() == expected


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
def test_long_and_mixed_strings(rabin: Rabin) -> None:
    rng = random.Random(7)
    strings = [rng.randbytes(n) for n in (0, 1, 4, 5, 7, 8, 9, 16, 17, 39, 40, 41, 1000, 4099)]
    strings += [b"\x00", b"\x00\x00", b"\x01"]
    expected = [reference_fingerprint(s, rabin.poly, rabin.degree) for s in strings]
    assert rabin.fingerprint_many(strings).tolist() == expected
    # The leading 1 keeps leading zero bytes significant.
    assert len(set(expected[-3:] + [expected[0]])) == 4


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
@pytest.mark.parametrize("count", [5, 200])  # both sides of the small-array path
@pytest.mark.parametrize("j", [0, 1, 7, 8, 64, 640, 100_003])
def test_fold_multiplies_by_powers_of_x(rabin: Rabin, count: int, j: int) -> None:
    """fold of (v, 0) with block j is v * x^j mod P: the per-shift tables are right."""
    rng = random.Random(j * 1000 + count)
    values = [rng.getrandbits(rabin.degree) for _ in range(count)]
    full = (1 << rabin.degree) | rabin.poly
    power = polymod(1 << j, full)
    expected = [polymod(clmul(v, power), full) for v in values]
    pieces = np.zeros((count, 2), dtype=np.uint64)
    pieces[:, 0] = values
    assert rabin.fold(pieces, j).tolist() == expected


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
@settings(max_examples=60, deadline=None)
@given(a=st.binary(max_size=40), b=st.binary(max_size=40))
def test_linearity_of_concatenation(rabin: Rabin, a: bytes, b: bytes) -> None:
    """f(A || B) = f(A) * x^(8|B|) + B(x) mod P, B(x) = f(B) without its leading 1."""
    b_residue = rabin.fingerprint(b) ^ rabin.xpow(8 * len(b))
    joined = rabin.fold(np.array([[rabin.fingerprint(a), 0]], dtype=np.uint64), 8 * len(b))[0] ^ b_residue
    assert int(joined) == rabin.fingerprint(a + b)


@pytest.mark.parametrize("rabin", RABINS, ids=repr)
def test_concat_segments(rabin: Rabin) -> None:
    rng = random.Random(3)
    chunk = rabin.chunk_bytes
    lengths = [1, 2, 3, 4, 5, 8, 9, 1, 33, 2, 1]
    segments = [[rng.randbytes(rng.randrange(12))] + [rng.randbytes(chunk) for _ in range(n - 1)] for n in lengths]
    pieces = []
    for seg in segments:
        pieces.append(rabin.fingerprint(seg[0]))
        pieces += [int.from_bytes(block, "big") for block in seg[1:]]
    got = rabin.concat(np.array(pieces, dtype=np.uint64), np.array(lengths), 8 * chunk)
    assert got.tolist() == [rabin.fingerprint(b"".join(seg)) for seg in segments]


def test_xpow_is_x_to_the_j() -> None:
    full = (1 << 64) | POLY64
    for j in (0, 1, 63, 64, 65, 640, 12345):
        assert RABIN64.xpow(j) == polymod(1 << j, full)


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        Rabin(POLY64, 63)
    with pytest.raises(ValueError):
        Rabin(1 << 64, 64)


# --- the permutation -------------------------------------------------------------------


def invert_permutation(perm: Permutation64, value: int) -> int:
    def unxorshift(v: int, shift: int) -> int:
        result = v
        for _ in range(64 // shift + 1):
            result = v ^ (result >> shift)
        return result

    v = unxorshift(value, perm.FINAL_SHIFT)
    for shift, multiplier in reversed(list(zip(perm.SHIFTS, perm.multipliers))):
        v = unxorshift((v * pow(multiplier, -1, 1 << 64)) & MASK64, shift)
    return v ^ perm.key


def test_permutation_multipliers_are_full_width_and_odd() -> None:
    for seed in (0, 1, 2**64 - 1, 0x6D6972726F727363):
        perm = Permutation64(seed)
        assert all(m & 1 and m >= 1 << 63 for m in perm.multipliers)
        assert len(set(perm.multipliers)) == len(perm.multipliers)


def test_permutation_is_a_bijection() -> None:
    perm = Permutation64(12345)
    rng = random.Random(1)
    values = [0, 1, 2, MASK64, 1 << 63] + [rng.getrandbits(64) for _ in range(2000)]
    mixed = perm(np.array(values, dtype=np.uint64)).tolist()
    assert [invert_permutation(perm, v) for v in mixed] == values
    assert len(set(mixed)) == len(set(values))


def test_permutation_avalanche() -> None:
    """Flipping one input bit flips about half the output bits."""
    perm = Permutation64(99)
    rng = np.random.default_rng(5)
    base = rng.integers(0, 2**63, size=4000, dtype=np.int64).astype(np.uint64)
    flips = []
    for bit in range(64):
        diff = perm(base) ^ perm(base ^ np.uint64(1 << bit))
        flips.append(np.unpackbits(diff.view(np.uint8)).mean() * 64)
    assert 30 < min(flips) and max(flips) < 34


def test_constants_are_fixed_forever() -> None:
    """splitmix64, the permutation and the fingerprints are part of the scheme 'v1'."""
    assert next(splitmix64(0)) == 0xE220A8397B1DCDAF
    assert RABIN64.fingerprint(b"mirrorscope") == reference_fingerprint(b"mirrorscope", POLY64, 64)
    perm = Permutation64(0x6D6972726F727363)
    assert perm(np.array([0, 1], dtype=np.uint64)).tolist() == GOLDEN_PERMUTED


GOLDEN_PERMUTED = [10597003241916709378, 6085929203551153458]
