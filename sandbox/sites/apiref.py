"""A good documentation host with a general index of hundreds of links.

Spam detectors that count links must not flag it: the index links to every
documented function (anchors on module pages), as real API references do.
"""

from __future__ import annotations

import random

from ..markup import escape, items, link, page_resource, robots
from ..model import Resource
from ..text import Prose, title_case
from ..vocab import PROGRAMMING

MIN_INDEX_LINKS = 300


def apiref_site(rng: random.Random, modules: int = 40, functions: tuple[int, int] = (8, 11)) -> dict[str, Resource]:
    """Front page, module index, general index (>= MIN_INDEX_LINKS links) and one page per module."""
    prose = Prose("programming", rng)
    names = sorted(rng.sample(PROGRAMMING.nouns, modules))
    api: dict[str, list[str]] = {}
    for module in names:
        entries: set[str] = set()
        count = rng.randint(*functions)
        while len(entries) < count:
            entries.add(f"{rng.choice(PROGRAMMING.verbs)}_{rng.choice(PROGRAMMING.nouns)}")
        api[module] = sorted(entries)
    summary = {m: prose.phrase(4) for m in names}
    resources: dict[str, Resource] = {}

    def page(path: str, title: str, main: str) -> None:
        top = " | ".join([link("/", "Tessera DB"), link("/modindex.html", "Modules"), link("/genindex.html", "Index")])
        resources[path] = page_resource(
            f"{title} \u2014 Tessera DB 5.2 API reference",
            main,
            lambda m: f'<div class="top">{top}</div>\n<div class="body">\n{m}\n</div>\n<div class="footer">Tessera DB, released under the Apache License.</div>',
            prose.paragraph,
        )

    for module in names:
        prose.new_page()
        entries = "".join(
            f'<dl class="function"><dt id="{module}.{f}"><code>{module}.{f}({escape(", ".join(rng.sample(PROGRAMMING.nouns, 2)))})</code>'
            f'<a class="headerlink" href="#{module}.{f}">\u00b6</a></dt><dd><p>{prose.paragraph(1, 3)}</p></dd></dl>'
            for f in api[module]
        )
        others = rng.sample([m for m in names if m != module], 3)
        see = items(link(f"{m}.html#{m}.{api[m][0]}", f"{m}.{api[m][0]}()") for m in others)
        main = f"<h1><code>tessera.{module}</code> \u2014 {escape(title_case(summary[module]))}</h1><p>{prose.paragraph()}</p>{entries}<h2>See also</h2>{see}"
        page(f"/api/{module}.html", module, main)
    prose.new_page()
    entries = sorted((f, m) for m in names for f in api[m])
    index = items(f"{link(f'api/{m}.html#{m}.{f}', f'{f}()')} (in {link(f'api/{m}.html', m)})" for f, m in entries)
    page("/genindex.html", "General index", f"<h1>General index</h1><p>{prose.paragraph()}</p>{index}")
    prose.new_page()
    modindex = items(f"{link(f'api/{m}.html', m)} \u2014 {escape(summary[m])}" for m in names)
    page("/modindex.html", "Module index", f"<h1>Module index</h1>{modindex}")
    prose.new_page()
    front = (
        f"<h1>Tessera DB 5.2 API reference</h1><p>{prose.paragraph()}</p>"
        + items([link("genindex.html", "General index"), link("modindex.html", "Module index")])
        + f"<p>{prose.paragraph()}</p>"
    )
    page("/", "Tessera DB", front)
    resources["/robots.txt"] = robots()
    return resources
