"""An arts-events site with an infinite calendar: a crawler trap on a good host.

Everything outside ``/calendar/`` is an ordinary small site. Under it,
``/calendar/<year>/<mm>/`` (a month) and ``/calendar/<year>/<mm>/<dd>/`` (a
day) exist for every year from 1 to 10**12 - 1, each linking to the previous
and next month or day, so following links never ends. ``/calendar/`` itself
shows the site's current month. Calendar pages are generated per request from
the date alone (thread-safe, deterministic, bounded work per request).
"""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..markup import escape, items, link, page_resource
from ..model import Resource
from ..text import Prose
from .generic import SmallSite, SmallSiteWriter

CALENDAR = "/calendar/"
TODAY = (2026, 12)  # the month /calendar/ shows
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PATH = re.compile(r"/calendar/([1-9][0-9]{0,11})/(0[1-9]|1[0-2])/(?:(0[1-9]|[12][0-9]|3[01])/)?")


def month_length(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def weekday(year: int, month: int, day: int) -> int:
    """Monday 0 .. Sunday 6 for any year >= 1 (the Gregorian calendar repeats every 400 years)."""
    return datetime.date(2000 + year % 400, month, day).weekday()


def month_path(year: int, month: int) -> str:
    return f"{CALENDAR}{year}/{month:02d}/"


def day_path(year: int, month: int, day: int) -> str:
    return f"{CALENDAR}{year}/{month:02d}/{day:02d}/"


@dataclass(frozen=True)
class _Event:
    path: str
    title: str
    date: tuple[int, int, int]


class EventsWriter(SmallSiteWriter):
    """The events site; each event page names its date and links to its calendar day."""

    def __init__(self, site: SmallSite, rng: random.Random, seed: int) -> None:
        super().__init__(site, rng)
        self.seed = seed
        self.events: dict[str, _Event] = {}
        year, month = TODAY
        for path, title in self.items.get("events", []):
            y, m = (year, month) if rng.random() < 0.6 else (year + 1, 1)
            self.events[path] = _Event(path, title, (y, m, rng.randint(1, 28)))

    def menu(self) -> list[tuple[str, str]]:
        return super().menu() + [(CALENDAR, "Calendar")]

    def item_main(self, directory: str, label: str, entries: Sequence[tuple[str, str]], index: int) -> str:
        main = super().item_main(directory, label, entries, index)
        event = self.events.get(entries[index][0])
        if event is None:
            return main
        y, m, d = event.date
        when = f"{_DAYS[weekday(y, m, d)]} {d} {_MONTHS[m - 1]} {y}"
        return main + f'<p class="when">{escape(when)}, 7.30pm. {link(day_path(y, m, d), "See the day in the calendar")}</p>'

    # -- the trap -------------------------------------------------------------

    def calendar(self, path: str) -> Resource | None:
        """The calendar page at `path`, or None (404); `Host.dynamic` for the events host."""
        if path == CALENDAR:
            return self._month(*TODAY)
        match = _PATH.fullmatch(path)
        if match is None:
            return None
        year, month = int(match.group(1)), int(match.group(2))
        if match.group(3) is None:
            return self._month(year, month)
        day = int(match.group(3))
        return self._day(year, month, day) if day <= month_length(year, month) else None

    def _on(self, year: int, month: int, day: int | None = None) -> list[_Event]:
        return [e for e in self.events.values() if e.date[:2] == (year, month) and (day is None or e.date[2] == day)]

    def _calendar_page(self, path: str, title: str, main: str, key: str) -> Resource:
        prose = Prose(self.site.topic, random.Random(f"{self.seed}:calendar:{key}"))
        prose.new_page()
        return page_resource(self.full_title(title), main, lambda m: self.frame(path, m), prose.paragraph)

    def _month(self, year: int, month: int) -> Resource:
        path = month_path(year, month)
        previous = (year, month - 1) if month > 1 else (year - 1, 12)
        following = (year, month + 1) if month < 12 else (year + 1, 1)
        pager = []
        if previous[0] >= 1:
            pager.append(link(month_path(*previous), f"\u2190 {_MONTHS[previous[1] - 1]} {previous[0]}"))
        pager.append(link(month_path(*following), f"{_MONTHS[following[1] - 1]} {following[0]} \u2192"))
        cells = ["<td></td>"] * weekday(year, month, 1)
        for day in range(1, month_length(year, month) + 1):
            mark = "*" if self._on(year, month, day) else ""
            cells.append(f"<td>{link(day_path(year, month, day), f'{day}{mark}')}</td>")
        rows = "".join("<tr>" + "".join(cells[i : i + 7]) + "</tr>" for i in range(0, len(cells), 7))
        header = "<tr>" + "".join(f"<th>{d[:3]}</th>" for d in _DAYS) + "</tr>"
        listed = self._on(year, month)
        events = items(link(e.path, e.title) for e in listed) if listed else "<p>Nothing is listed for this month yet.</p>"
        title = f"{_MONTHS[month - 1]} {year}"
        main = f"<h1>What's on: {title}</h1><p>{' | '.join(pager)}</p><table class=\"calendar\">{header}{rows}</table>{events}"
        return self._calendar_page(path, title, main, f"{year}-{month}")

    def _day(self, year: int, month: int, day: int) -> Resource:
        path = day_path(year, month, day)
        if day > 1:
            previous = (year, month, day - 1)
        elif month > 1:
            previous = (year, month - 1, month_length(year, month - 1))
        else:
            previous = (year - 1, 12, 31)
        if day < month_length(year, month):
            following = (year, month, day + 1)
        else:
            following = (year, month + 1, 1) if month < 12 else (year + 1, 1, 1)
        pager = []
        if previous[0] >= 1:
            pager.append(link(day_path(*previous), "\u2190 Previous day"))
        pager.append(link(day_path(*following), "Next day \u2192"))
        pager.append(link(month_path(year, month), f"{_MONTHS[month - 1]} {year}"))
        listed = self._on(year, month, day)
        events = items(link(e.path, e.title) for e in listed) if listed else "<p>Nothing on this day.</p>"
        title = f"{_DAYS[weekday(year, month, day)]} {day} {_MONTHS[month - 1]} {year}"
        main = f"<h1>{escape(title)}</h1><p>{' | '.join(pager)}</p>{events}"
        return self._calendar_page(path, title, main, f"{year}-{month}-{day}")


def events_site(site: SmallSite, rng: random.Random, seed: int) -> tuple[dict[str, Resource], EventsWriter]:
    """The events site's stored pages, and the writer whose `calendar` generates the trap."""
    writer = EventsWriter(site, rng, seed)
    return writer.build(), writer
