"""A university computer-science department: people, courses, research, news."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..markup import escape, ext, items, link, page_resource, rel, robots
from ..model import Resource
from ..names import ALUMNI, DOCS, HOMEPAGE
from ..text import Prose, slug, title_case
from ..vocab import UNIVERSITY

_RANKS = ("Professor", "Associate Professor", "Assistant Professor", "Senior Lecturer", "Lecturer", "Research Fellow")
_VENUES = ("Proc. SIGMOD", "Proc. ICML", "Journal of Algorithms", "Proc. USENIX Security", "Proc. WWW", "ACM Computing Surveys")


@dataclass(frozen=True)
class _Person:
    name: str
    rank: str
    path: str


class _UniversityWriter:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prose = Prose("university", rng)
        self.resources: dict[str, Resource] = {}
        self.people = self._draw_people(12)
        numbers = sorted(rng.sample(range(101, 499), 10))
        self.courses = {f"/courses/cs{n}.html": f"CS {n}: {self.prose.title()}" for n in numbers}
        self.groups = {f"/research/{g}.html": title_case(f"{g} group") for g in rng.sample(UNIVERSITY.nouns, 5)}
        self.news = {f"/news/2024/{slug(t)}.html": t for t in (self.prose.title() for _ in range(6))}

    def _draw_people(self, count: int) -> list[_Person]:
        people: dict[str, _Person] = {}
        while len(people) < count:
            name = self.prose.person()
            people.setdefault(name, _Person(name, self.rng.choice(_RANKS), f"/people/{slug(name)}.html"))
        return sorted(people.values(), key=lambda p: p.name.split()[-1])

    def _page(self, path: str, title: str, main: str) -> None:
        nav = items(
            link(p, label)
            for p, label in (
                ("/", "Home"),
                ("/people/index.html", "People"),
                ("/courses/index.html", "Courses"),
                ("/research/index.html", "Research"),
                ("/news/index.html", "News"),
                ("/about.html", "About"),
            )
        )
        footer = (
            "Department of Computer Science, Northfield University, 12 College Road. "
            + link(rel(path, "/contact.html"), "Contact")
            + " \u00b7 "
            + link("/intranet/index.html", "Staff intranet")
        )

        def frame(content: str) -> str:
            return (
                f'<div id="banner"><span>Northfield University</span> \u203a <strong>Computer Science</strong></div>\n'
                f'<div id="menu">{nav}</div>\n<div id="content">\n{content}\n</div>\n<div id="footer"><p>{footer}</p></div>'
            )

        title = f"{title} - Computer Science - Northfield University"
        self.resources[path] = page_resource(title, main, frame, self.prose.paragraph)

    def build(self) -> dict[str, Resource]:
        for person in self.people:
            self._person(person)
        for path, title in self.courses.items():
            self._course(path, title)
        for path, title in self.groups.items():
            self._group(path, title)
        for path, title in self.news.items():
            self._news_item(path, title)
        self._indexes()
        self._front()
        self._about()
        self._intranet()
        self.resources["/robots.txt"] = robots("/intranet/")
        return self.resources

    def _paragraphs(self, count: int) -> str:
        return "".join(f"<p>{p}</p>" for p in self.prose.paragraphs(count))

    def _person(self, person: _Person) -> None:
        self.prose.new_page()
        groups = self.rng.sample(sorted(self.groups), 2)
        taught = self.rng.sample(sorted(self.courses), 2)
        papers = [
            f"{self.prose.person()}, {person.name}. <em>{escape(self.prose.title())}</em>. "
            f"{self.rng.choice(_VENUES)}, {self.rng.randint(2012, 2024)}."
            for _ in range(self.rng.randint(3, 6))
        ]
        email = slug(person.name).replace("-", ".") + "@cs.northfield.edu"
        main = (
            f"<h1>{escape(person.name)}</h1><p class=\"rank\">{person.rank}</p>"
            f'<p>Office {self.rng.randint(100, 450)}, {link(f"mailto:{email}", email)}</p>'
            + self._paragraphs(2)
            + "<h2>Research interests</h2>"
            + items(link(rel(person.path, g), self.groups[g]) for g in groups)
            + "<h2>Teaching</h2>"
            + items(link(rel(person.path, c), self.courses[c]) for c in taught)
            + "<h2>Selected publications</h2>"
            + items(papers, "ol")
        )
        self._page(person.path, person.name, main)

    def _course(self, path: str, title: str) -> None:
        self.prose.new_page()
        teacher = self.rng.choice(self.people)
        earlier = [c for c in self.courses if c < path]
        prereq = self.rng.choice(earlier) if earlier else None
        weeks = "".join(f"<tr><td>{w}</td><td>{escape(self.prose.phrase(4))}</td></tr>" for w in range(1, 13))
        main = (
            f"<h1>{escape(title)}</h1>"
            f"<p>Taught by {link(rel(path, teacher.path), teacher.name)}.</p>"
            + (f"<p>Prerequisite: {link(rel(path, prereq), self.courses[prereq])}</p>" if prereq else "")
            + self._paragraphs(2)
            + f"<h2>Schedule</h2><table><tr><th>Week</th><th>Topic</th></tr>{weeks}</table>"
            + "<h2>Assessment</h2>"
            + f"<p>{self.prose.paragraph()}</p>"
        )
        self._page(path, title, main)

    def _group(self, path: str, title: str) -> None:
        self.prose.new_page()
        members = self.rng.sample(self.people, 4)
        main = (
            f"<h1>{escape(title)}</h1>"
            + self._paragraphs(3)
            + "<h2>Members</h2>"
            + items(link(rel(path, p.path), p.name) for p in members)
            + "<h2>Software</h2>"
            + f"<p>Our prototypes are written in {link(ext(DOCS), 'Pyref')}. {self.prose.sentence()}</p>"
            + "<h2>Projects</h2>"
            + items(f"<strong>{escape(self.prose.title())}</strong>: {self.prose.sentence()}" for _ in range(3))
        )
        self._page(path, title, main)

    def _news_item(self, path: str, title: str) -> None:
        self.prose.new_page()
        person = self.rng.choice(self.people)
        main = (
            f"<h1>{escape(title)}</h1><p class=\"date\">{self.rng.randint(1, 28)} "
            f"{self.rng.choice(('March', 'May', 'June', 'October'))} 2024</p>"
            + self._paragraphs(self.rng.randint(4, 5))
            + f"<p>Contact: {link(rel(path, person.path), person.name)}. {link('../index.html', 'All news')}</p>"
        )
        self._page(path, title, main)

    def _indexes(self) -> None:
        self.prose.new_page()
        self._page(
            "/people/index.html",
            "People",
            "<h1>People</h1>"
            + self._paragraphs(2)
            + items(f"{link(p.path.rsplit('/', 1)[1], p.name)}, {p.rank}" for p in self.people),
        )
        self.prose.new_page()
        self._page(
            "/courses/index.html",
            "Courses",
            "<h1>Courses</h1>" + self._paragraphs(2) + items(link(rel("/courses/index.html", c), t) for c, t in self.courses.items()),
        )
        self.prose.new_page()
        self._page(
            "/research/index.html",
            "Research",
            "<h1>Research</h1>"
            + self._paragraphs(2)
            + items(f"{link(rel('/research/index.html', g), t)}: {self.prose.sentence()}" for g, t in self.groups.items()),
        )
        self.prose.new_page()
        self._page(
            "/news/index.html",
            "News",
            "<h1>News</h1>" + self._paragraphs(2) + items(link(rel("/news/index.html", n), t) for n, t in self.news.items()),
        )

    def _front(self) -> None:
        self.prose.new_page()
        main = (
            "<h1>Department of Computer Science</h1>"
            + self._paragraphs(3)
            + "<h2>Latest news</h2>"
            + items(link(rel("/", n), t) for n, t in list(self.news.items())[:3])
            + "<h2>Study with us</h2>"
            + f"<p>{self.prose.paragraph()} {link('courses/index.html', 'See all courses')}.</p>"
        )
        self._page("/", "Home", main)

    def _about(self) -> None:
        self.prose.new_page()
        main = (
            "<h1>About the department</h1>"
            + self._paragraphs(3)
            + f"<p>The alumni association keeps an {link(ext(ALUMNI), 'archived copy of this site')}.</p>"
            + f"<p>Former students keep in touch; see for example {link(ext(HOMEPAGE), 'Ellis Grant')}.</p>"
        )
        self._page("/about.html", "About", main)
        self.prose.new_page()
        main = (
            "<h1>Contact</h1>"
            + self._paragraphs(3)
            + f'<p>Email {link("mailto:office@cs.northfield.edu", "office@cs.northfield.edu")}.</p>'
        )
        self._page("/contact.html", "Contact", main)

    def _intranet(self) -> None:
        """Pages robots.txt keeps crawlers out of; served, so a rude crawler would get them."""
        for path in ("/intranet/index.html", "/intranet/rooms.html"):
            self.prose.new_page()
            self._page(path, "Intranet", f"<h1>Intranet</h1>{self._paragraphs(2)}" + link("rooms.html", "Room bookings"))


def university_site(rng: random.Random) -> dict[str, Resource]:
    """Every resource of the department's site."""
    return _UniversityWriter(rng).build()
