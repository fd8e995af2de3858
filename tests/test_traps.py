"""Crawler-trap detection: URL patterns and per-host limits (no network)."""

from __future__ import annotations

import pytest

from mirrorscope.detectors.traps import TrapLimits, TrapMonitor, calendar_like, host_trap_verdict, url_trap_reasons


def codes(url: str, limits: TrapLimits = TrapLimits()) -> list[str]:
    return [r.code for r in url_trap_reasons(url, limits)]


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.python.org/3/library/os.path.html#os.path.join",
        "https://www.example.org/2024/05/harbour-festival-returns.html",
        "https://github.com/python/cpython/commit/4b7e2c1f9a0d3e5b6c8a7f1e2d3c4b5a6f7e8d9c",
        "https://shop.example/search?q=kettle&page=3&sort=price",
        "https://forum.example/thread/1234/5/",
        "https://www.example.org/a/b/c/d/e/f/g/h/i/j/k/l/index.html",
        "https://news.example/sport/football/sport/",
        "https://events.example/calendar/2026/12/",
        "https://events.example/?month=2026-12",
    ],
)
def test_ordinary_urls_are_not_traps(url: str) -> None:
    assert url_trap_reasons(url) == []


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://x.example/page?" + "&".join(f"f{i}=value{i}" for i in range(60)), "url-length"),
        ("https://x.example/" + "/".join(f"d{i}" for i in range(21)) + "/", "path-depth"),
        ("https://x.example/docs/api/docs/api/docs/api/", "repeated-segment"),
        ("https://x.example/images/images/images/logo.png", "repeated-segment"),
        ("https://x.example/shop/item.php?id=7&sid=a8f5f167f44f4964e6c998dee827110c", "session-id"),
        ("https://x.example/cart;jsessionid=0AB1C2D3E4F5?x=1", "session-id"),
        ("https://x.example/index.php?PHPSESSID=abc", "session-id"),
        ("https://x.example/view?token=550e8400-e29b-41d4-a716-446655440000", "session-id"),
        ("https://x.example/view?s=0123456789abcdef0123456789abcdef01", "session-id"),
        ("https://events.example/calendar/1066/10/14/", "calendar-year"),
        ("https://events.example/calendar/2999/01/", "calendar-year"),
        ("https://events.example/events?year=1712", "calendar-year"),
    ],
)
def test_trap_urls(url: str, code: str) -> None:
    reasons = url_trap_reasons(url)
    assert [r.code for r in reasons] == [code]
    assert str(reasons[0])  # a readable reason with value and threshold


def test_reasons_state_value_and_threshold() -> None:
    (depth,) = url_trap_reasons("https://x.example/" + "a" * 3 + "/" + "/".join(f"d{i}" for i in range(24)))
    assert str(depth) == "path segments 25 >= 21"
    (year,) = url_trap_reasons("https://x.example/diary/1800/01/")
    assert str(year) == "calendar year 1800 <= 1899"
    assert codes("https://x.example/" + "x" * 600, TrapLimits(max_url_length=1000)) == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://events.example/calendar/2026/12/", True),
        ("https://events.example/calendar/2026/12/05/", True),
        ("https://blog.example/2026/12/index.html", True),
        ("https://blog.example/archive/2026-12-05", True),
        ("https://events.example/whats-on?month=12&year=2026", True),
        ("https://events.example/day?date=2026-12-05", True),
        ("https://blog.example/2024/05/harbour-festival-returns.html", False),
        ("https://forum.example/thread/1234/5/", False),
        ("https://shop.example/item/2026", False),
    ],
)
def test_calendar_like(url: str, expected: bool) -> None:
    assert calendar_like(url) is expected


def months(start_year: int, count: int) -> list[str]:
    out, year, month = [], start_year, 12
    for _ in range(count):
        out.append(f"http://events.harbourtown-arts.org/calendar/{year}/{month:02d}/")
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return out


def test_an_infinite_calendar_is_cut_at_the_host_cap_and_reported_as_a_trap() -> None:
    monitor = TrapMonitor(TrapLimits(max_calendar_urls=100))
    host = "events.harbourtown-arts.org"
    admitted = 0
    for url in months(2026, 150):  # "previous month" followed 150 times
        if monitor.refusal(host, url) is None:
            monitor.admit(host, url)
            admitted += 1
    assert admitted == 100
    refusal = monitor.refusal(host, months(2014, 1)[0])
    assert refusal is not None and refusal.code == "calendar"
    # The rest of the host, and other hosts' calendars, are untouched.
    assert monitor.refusal(host, f"http://{host}/venues/the-old-granary.html") is None
    assert monitor.refusal("www.harbourtown-gazette.com", "http://www.harbourtown-gazette.com/2024/05/") is None
    verdict = monitor.verdict(host, pages=124)
    assert verdict.is_trap and [r.code for r in verdict.reasons] == ["calendar"]
    assert verdict.messages == ["calendar URLs 100 >= 100"]
    assert not monitor.verdict("www.harbourtown-gazette.com", pages=35).is_trap


def test_a_news_archive_of_monthly_pages_is_not_a_trap() -> None:
    monitor = TrapMonitor()
    host = "www.harbourtown-gazette.com"
    for year in range(2018, 2026):
        for month in range(1, 13):
            url = f"http://{host}/{year}/{month:02d}/"
            assert monitor.refusal(host, url) is None
            monitor.admit(host, url)
    assert not monitor.verdict(host, pages=400).is_trap


def test_hosts_whose_new_pages_are_near_duplicates() -> None:
    trap = host_trap_verdict("shop.example", pages=300, new_pages=50, duplicate_rate=0.92)
    assert [r.code for r in trap.reasons] == ["duplicate-new-pages"]
    assert not host_trap_verdict("shop.example", pages=300, new_pages=50, duplicate_rate=0.3).is_trap
    assert not host_trap_verdict("shop.example", pages=10, new_pages=5, duplicate_rate=1.0).is_trap  # too few to tell


def test_the_per_host_page_cap() -> None:
    limits = TrapLimits(max_host_pages=500)
    assert [r.code for r in host_trap_verdict("big.example", pages=500, limits=limits).reasons] == ["page-cap"]
    assert not host_trap_verdict("big.example", pages=499, limits=limits).is_trap


def test_a_calendar_is_not_walked_from_its_dates_or_its_index() -> None:
    monitor = TrapMonitor()
    host = "events.example"
    days = [f"http://{host}/calendar/2026/12/{d:02d}/" for d in range(1, 32)]
    months_ = [f"http://{host}/calendar/2026/11/", f"http://{host}/calendar/2027/01/"]
    # The index links a month of days under its own directory: all cut.
    assert monitor.walking_calendar(host, f"http://{host}/calendar/", days + months_) == days + months_
    # A day page's links to other dates are the calendar's own navigation.
    assert monitor.walking_calendar(host, days[4], [days[3], days[5], f"http://{host}/events/gig.html"]) == [days[3], days[5]]
    # An event linking to its day is followed, and so is a post's sidebar of months.
    assert monitor.walking_calendar(host, f"http://{host}/events/gig.html", [days[6]]) == []
    sidebar = [f"http://{host}/2024/{m:02d}/" for m in range(1, 13)]
    assert monitor.walking_calendar(host, f"http://{host}/2024/05/a-post.html", sidebar) == []
    # A front page listing its months is not a calendar index (its directory is the root).
    assert monitor.walking_calendar(host, f"http://{host}/", sidebar) == []
    # A few dates under an archive page (fewer than a week's) are followed.
    assert monitor.walking_calendar(host, f"http://{host}/archive/", [f"http://{host}/archive/2024/0{m}/" for m in range(1, 6)]) == []
    assert monitor.calendar_walk[host] == 35
    verdict = monitor.verdict(host, pages=40)
    assert verdict.is_trap and verdict.messages == ["calendar links on calendar pages 35 >= 20"]
