"""Rabin fingerprints over GF(2): table-driven, vectorised with numpy.

Rabin, "Fingerprinting by random polynomials" (Harvard TR-15-81, 1981); Broder, "Some
applications of Rabin's fingerprinting method" (1993); Broder, Glassman, Manasse and
Zweig, "Syntactic clustering of the Web" (WWW6, 1997), who fingerprint 10-word shingles
with 40-bit Rabin fingerprints.

A byte string a_1 ... a_L is read as the polynomial A(x) over GF(2) whose coefficients are
its bits, most significant bit of a_1 first. As in the notes (a_1 = 1) a leading 1 is
prepended, so strings differing only by leading zero bytes do not collide:

    f(A) = (x^(8L) + A(x)) mod P(x)

for an irreducible P of degree k: k = 64 (``RABIN64``, used by the sketches) or k = 40
(``RABIN40``, Broder et al.'s 5-byte fingerprints). Over a random choice of P, two
distinct strings of n bits collide with probability about n / 2^k.

Everything rests on linearity. For a string B of b bits,

    f(A || B) = f(A) * x^b  XOR  (B(x) mod P),

and multiplying a k-bit residue by a fixed power x^j mod P is GF(2)-linear, so it is k/8
lookups in 256-entry tables, one table per byte of the residue ("per-shift tables",
built once per j and cached). To fingerprint many strings at once each one is cut into
k-bit chunks, right-aligned so the first chunk holds the leading 1 behind zero padding
(leading zeros do not change a polynomial); a k-bit chunk is its own residue; chunks are
then joined 16 at a time up a tree, all strings together, so Python iterates
about log16(longest string / chunk) times, never once per string or byte.

The polynomials are the first candidates x^k + (z mod 2^k | 1), z drawn from
splitmix64(0x524142494E00 + k), that pass Rabin's irreducibility test; the tests
re-prove irreducibility. Nothing here depends on the process, the platform or the Python
version: the fingerprints are a fixed function of the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mirrorscope.detectors.runs import ramp

__all__ = ["POLY40", "POLY64", "RABIN40", "RABIN64", "Rabin"]

#: x^64 + POLY64 is irreducible over GF(2) (the x^64 term is implicit).
POLY64 = 0x6BF2B5999AA7E58F
#: x^40 + POLY40 is irreducible over GF(2) (the x^40 term is implicit).
POLY40 = 0x4039F8BE55

# Below this many values one gather over all byte tables at once beats a take per byte:
# the per-call overhead of numpy dominates small arrays.
_SMALL = 64
# Pieces joined per step when concatenating: 16 tables of 16 KB per step width.
_RADIX = 16
_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool)


class Rabin:
    """Fingerprints modulo one irreducible polynomial x^degree + poly over GF(2)."""

    def __init__(self, poly: int, degree: int) -> None:
        if degree % 8 or not 8 <= degree <= 64:
            raise ValueError("degree must be a multiple of 8 between 8 and 64")
        if not 0 <= poly < 1 << degree:
            raise ValueError("poly holds the coefficients below x^degree")
        self.poly = poly
        self.degree = degree
        self.chunk_bytes = degree // 8
        self._full = (1 << degree) | poly
        self._offsets = np.arange(self.chunk_bytes, dtype=np.intp) * 256
        self._tables: dict[int, np.ndarray] = {}
        self._fold_tables: dict[tuple[int, int], np.ndarray] = {}

    def __repr__(self) -> str:
        return f"Rabin(poly={self.poly:#x}, degree={self.degree})"

    def _mulmod(self, a: int, b: int) -> int:
        product = 0
        while b:
            if b & 1:
                product ^= a
            b >>= 1
            a <<= 1
            if a >> self.degree:
                a ^= self._full
        return product

    def xpow(self, j: int) -> int:
        """x^j mod P, as an integer whose bit i is the coefficient of x^i."""
        result, base = 1, 2
        while j:
            if j & 1:
                result = self._mulmod(result, base)
            base = self._mulmod(base, base)
            j >>= 1
        return result

    def _table(self, j: int) -> np.ndarray:
        table = self._tables.get(j)
        if table is None:
            # basis[t] = x^(j+t) mod P: the image of each input bit.
            basis = np.empty(self.degree, dtype=np.uint64)
            r = self.xpow(j)
            for t in range(self.degree):
                basis[t] = r
                r <<= 1
                if r >> self.degree:
                    r ^= self._full
            per_byte = basis.reshape(self.chunk_bytes, 1, 8)
            table = np.bitwise_xor.reduce(np.where(_BITS, per_byte, np.uint64(0)), axis=2)
            self._tables[j] = table
        return table

    def fold(self, pieces: np.ndarray, block_bits: int) -> np.ndarray:
        """f(row[0] || row[1] || ... || row[K-1]) for each row of a (rows, K) array.

        row[0] is the fingerprint of the first piece (any length), the others residues
        of pieces exactly ``block_bits`` bits long: column k is multiplied by
        x^(block_bits (K-1-k)). Meant for small K (the tables take K * 16 KB).
        """
        rows, width = pieces.shape
        key = (width, block_bits)
        tables = self._fold_tables.get(key)
        if tables is None:
            tables = np.stack([self._table(block_bits * (width - 1 - k)) for k in range(width)])
            self._fold_tables[key] = tables
        octets = np.ascontiguousarray(pieces, dtype="<u8").view(np.uint8).reshape(rows, width, 8)
        if rows < _SMALL:
            index = octets[:, :, : self.chunk_bytes] + self._offsets + (np.arange(width) * tables[0].size)[:, None]
            return np.bitwise_xor.reduce(tables.ravel()[index].reshape(rows, -1), axis=1)
        result = np.zeros(rows, dtype=np.uint64)
        scratch = np.empty_like(result)
        for column in range(width):
            for byte in range(self.chunk_bytes):
                tables[column, byte].take(octets[:, column, byte], out=scratch)
                result ^= scratch
        return result

    def concat(self, pieces: np.ndarray, lengths: np.ndarray, block_bits: int) -> np.ndarray:
        """Fingerprints of concatenations, one per segment of ``pieces``.

        Segment i holds ``lengths[i] >= 1`` consecutive values: the fingerprint of its
        first piece (any length), then the residues of the following pieces, each exactly
        ``block_bits`` bits long. Returns f(first || second || ...) per segment.
        """
        pieces = np.asarray(pieces, dtype=np.uint64)
        lengths = np.asarray(lengths, dtype=np.int64)
        starts = lengths.cumsum() - lengths
        result = pieces[starts]
        active = (lengths > 1).nonzero()[0]
        span = lengths[active]
        values = pieces[starts[active].repeat(span) + ramp(span)]
        # Each level pads every segment in front with zeros (leading zeros change
        # nothing) to a multiple of _RADIX pieces and folds each run of _RADIX into one.
        while active.size:
            padded = -(-span // _RADIX) * _RADIX
            block = np.zeros(int(padded.sum()), dtype=np.uint64)
            block[(padded.cumsum() - span).repeat(span) + ramp(span)] = values
            values = self.fold(block.reshape(-1, _RADIX), block_bits)
            span = padded // _RADIX
            block_bits *= _RADIX
            done = span == 1
            result[active[done]] = values[(span.cumsum() - 1)[done]]
            values = values[(~done).repeat(span)]
            active, span = active[~done], span[~done]
        return result

    def fingerprint_many(self, strings: Sequence[bytes]) -> np.ndarray:
        """f(s) for every byte string in ``strings``, as uint64."""
        count = len(strings)
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=count)
        data = np.frombuffer(b"".join(strings), dtype=np.uint8)
        chunk = self.chunk_bytes
        chunks_per_string = lengths // chunk + 1
        # Zero padding then the leading 1 byte, so each string fills whole chunks.
        head = chunks_per_string * chunk - lengths
        fill = np.zeros(int(head.sum()), dtype=np.uint8)
        fill[head.cumsum() - 1] = 1
        padded = np.insert(data, (lengths.cumsum() - lengths).repeat(head), fill)
        if chunk == 8:
            chunks = padded.view(">u8").astype(np.uint64)
        else:
            columns = padded.reshape(-1, chunk).astype(np.uint64)
            chunks = columns[:, 0].copy()
            for byte in range(1, chunk):
                chunks <<= np.uint64(8)
                chunks |= columns[:, byte]
        return self.concat(chunks, chunks_per_string, 8 * chunk)

    def fingerprint(self, data: bytes) -> int:
        """f(data): the Rabin fingerprint of ``data`` with a leading 1."""
        return int(self.fingerprint_many([data])[0])


RABIN64 = Rabin(POLY64, 64)
RABIN40 = Rabin(POLY40, 40)
