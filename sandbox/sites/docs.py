"""A programming-language documentation site, Sphinx style.

The layout (which pages exist at which paths) is drawn separately from the
content so that the decoy can reuse the paths of the real documentation with
unrelated text: path-based mirror heuristics must then be refuted by content.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..markup import escape, ext, items, link, page_resource, rel, robots, text_resource
from ..model import Resource
from ..text import Prose, plural, slug, title_case
from ..vocab import PROGRAMMING


@dataclass(frozen=True)
class DocsLayout:
    """Which pages a documentation site has."""

    tutorial: tuple[str, ...]
    modules: tuple[str, ...]
    reference: tuple[str, ...]
    howto: tuple[str, ...]
    searches: tuple[str, ...]  # modules with a canned search-results page


@dataclass(frozen=True)
class DocsSite:
    """What makes one documentation site differ from another with the same layout."""

    language: str
    version: str
    mirrors: tuple[str, ...]  # host names listed on /mirrors.html
    friends: tuple[tuple[str, str], ...]  # (host, label) linked from /about.html


def docs_layout(rng: random.Random) -> DocsLayout:
    """Draw the page names of a documentation site."""
    nouns = list(PROGRAMMING.nouns)
    rng.shuffle(nouns)
    modules = tuple(sorted(nouns[:20]))
    return DocsLayout(
        tutorial=tuple(nouns[20:28]),
        modules=modules,
        reference=tuple(nouns[28:34]),
        howto=tuple(f"{verb}-{plural(noun)}" for verb, noun in zip(rng.sample(PROGRAMMING.verbs, 4), nouns[34:38], strict=True)),
        searches=tuple(rng.sample(modules, 3)),
    )


class _DocsWriter:
    """Renders every page of one documentation site."""

    def __init__(self, layout: DocsLayout, site: DocsSite, rng: random.Random) -> None:
        self.layout = layout
        self.site = site
        self.rng = rng
        self.prose = Prose("programming", rng)
        self.resources: dict[str, Resource] = {}
        # Each module's API names, drawn up front so any page can link to them.
        self.api = {m: self._api_names() for m in layout.modules}
        self.summary = {m: self.prose.phrase(4) for m in layout.modules}

    def _api_names(self) -> list[str]:
        names = {f"{self.rng.choice(PROGRAMMING.verbs)}_{self.rng.choice(PROGRAMMING.nouns)}" for _ in range(7)}
        return sorted(names)[: self.rng.randint(4, 7)]

    # -- chrome -----------------------------------------------------------

    def _page(self, path: str, title: str, main: str, *, toc: Sequence[tuple[str, str]] = (), source: str = "") -> None:
        site = self.site
        related = " | ".join(
            [
                link("/genindex.html", "index"),
                link("/py-modindex.html", "modules"),
                link("/index.html", f"{site.language} {site.version} documentation"),
            ]
        )
        sidebar = ""
        if toc:
            sidebar += "<h3>Table of Contents</h3>" + items(link(f"#{a}", t) for a, t in toc)
        if source:
            sidebar += "<h3>This Page</h3>" + items([link(rel(path, source), "Show Source")])
        sidebar += (
            '<h3>Quick search</h3><form class="search" action="/search.html" method="get">'
            '<input type="text" name="q"><input type="submit" value="Go"></form>'
        )
        footer = (
            f"&copy; Copyright 2001-2024, the {escape(site.language)} Software Foundation. "
            + link("/about.html", "About these documents")
            + " &middot; "
            + link("/mirrors.html", "Mirrors")
        )

        def frame(content: str) -> str:
            return (
                f'<div class="related" role="navigation">{related}</div>\n'
                f'<div class="document"><div class="body" role="main">\n{content}\n</div></div>\n'
                f'<div class="sphinxsidebar" role="navigation">{sidebar}</div>\n'
                f'<div class="footer">{footer}</div>'
            )

        full_title = f"{title} \u2014 {site.language} {site.version} documentation"
        self.resources[path] = page_resource(full_title, main, frame, self.prose.paragraph)

    def _section(self, anchor: str, heading: str, paragraphs: int) -> str:
        text = "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(paragraphs))
        return f'<section id="{anchor}"><h2>{escape(heading)}<a class="headerlink" href="#{anchor}">\u00b6</a></h2>{text}</section>'

    def _code(self, module: str) -> str:
        lines = [f">>> import {module}"]
        for name in self.rng.sample(self.api[module], min(3, len(self.api[module]))):
            arg = self.rng.choice(PROGRAMMING.nouns)
            lines.append(f">>> {arg} = {module}.{name}({self.rng.choice(PROGRAMMING.nouns)!r})")
            lines.append(f"<{self.rng.choice(PROGRAMMING.adjectives)} {arg} at 0x{self.rng.getrandbits(32):08x}>")
        return '<pre class="highlight">' + escape("\n".join(lines)) + "</pre>"

    # -- pages ------------------------------------------------------------

    def build(self) -> dict[str, Resource]:
        self._front()
        self._tutorial()
        self._library()
        self._reference()
        self._howto()
        self._indices()
        self._search()
        self._about()
        self.resources["/robots.txt"] = robots("/_sources/")
        return self.resources

    def _front(self) -> None:
        lay = self.layout
        self.prose.new_page()
        parts = (
            ("/tutorial/index.html", "Tutorial"),
            ("/library/index.html", "Library Reference"),
            ("/reference/index.html", "Language Reference"),
            ("/howto/index.html", "HOWTOs"),
        )
        searches = [link(f"search.html?q={q}", q) for q in lay.searches]
        main = (
            f"<h1>{escape(self.site.language)} {self.site.version} documentation</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            + "<h2>Parts of the documentation</h2>"
            + items(f"{link(rel('/', p), label)} \u2014 {escape(self.prose.phrase(5))}" for p, label in parts)
            + "<h2>Indices and tables</h2>"
            + items(
                [
                    link("genindex.html", "General Index"),
                    link("py-modindex.html", "Module Index"),
                    link("search.html", "Search page"),
                ]
            )
            + "<h2>Popular searches</h2>"
            + items(searches)
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
        )
        for path in ("/", "/index.html"):  # both forms are served, as on many real sites
            self._page(path, "Contents", main)

    def _chapter_pages(self, directory: str, names: tuple[str, ...], heading: str, sections: int) -> None:
        """An index page plus one page per name, with previous/next navigation."""
        titles = {n: title_case(f"{self.prose.adjective()} {n}") for n in names}
        for i, name in enumerate(names):
            path = f"{directory}{name}.html"
            self.prose.new_page()
            heads = [self.prose.title() for _ in range(sections)]
            toc = [(slug(h), h) for h in heads]
            body = "".join(self._section(a, h, self.rng.randint(2, 3)) for a, h in toc)
            module = self.rng.choice(self.layout.modules)
            nav = []
            if i:
                nav.append("Previous: " + link(f"{names[i - 1]}.html", titles[names[i - 1]]))
            if i + 1 < len(names):
                nav.append("Next: " + link(f"{names[i + 1]}.html", titles[names[i + 1]]))
            main = (
                f"<h1>{i + 1}. {escape(titles[name])}</h1>"
                + body
                + self._code(module)
                + f"<p>See the {link(rel(path, f'/library/{module}.html'), module)} module for details.</p>"
                + f'<p class="nav">{" | ".join(nav)}</p>'
            )
            self._page(path, titles[name], main, toc=toc)
        self.prose.new_page()
        listing = items(
            f"{link(f'{n}.html', titles[n])} \u2014 {escape(self.prose.phrase(6))}" for n in names
        )
        intro = "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
        main = f"<h1>{escape(heading)}</h1>{intro}{listing}<p>{self.prose.paragraph()}</p>"
        self._page(f"{directory}index.html", heading, main)

    def _tutorial(self) -> None:
        self._chapter_pages("/tutorial/", self.layout.tutorial, "The Tutorial", 4)

    def _reference(self) -> None:
        self._chapter_pages("/reference/", self.layout.reference, "The Language Reference", 5)

    def _howto(self) -> None:
        names = self.layout.howto
        for name in names:
            path = f"/howto/{name}.html"
            self.prose.new_page()
            steps = items((self.prose.instruction() for _ in range(self.rng.randint(6, 10))), "ol")
            main = (
                f"<h1>HOWTO: {escape(title_case(name.replace('-', ' ')))}</h1>"
                + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
                + f"<h2>Steps</h2>{steps}"
                + self._code(self.rng.choice(self.layout.modules))
                + f"<p>{self.prose.paragraph()}</p>"
                + f"<p>{link('index.html', 'All HOWTOs')}</p>"
            )
            self._page(path, name, main)
        self.prose.new_page()
        main = "<h1>HOWTOs</h1>" + f"<p>{self.prose.paragraph()}</p>" + items(link(f"{n}.html", n) for n in names)
        main += "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
        self._page("/howto/index.html", "HOWTOs", main)

    def _library(self) -> None:
        modules = self.layout.modules
        for module in modules:
            self._module_page(module)
            entries = "\n".join(f"{module}.{n}()" for n in self.api[module])
            self.resources[f"/_sources/library/{module}.txt"] = text_resource(
                f":mod:`{module}` --- {self.summary[module]}\n\n{entries}\n"
            )
        self.prose.new_page()
        main = (
            "<h1>The Standard Library</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            + items(f"{link(f'{m}.html', m)} \u2014 {escape(self.summary[m])}" for m in modules)
        )
        self._page("/library/index.html", "The Standard Library", main)

    def _module_page(self, module: str) -> None:
        path = f"/library/{module}.html"
        self.prose.new_page()
        entries = []
        for name in self.api[module]:
            anchor = f"{module}.{name}"
            args = ", ".join(self.rng.sample(PROGRAMMING.nouns, self.rng.randint(1, 3)))
            entries.append(
                f'<dl class="py function"><dt class="sig" id="{anchor}"><code>{anchor}({args}, *, '
                f"{self.rng.choice(PROGRAMMING.nouns)}=None)</code>"
                f'<a class="headerlink" href="#{anchor}">\u00b6</a></dt>'
                f"<dd><p>{self.prose.paragraph(2, 4)}</p></dd></dl>"
            )
        others = self.rng.sample([m for m in self.layout.modules if m != module], 3)
        see_also = [link(f"{m}.html#{m}.{self.api[m][0]}", f"{m}.{self.api[m][0]}()") for m in others]
        chapter = self.rng.choice(self.layout.tutorial)
        see_also.append(link(f"../tutorial/{chapter}.html", f"Tutorial: {chapter}"))
        main = (
            f"<h1><code>{module}</code> \u2014 {escape(title_case(self.summary[module]))}</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            + "".join(entries)
            + self._code(module)
            + "<h2>See also</h2>"
            + items(see_also)
        )
        toc = [(f"{module}.{n}", f"{n}()") for n in self.api[module]]
        self._page(path, module, main, toc=toc, source=f"/_sources/library/{module}.txt")

    def _indices(self) -> None:
        self.prose.new_page()
        entries = sorted((n, m) for m in self.layout.modules for n in self.api[m])
        main = "<h1>Index</h1>" + items(
            f"{link(f'library/{m}.html#{m}.{n}', f'{n}()')} (in module {m})" for n, m in entries
        )
        self._page("/genindex.html", "Index", main)
        main = "<h1>Module Index</h1>" + items(
            f"{link(f'library/{m}.html', m)} <em>{escape(self.summary[m])}</em>" for m in self.layout.modules
        )
        main += f"<p>{self.prose.paragraph()}</p>"
        self._page("/py-modindex.html", "Module Index", main)

    def _search(self) -> None:
        self.prose.new_page()
        form = (
            '<form action="" method="get"><input type="text" name="q" size="40">'
            '<input type="submit" value="search"></form>'
        )
        main = "<h1>Search</h1>" + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(4)) + form
        self._page("/search.html", "Search", main)
        for query in self.layout.searches:
            hits = [query] + self.rng.sample([m for m in self.layout.modules if m != query], 4)
            results = items(f"{link(f'library/{m}.html', m)} \u2014 {escape(self.summary[m])}" for m in hits)
            more = "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            page = f"<h1>Search results for \u201c{escape(query)}\u201d</h1>{form}{results}{more}"
            self._page(f"/search.html?q={query}", "Search", page)

    def _about(self) -> None:
        self.prose.new_page()
        friends = items(link(ext(h), label) for h, label in self.site.friends)
        main = (
            "<h1>About these documents</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
            + f"<h2>Friends of the project</h2>{friends}"
        )
        self._page("/about.html", "About", main)
        if self.site.mirrors:
            mirrors = items(link(ext(h), f"http://{h}/") for h in self.site.mirrors)
        else:
            mirrors = "<p>There are currently no official mirrors.</p>"
        main = (
            "<h1>Mirrors</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
            + mirrors
            + f"<p>{self.prose.paragraph()}</p>"
        )
        self._page("/mirrors.html", "Mirrors", main)


def docs_site(layout: DocsLayout, site: DocsSite, rng: random.Random) -> dict[str, Resource]:
    """Every resource of a documentation site with `layout`, written from `rng`."""
    return _DocsWriter(layout, site, rng).build()
