"""A personal blog whose comment threads carry links: legitimate ones and comment spam.

The spam hosts of the spam world are reached this way, from ordinary posts,
as link farms and doorways are reached on the real web.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..markup import escape, link
from ..model import Resource
from .generic import SmallSite, SmallSiteWriter


class BlogWriter(SmallSiteWriter):
    """Posts with comments; `planted[i]` are (href, anchor text, comment text) added to post i's thread."""

    def __init__(self, site: SmallSite, rng: random.Random, planted: dict[int, Sequence[tuple[str, str, str]]]) -> None:
        super().__init__(site, rng)
        self.planted = planted

    def item_main(self, directory: str, label: str, entries: Sequence[tuple[str, str]], index: int) -> str:
        main = super().item_main(directory, label, entries, index)
        if directory != "posts":
            return main
        comments = [
            f"<p><strong>{escape(self.prose.person())}</strong>: {self.prose.sentence()}</p>"
            for _ in range(self.rng.randint(1, 3))
        ]
        for href, anchor, text in self.planted.get(index, ()):
            comments.append(f"<p><strong>{escape(anchor)}</strong>: {escape(text)} {link(href, anchor)}</p>")
        return main + '<section class="comments"><h2>Comments</h2>' + "".join(comments) + "</section>"


def blog_site(site: SmallSite, rng: random.Random, planted: dict[int, Sequence[tuple[str, str, str]]]) -> dict[str, Resource]:
    return BlogWriter(site, rng, planted).build()
