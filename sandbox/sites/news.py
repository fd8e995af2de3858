"""A local news and travel blog: dated posts, tags, paginated front page."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..markup import escape, ext, items, link, page_resource, rel, robots
from ..model import Resource
from ..names import BIRDERS, PORTAL, RECIPES
from ..text import Prose, slug

_TAGS = ("news", "travel", "food", "events", "council", "walks")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
_PER_PAGE = 8
_ROLES = ("a local resident", "the harbour master", "a council spokesperson", "the owner", "a volunteer", "the organiser")


@dataclass(frozen=True)
class _Post:
    title: str
    path: str
    month: int
    day: int
    tags: tuple[str, ...]

    @property
    def date(self) -> str:
        return f"{self.day} {_MONTHS[self.month - 1]} 2024"


class _NewsWriter:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prose = Prose("travel", rng)
        self.resources: dict[str, Resource] = {}
        self.posts = self._draw_posts(24)

    def _draw_posts(self, count: int) -> list[_Post]:
        posts: dict[str, _Post] = {}
        while len(posts) < count:
            place = self.prose.place()
            title = f"{place}: {self.prose.title()}"
            month = self.rng.randint(1, 12)
            path = f"/2024/{month:02d}/{slug(title)}.html"
            tags = tuple(sorted(self.rng.sample(_TAGS, 2)))
            posts.setdefault(path, _Post(title, path, month, self.rng.randint(1, 28), tags))
        return sorted(posts.values(), key=lambda p: (p.month, p.day, p.path), reverse=True)

    def _page(self, path: str, title: str, main: str) -> None:
        nav = " | ".join(
            link(p, label)
            for p, label in (("/", "Home"), ("/archive.html", "Archive"), ("/tag/news.html", "News"), ("/tag/travel.html", "Travel"), ("/about.html", "About"))
        )
        tags = " ".join(link(f"/tag/{t}.html", t) for t in _TAGS)

        def frame(content: str) -> str:
            return (
                f'<div class="masthead"><h2 class="site-title">The Harbourtown Gazette</h2><p>{nav}</p></div>\n'
                f'<div class="main">\n{content}\n</div>\n'
                f'<div class="sidebar"><h3>Tags</h3><p>{tags}</p></div>\n'
                f'<div class="footer">Independent local news since 2009. {link(ext(PORTAL), "Listed on LinkAtlas")}</div>'
            )

        self.resources[path] = page_resource(f"{title} \u2013 The Harbourtown Gazette", main, frame, self.prose.paragraph)

    def build(self) -> dict[str, Resource]:
        for i, post in enumerate(self.posts):
            self._post(i, post)
        self._front_pages()
        for tag in _TAGS:
            self._tag(tag)
        self._archive()
        self._about()
        self.resources["/robots.txt"] = robots()
        return self.resources

    def _quote(self) -> str:
        said = self.prose.sentence().rstrip(".")
        return f"<p>\u201c{said},\u201d said {self.prose.person()}, {self.rng.choice(_ROLES)}.</p>"

    def _post(self, index: int, post: _Post) -> None:
        self.prose.new_page()
        parts = [f"<p>{p}</p>" for p in self.prose.paragraphs(self.rng.randint(5, 8))]
        for _ in range(2):
            parts.insert(self.rng.randint(1, len(parts)), self._quote())
        related = self.rng.sample([p for p in self.posts if p is not post], 3)
        neighbours = []
        if index + 1 < len(self.posts):
            neighbours.append("\u2190 " + link(rel(post.path, self.posts[index + 1].path), self.posts[index + 1].title))
        if index:
            neighbours.append(link(rel(post.path, self.posts[index - 1].path), self.posts[index - 1].title) + " \u2192")
        main = (
            f"<article><h1>{escape(post.title)}</h1>"
            f'<p class="byline">By {self.prose.person()} \u00b7 {post.date}</p>'
            + "".join(parts)
            + "<p>Tagged: "
            + ", ".join(link(f"/tag/{t}.html", t) for t in post.tags)
            + "</p></article><h3>Related</h3>"
            + items(link(rel(post.path, p.path), p.title) for p in related)
            + f'<p class="postnav">{" | ".join(neighbours)}</p>'
        )
        self._page(post.path, post.title, main)

    def _excerpt(self, source: str, post: _Post) -> str:
        return f"<h2>{link(rel(source, post.path), post.title)}</h2><p>{post.date}. {self.prose.paragraph(2, 3)}</p>"

    def _front_pages(self) -> None:
        pages = [self.posts[i : i + _PER_PAGE] for i in range(0, len(self.posts), _PER_PAGE)]
        paths = ["/"] + [f"/?page={n}" for n in range(2, len(pages) + 1)]
        for n, (path, posts) in enumerate(zip(paths, pages, strict=True)):
            self.prose.new_page()
            pager = []
            if n:
                pager.append(link(rel(path, paths[n - 1]), "Newer posts"))
            if n + 1 < len(paths):
                pager.append(link(rel(path, paths[n + 1]), "Older posts"))
            separator = " \u00b7 "
            main = "".join(self._excerpt(path, p) for p in posts) + f'<p class="pager">{separator.join(pager)}</p>'
            self._page(path, "Home" if n == 0 else f"Page {n + 1}", main)

    def _tag(self, tag: str) -> None:
        path = f"/tag/{tag}.html"
        self.prose.new_page()
        tagged = [p for p in self.posts if tag in p.tags]
        main = (
            f"<h1>Posts tagged \u201c{tag}\u201d</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            + items(f"{link(rel(path, p.path), p.title)} <small>{p.date}</small> {self.prose.sentence()}" for p in tagged)
        )
        self._page(path, tag, main)

    def _archive(self) -> None:
        self.prose.new_page()
        sections = []
        for month in range(12, 0, -1):
            posts = [p for p in self.posts if p.month == month]
            if posts:
                sections.append(f"<h2>{_MONTHS[month - 1]} 2024</h2>" + items(link(p.path.lstrip("/"), p.title) for p in posts))
        main = f"<h1>Archive</h1><p>{self.prose.paragraph()}</p>" + "".join(sections)
        self._page("/archive.html", "Archive", main)

    def _about(self) -> None:
        self.prose.new_page()
        main = (
            "<h1>About the Gazette</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
            + f"<p>Our food column borrows from {link(ext(RECIPES), 'Salt & Simmer')}; "
            + f"bird walks are run by {link(ext(BIRDERS), 'the Northfield Birders')}.</p>"
        )
        self._page("/about.html", "About", main)


def news_site(rng: random.Random) -> dict[str, Resource]:
    """Every resource of the news blog."""
    return _NewsWriter(rng).build()
