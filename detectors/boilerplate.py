"""Boilerplate removal: text blocks that repeat across one host's pages.

Henzinger, "Finding near-duplicate web pages: a large-scale evaluation of algorithms"
(SIGIR 2006): both Broder's shingling and Charikar's simhash lose precision on pairs of
pages from the same site, because navigation, headers and footers are shared. A block
(the text of one block-level element, ``CanonicalDocument.blocks``) is boilerplate on a
host once it has appeared, word for word, on ``min_pages`` of that host's pages
(default 3: twice can be a coincidence or a real quotation; three times is a template).

Online, a host's first ``min_pages - 1`` pages keep their boilerplate (nothing has
repeated yet); ``fit`` then ``strip`` over a finished set of pages is exact.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable

__all__ = ["DEFAULT_MIN_PAGES", "BoilerplateFilter"]

DEFAULT_MIN_PAGES = 3


def _key(block: list[str]) -> bytes:
    return hashlib.blake2b(" ".join(block).encode("utf-8", "surrogatepass"), digest_size=8).digest()


class BoilerplateFilter:
    """Counts, per host, on how many pages each block appears; drops frequent blocks."""

    def __init__(self, min_pages: int = DEFAULT_MIN_PAGES) -> None:
        if min_pages < 2:
            raise ValueError("min_pages must be at least 2")
        self.min_pages = min_pages
        self.counts: dict[str, Counter[bytes]] = defaultdict(Counter)

    def observe(self, host: str, blocks: Iterable[list[str]]) -> None:
        """Count one page's distinct blocks."""
        self.counts[host].update({_key(b) for b in blocks})

    def strip(self, host: str, blocks: Iterable[list[str]]) -> list[str]:
        """The page's tokens without the host's boilerplate blocks."""
        seen = self.counts[host]
        return [t for b in blocks if seen[_key(b)] < self.min_pages for t in b]

    def filter(self, host: str, blocks: list[list[str]]) -> list[str]:
        """Online use: count this page, then strip what has become boilerplate."""
        self.observe(host, blocks)
        return self.strip(host, blocks)
