"""A recipes site: category directories, recipe pages, technique guides."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..markup import escape, ext, items, link, page_resource, rel, robots
from ..model import Resource
from ..names import NEWS, PORTAL
from ..text import Prose, slug, title_case
from ..vocab import COOKING

_DISHES = {
    "breakfast": ("pancakes", "porridge", "muffins", "hash", "frittata", "granola"),
    "soups": ("soup", "broth", "chowder", "bisque", "minestrone", "potage"),
    "mains": ("stew", "curry", "risotto", "traybake", "pie", "gratin"),
    "baking": ("loaf", "focaccia", "scones", "buns", "flatbread", "brioche"),
    "desserts": ("tart", "pudding", "crumble", "cake", "fool", "custard"),
}
_UNITS = ("g", "ml", "tbsp", "tsp", "cups", "pinch of", "handful of", "large", "small")


@dataclass(frozen=True)
class _Recipe:
    category: str
    title: str
    path: str
    minutes: int


class _RecipesWriter:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prose = Prose("cooking", rng)
        self.resources: dict[str, Resource] = {}
        self.recipes = self._draw_recipes()
        self.techniques = [f"how-to-{v}" for v in rng.sample(COOKING.verbs, 5)]

    def _draw_recipes(self) -> list[_Recipe]:
        recipes = []
        used: set[str] = set()
        for category, dishes in _DISHES.items():
            for dish in self.rng.sample(dishes, self.rng.randint(5, 6)):
                title = title_case(f"{self.prose.adjective()} {self.prose.noun()} and {self.prose.noun()} {dish}")
                name = slug(title)
                while name in used:
                    name += "-2"
                used.add(name)
                minutes = self.rng.randrange(10, 180, 5)
                recipes.append(_Recipe(category, title, f"/recipes/{category}/{name}.html", minutes))
        return recipes

    def _page(self, path: str, title: str, main: str, crumbs: Sequence[tuple[str, str]] = ()) -> None:
        nav = items(
            link(p, label)
            for p, label in (("/", "Home"), ("/recipes/", "Recipes"), ("/techniques/", "Techniques"), ("/about.html", "About"))
        )
        trail = " \u203a ".join([link(rel(path, "/"), "Home")] + [link(rel(path, p), t) for p, t in crumbs])
        side = "<h3>Categories</h3>" + items(link(rel(path, f"/recipes/{c}/"), c.title()) for c in _DISHES)

        def frame(content: str) -> str:
            return (
                f'<header class="masthead"><p class="brand">Salt &amp; Simmer</p>'
                f'<p class="tagline">Home cooking, one pot at a time</p><nav>{nav}</nav></header>\n'
                f'<p class="crumbs">{trail}</p>\n<main>\n{content}\n</main>\n<aside>{side}</aside>\n'
                f'<footer><p>\u00a9 Salt &amp; Simmer. Listed on {link(ext(PORTAL), "LinkAtlas")}.</p></footer>'
            )

        self.resources[path] = page_resource(f"{title} | Salt & Simmer", main, frame, self.prose.paragraph)

    def build(self) -> dict[str, Resource]:
        for recipe in self.recipes:
            self._recipe(recipe)
        for category in _DISHES:
            self._category(category)
        self._listing("/recipes/", "All recipes", sorted(self.recipes, key=lambda r: r.title))
        self._listing("/recipes/?sort=quick", "Quickest recipes", sorted(self.recipes, key=lambda r: (r.minutes, r.title)))
        self._techniques()
        self._front()
        self._about()
        self.resources["/robots.txt"] = robots()
        return self.resources

    def _ingredients(self) -> str:
        lines = []
        for _ in range(self.rng.randint(6, 12)):
            amount = self.rng.choice((1, 2, 3, 4, 50, 100, 150, 200, 250, 400))
            lines.append(f"{amount} {self.rng.choice(_UNITS)} {self.prose.adjective()} {self.prose.noun()}")
        return items(lines)

    def _recipe(self, recipe: _Recipe) -> None:
        self.prose.new_page()
        others = self.rng.sample([r for r in self.recipes if r is not recipe], 3)
        technique = self.rng.choice(self.techniques)
        method = items((self.prose.instruction() for _ in range(self.rng.randint(6, 10))), "ol")
        main = (
            f"<article><h1>{escape(recipe.title)}</h1>"
            f'<p class="meta">Serves {self.rng.randint(2, 8)} \u00b7 Ready in {recipe.minutes} minutes \u00b7 '
            f'{link("#recipe", "Jump to recipe")}</p>'
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(self.rng.randint(2, 4)))
            + f'<section id="recipe"><h2>Ingredients</h2>{self._ingredients()}<h2>Method</h2>{method}'
            + f"<h2>Notes</h2><p>{self.prose.paragraph(2, 4)}</p>"
            + f'<p>New to this? Read {link(f"/techniques/{technique}.html", technique.replace("-", " "))}.</p></section>'
            + "<h2>You might also like</h2>"
            + items(link(rel(recipe.path, r.path), r.title) for r in others)
            + "</article>"
        )
        crumbs = [("/recipes/", "Recipes"), (f"/recipes/{recipe.category}/", recipe.category.title())]
        self._page(recipe.path, recipe.title, main, crumbs)

    def _teaser(self, source: str, recipe: _Recipe) -> str:
        return f"{link(rel(source, recipe.path), recipe.title)} <span>({recipe.minutes} min)</span> \u2014 {escape(self.prose.sentence())}"

    def _category(self, category: str) -> None:
        path = f"/recipes/{category}/"
        self.prose.new_page()
        chosen = [r for r in self.recipes if r.category == category]
        main = (
            f"<h1>{category.title()}</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(2))
            + items(self._teaser(path, r) for r in chosen)
        )
        self._page(path, category.title(), main, [("/recipes/", "Recipes")])

    def _listing(self, path: str, heading: str, recipes: list[_Recipe]) -> None:
        self.prose.new_page()
        sorts = f'<p>Sort: {link("/recipes/", "by name")} \u00b7 {link("/recipes/?sort=quick", "quickest first")}</p>'
        main = f"<h1>{heading}</h1>{sorts}<p>{self.prose.paragraph()}</p>" + items(self._teaser(path, r) for r in recipes)
        self._page(path, heading, main, [("/recipes/", "Recipes")])

    def _techniques(self) -> None:
        for name in self.techniques:
            path = f"/techniques/{name}.html"
            self.prose.new_page()
            heading = title_case(name.replace("-", " "))
            examples = self.rng.sample(self.recipes, 3)
            main = (
                f"<h1>{heading}</h1>"
                + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
                + items((self.prose.instruction() for _ in range(6)), "ol")
                + "<h2>Try it in</h2>"
                + items(link(rel(path, r.path), r.title) for r in examples)
            )
            self._page(path, heading, main, [("/techniques/", "Techniques")])
        self.prose.new_page()
        main = (
            "<h1>Techniques</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
            + items(link(f"{n}.html", title_case(n.replace("-", " "))) for n in self.techniques)
        )
        self._page("/techniques/", "Techniques", main)

    def _front(self) -> None:
        self.prose.new_page()
        latest = self.rng.sample(self.recipes, 8)
        main = (
            "<h1>Salt &amp; Simmer</h1>"
            + f"<p>{self.prose.paragraph()}</p>"
            + "<h2>Latest recipes</h2>"
            + items(self._teaser("/", r) for r in latest)
            + "<h2>Browse</h2>"
            + items(link(f"recipes/{c}/", c.title()) for c in _DISHES)
            + f"<p>{self.prose.paragraph()}</p>"
        )
        self._page("/", "Home", main)

    def _about(self) -> None:
        self.prose.new_page()
        main = (
            "<h1>About Salt &amp; Simmer</h1>"
            + "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(3))
            + f"<p>We wrote about the harbour market for {link(ext(NEWS), 'the Harbourtown Gazette')}.</p>"
            + f'<p>Write to us at {link("mailto:kitchen@saltandsimmer.com", "kitchen@saltandsimmer.com")}.</p>'
        )
        self._page("/about.html", "About", main)


def recipes_site(rng: random.Random) -> dict[str, Resource]:
    """Every resource of the recipes site."""
    return _RecipesWriter(rng).build()
