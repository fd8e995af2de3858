"""Crawler traps: URL spaces without end, on hosts that need not be spam.

A trap is a host that answers an unbounded number of URLs with pages worth little: a
calendar whose "next month" never ends, session ids that make every visit a new URL,
relative links that nest a path in itself. The host may be perfectly good (an arts
centre's events calendar), so traps are reported as traps, never as spam, and the crawl
stops following the trap, not the host. Lee et al., "IRLbot: scaling to 6 billion pages
and beyond" (WWW 2008) found per-host rate limits and BFS unable to cope with such
spaces; the budget of ``detectors.budget`` bounds any host, and this module names why.

Per URL (:func:`url_trap_reasons`), each limit as the open-source crawlers set it:

``url-length``
    Longer than 512 characters. Hand-made URLs stay far below; generated ones (state in
    the query, nested redirects) run on. Browsers cap at ~2,000 (the spider refuses
    beyond ``URL_MAX_LENGTH``); this is where following stops paying.
``path-depth``
    More than 20 path segments: Heritrix's ``TooManyPathSegmentsDecideRule`` default.
``repeated-segment``
    One path segment 3 or more times (/a/b/a/b/a/): relative links resolved against a
    path that already repeats them. Nutch's default ``regex-urlfilter`` drops the same
    shape (a segment repeating three times).
``session-id``
    A query parameter or ``;param`` named like a session (sid, sessionid, jsessionid,
    phpsessid, aspsessionid, cfid, cftoken, ...), or a query value that is a long hex
    token (32+ hex digits, or a UUID): a new id per visit makes every page new. Hex in the
    *path* is left alone: commit pages and content-addressed files are real pages.
``calendar-year``
    A calendar URL (below) whose year is before 1900 or more than 10 years ahead: no
    events site lists them, a "previous year" link followed long enough produces them.

Per host (:class:`TrapMonitor` counts; :func:`host_trap_verdict` judges):

``calendar``
    100 distinct calendar URLs admitted, after which the host's further calendar URLs
    are refused: paths ending in a date with a four-digit year and two-digit month and
    day (/2026/12/, /2026/12/05/, /2026-12-05), or queries with a date parameter (month=,
    date=, year=, day=, week=).
    A news archive's monthly pages for eight years stay below; a day-by-day calendar
    passes it in three months. Posts under dated paths (/2024/05/title.html) do not end
    in a date and are not counted.
``calendar-walk``
    A calendar page's links to other calendar URLs of its host are not followed: they
    are the calendar's own "previous / next" navigation, where the trap's infinity lives.
    So are the dates below a calendar's index: a page that links 7 or more dates under
    its own directory (/calendar/ linking /calendar/2026/12/01/ ...; a week's days). Dates
    are followed from the other pages (an event linking to its day, a post's sidebar
    listing the months of its blog), so a news archive whose months are linked from its
    posts loses nothing; one reachable only through an index of its dates is cut there. A host is a
    calendar trap once 20 such links were refused: a handful of dated pages linking to
    each other is an archive; twenty that keep pointing at new dates is a calendar.
``page-cap``
    ``max_host_pages`` (100,000) pages: no host is crawled further in one crawl, however
    many in-links it has (the budget's ceiling).
``duplicate-new-pages``
    At least 80% of the host's last (at least 20) new pages are near-duplicates of its
    earlier pages: it keeps answering new URLs with the same page (empty calendar days,
    faceted listings, session copies). The rate is measured by the caller from the
    near-duplicate index.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import parse_qsl, urlsplit

from mirrorscope.detectors.spam import Reason

#: Calendar-walk URLs remembered per host: beyond them the host's calendar cap holds.
MAX_WALKED_URLS = 10_000

__all__ = ["TrapLimits", "TrapMonitor", "TrapVerdict", "calendar_like", "host_trap_verdict", "url_trap_reasons"]

_SESSION_KEYS = frozenset(
    "sid sessionid session_id sessid jsessionid phpsessid aspsessionid cfid cftoken zenid oscsid".split()
)
_HEX_TOKEN = re.compile(r"^(?:[0-9a-f]{32,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.IGNORECASE)
# A path ending in a date: /YYYY/MM/, /YYYY/MM/DD/, /YYYY-MM(-DD)/ (index pages included).
# Two-digit months and days: "/thread/1234/5/" is a forum page, not a date.
_DATE_PATH = re.compile(
    r"/(?P<year>\d{4})[/-](?:0[1-9]|1[0-2])(?:[/-](?:0[1-9]|[12]\d|3[01]))?/?(?:index\.[a-z]+)?$",
    re.IGNORECASE,
)
_DATE_KEYS = frozenset("month date year day week cal calendar".split())
_DATE_VALUE_YEAR = re.compile(r"^(\d{4})(?:[-/]\d{1,2}){0,2}$")


@dataclass(frozen=True, slots=True)
class TrapLimits:
    """The limits of the module docstring, each overridable."""

    max_url_length: int = 512
    max_path_segments: int = 20
    max_segment_repeats: int = 2
    first_year: int = 1900
    last_year: int = field(default_factory=lambda: date.today().year + 10)
    max_calendar_urls: int = 100
    max_host_pages: int = 100_000
    duplicate_rate: float = 0.8
    min_calendar_walk: int = 20
    calendar_index_links: int = 7
    min_new_pages: int = 20


def _calendar_year(path: str, query: str) -> int | None:
    """The year of a calendar URL, -1 for a dated query without a year, None otherwise."""
    match = _DATE_PATH.search(path)
    if match:
        return int(match.group("year"))
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key.lower() in _DATE_KEYS:
            year = _DATE_VALUE_YEAR.match(value)
            return int(year.group(1)) if year else -1
    return None


def calendar_like(url: str) -> bool:
    """True for a URL whose path ends in a date or whose query names a date."""
    parts = urlsplit(url)
    return _calendar_year(parts.path, parts.query) is not None


def _reason(code: str, label: str, value: float, threshold: float) -> Reason:
    return Reason(code, label, value, threshold, True, 0.0)


def url_trap_reasons(url: str, limits: TrapLimits = TrapLimits()) -> list[Reason]:
    """Why ``url`` looks like a step into a trap (empty: it does not)."""
    parts = urlsplit(url)
    reasons: list[Reason] = []
    if len(url) > limits.max_url_length:
        reasons.append(_reason("url-length", "URL length", len(url), limits.max_url_length + 1))
    path, _, params = parts.path.partition(";")
    segments = [s for s in path.split("/") if s]
    if len(segments) > limits.max_path_segments:
        reasons.append(_reason("path-depth", "path segments", len(segments), limits.max_path_segments + 1))
    if segments:
        repeats = Counter(segments).most_common(1)[0][1]
        if repeats > limits.max_segment_repeats:
            reasons.append(_reason("repeated-segment", "repetitions of a path segment", repeats, limits.max_segment_repeats + 1))
    pairs = parse_qsl(parts.query, keep_blank_values=True) + parse_qsl(params.replace(";", "&"), keep_blank_values=True)
    sessions = sum(1 for k, v in pairs if k.lower() in _SESSION_KEYS or _HEX_TOKEN.match(v))
    if sessions:
        reasons.append(_reason("session-id", "session-id parameters", sessions, 1))
    year = _calendar_year(parts.path, parts.query)
    if year is not None and year >= 0 and not limits.first_year <= year <= limits.last_year:
        late = year > limits.last_year
        bound = limits.last_year + 1 if late else limits.first_year - 1
        reasons.append(Reason("calendar-year", "calendar year", year, bound, late, 0.0))
    return reasons


@dataclass(frozen=True, slots=True)
class TrapVerdict:
    """A host's trap reasons; a trap when there is any."""

    host: str
    reasons: tuple[Reason, ...]

    @property
    def is_trap(self) -> bool:
        return bool(self.reasons)

    @property
    def messages(self) -> list[str]:
        return [str(r) for r in self.reasons]


def host_trap_verdict(
    host: str,
    *,
    pages: int,
    calendar_urls: int = 0,
    calendar_walk: int = 0,
    new_pages: int = 0,
    duplicate_rate: float | None = None,
    limits: TrapLimits = TrapLimits(),
) -> TrapVerdict:
    """Is ``host`` a trap? ``pages`` fetched, ``calendar_urls`` distinct calendar URLs
    admitted, ``calendar_walk`` calendar links on calendar pages refused, and of its last ``new_pages`` new pages the share ``duplicate_rate`` that
    were near-duplicates of its earlier pages."""
    reasons: list[Reason] = []
    if pages >= limits.max_host_pages:
        reasons.append(_reason("page-cap", "pages", pages, limits.max_host_pages))
    if calendar_urls >= limits.max_calendar_urls:
        reasons.append(_reason("calendar", "calendar URLs", calendar_urls, limits.max_calendar_urls))
    if calendar_walk >= limits.min_calendar_walk:
        reasons.append(_reason("calendar-walk", "calendar links on calendar pages", calendar_walk, limits.min_calendar_walk))
    if duplicate_rate is not None and new_pages >= limits.min_new_pages and duplicate_rate >= limits.duplicate_rate:
        reasons.append(_reason("duplicate-new-pages", "near-duplicate share of new pages", duplicate_rate, limits.duplicate_rate))
    return TrapVerdict(host, tuple(reasons))


class TrapMonitor:
    """Admission-time trap checks: :func:`url_trap_reasons` plus each host's calendar cap.

    Keeps one counter per host (distinct calendar URLs admitted), so memory grows with
    hosts, not URLs; the caller admits each URL once (the spider de-duplicates).
    """

    def __init__(self, limits: TrapLimits = TrapLimits()) -> None:
        self.limits = limits
        self.calendar_urls: Counter[str] = Counter()
        self.calendar_walk: Counter[str] = Counter()
        # The walk's URLs per host (up to MAX_WALKED_URLS): links are stored whether
        # followed or not, and a refill from the store must not take the walk after all.
        self.walked: dict[str, set[str]] = {}

    def refusal(self, host: str, url: str) -> Reason | None:
        """The first reason not to follow ``url`` on ``host``, or None."""
        reasons = url_trap_reasons(url, self.limits)
        if reasons:
            return reasons[0]
        if self.calendar_urls[host] >= self.limits.max_calendar_urls and calendar_like(url):
            return _reason("calendar", "calendar URLs", self.calendar_urls[host], self.limits.max_calendar_urls)
        return None

    def walking_calendar(self, host: str, source_url: str, urls: list[str]) -> list[str]:
        """Of the links ``urls`` of ``host`` on its page ``source_url``, those that walk its
        calendar (counted per host): every date linked from a date, and the dates below a
        calendar's index (a page under whose directory it links ``calendar_index_links``
        dates or more)."""
        dates = [url for url in urls if calendar_like(url)]
        if not dates:
            return []
        if calendar_like(source_url):
            steps = dates
        else:
            directory = urlsplit(source_url).path.rsplit("/", 1)[0] + "/"
            steps = [url for url in dates if urlsplit(url).path.startswith(directory)] if directory != "/" else []
            if len(steps) < self.limits.calendar_index_links:
                return []
        self.calendar_walk[host] += len(steps)
        walked = self.walked.setdefault(host, set())
        if len(walked) < MAX_WALKED_URLS:
            walked.update(steps)
        return steps

    def was_walked(self, host: str, url: str) -> bool:
        """Whether ``url`` was refused as a step of ``host``'s calendar walk."""
        return url in self.walked.get(host, ())

    def admit(self, host: str, url: str) -> None:
        """Count an admitted URL of ``host`` (call after :meth:`refusal` said None)."""
        if calendar_like(url):
            self.calendar_urls[host] += 1

    def hosts(self) -> set[str]:
        """Hosts with calendar URLs admitted or refused."""
        return set(self.calendar_urls) | set(self.calendar_walk)

    def verdict(self, host: str, pages: int, new_pages: int = 0, duplicate_rate: float | None = None) -> TrapVerdict:
        """:func:`host_trap_verdict` with the calendar URLs counted here."""
        return host_trap_verdict(
            host, pages=pages, calendar_urls=self.calendar_urls[host], calendar_walk=self.calendar_walk[host],
            new_pages=new_pages,
            duplicate_rate=duplicate_rate, limits=self.limits,
        )
