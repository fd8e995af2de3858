"""The type and range of every numeric and boolean setting the crawl reads, checked once
before it starts (``check_settings``), whichever source set it: ``-s NAME=VALUE``,
``scrapy.cfg``'s settings module or the environment.

A value outside its range is refused rather than read: Scrapy would take ``abc`` for an
int as a traceback from inside the reactor, ``CONCURRENT_REQUESTS_PER_DOMAIN=0`` as a crawl
that never fetches and never ends, and a negative limit as a silent change of meaning.
The reasons for the defaults are in ``settings/__init__.py``; the bounds here are what
the settings mean (a count is at least 1, a delay at least 0, a threshold a fraction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class SettingsError(ValueError):
    """A setting of the wrong type or out of its range; the message is one line."""


@dataclass(frozen=True)
class Range:
    kind: type  # int, float or bool
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False  # the minimum itself is out of range


_COUNT = Range(int, 1)  # something there must be at least one of
_LIMIT0 = Range(int, 0)  # Scrapy's limits where 0 means none (or, for retries, no retry)
_SECONDS = Range(float, 0)
_POSITIVE = Range(float, 0, above_minimum=True)
_FRACTION = Range(float, 0, 1, above_minimum=True)
_SWITCH = Range(bool)

RANGES: dict[str, Range] = {
    # the store
    "STORE_BATCH_SIZE": _COUNT, "STORE_BATCH_LINKS": _COUNT, "STORE_FLUSH_INTERVAL": _SECONDS,
    # order, depth and politeness (Scrapy's, read by mirrorscope's components too)
    "DEPTH_LIMIT": _LIMIT0, "DEPTH_PRIORITY": Range(int), "URL_MAX_LENGTH": _COUNT, "LINKS_PER_PAGE_MAX": _COUNT,
    "CONCURRENT_REQUESTS": _COUNT, "CONCURRENT_REQUESTS_PER_DOMAIN": _COUNT, "CONCURRENT_ITEMS": _COUNT,
    "DOWNLOAD_DELAY": _SECONDS, "DOWNLOAD_TIMEOUT": _POSITIVE, "DNS_TIMEOUT": _POSITIVE,
    # 0 would be no limit: no bound on a body, nor on what a compression bomb inflates to.
    "DOWNLOAD_MAXSIZE": _COUNT, "DOWNLOAD_WARNSIZE": _LIMIT0,
    "AUTOTHROTTLE_START_DELAY": _SECONDS, "AUTOTHROTTLE_MAX_DELAY": _SECONDS,
    "AUTOTHROTTLE_TARGET_CONCURRENCY": _POSITIVE,
    "RETRY_TIMES": _LIMIT0, "REDIRECT_MAX_TIMES": _LIMIT0, "CLOSESPIDER_PAGECOUNT": _LIMIT0,
    "ROBOTSTXT_OBEY": _SWITCH, "AUTOTHROTTLE_ENABLED": _SWITCH, "COOKIES_ENABLED": _SWITCH,
    "DNSCACHE_ENABLED": _SWITCH, "DNSCACHE_SIZE": _LIMIT0, "METAREFRESH_ENABLED": _SWITCH, "HTTPERROR_ALLOW_ALL": _SWITCH,
    "HTTPPROXY_ENABLED": _SWITCH, "TELNETCONSOLE_ENABLED": _SWITCH, "REMOTE_CONTROL_ENABLED": _SWITCH,
    # name resolution
    "ALLOW_PRIVATE_ADDRESSES": _SWITCH, "RESOLVE_ONLY_HOSTS_FILE": _SWITCH,
    # parsing
    "PARSE_PROCESSES": Range(int, 0),
    # links and anchor bags
    "ANCHOR_WINDOW": _COUNT, "ANCHOR_BAGS_ENABLED": _SWITCH, "ANCHOR_BAGS_BATCH_SIZE": _COUNT,
    "ANCHOR_BAGS_INTERVAL": _SECONDS, "ANCHOR_BAGS_FLUSH_PAGES": _COUNT,
    "TERM_VECTORS_ENABLED": _SWITCH, "TERM_VECTORS_FLUSH_PAGES": _COUNT,
    # sketches and near-duplicates
    "SHINGLE_SIZE": _COUNT, "BOILERPLATE_REMOVAL": _SWITCH, "SKETCH_MIN_S": _COUNT, "SKETCH_MOD_M": _COUNT,
    "SKETCH_SEED": Range(int, 0, 2**64 - 1), "SKETCH_BATCH_SIZE": _COUNT, "SKETCH_BATCH_INTERVAL": _SECONDS,
    "DUPLICATE_THRESHOLD": _FRACTION, "CONTAINMENT_THRESHOLD": _FRACTION, "EXPAND_DUPLICATES": _SWITCH,
    # mirrors
    "MIRROR_DETECTION_ENABLED": _SWITCH, "MIRROR_DETECTION_INTERVAL": _COUNT, "MIRROR_SAMPLE_PATHS": _COUNT,
    "MIRROR_CANDIDATES_PER_HOST": _COUNT,
    # re-crawls
    "RECRAWL": _SWITCH, "RECRAWL_CONDITIONAL": _SWITCH, "AUTOTHROTTLE_304_LOWERS_DELAY": _SWITCH, "CHANGE_MOVE_THRESHOLD": _FRACTION, "CHANGE_COMPLETE_BELOW": _FRACTION,
    # the frontier
    "FRONTIER_ADMISSION": _SWITCH, "FRONTIER_HOST_QUEUE_CAP": _COUNT, "FRONTIER_DOMAIN_QUEUE_CAP": _COUNT,
    "FRONTIER_DISK_SLOTS": _COUNT, "FRONTIER_DEPTH_LOOKAHEAD": Range(int, 0), "FRONTIER_HOST_BUDGET": _COUNT, "FRONTIER_DOMAIN_BUDGET": _COUNT,
    "FRONTIER_IP_BUDGET": _COUNT, "FRONTIER_BUDGET_PER_INLINK_DOMAIN": Range(int, 0), "FRONTIER_HOST_MAX_PAGES": _COUNT,
    "FRONTIER_TRAP_MAX_URL_LENGTH": _COUNT, "FRONTIER_TRAP_MAX_PATH_SEGMENTS": _COUNT,
    "FRONTIER_TRAP_MAX_CALENDAR_URLS": _COUNT,
    # the shared frontier: a lease must outlive several heartbeats
    "FRONTIER_LEASE_TIMEOUT": _POSITIVE, "FRONTIER_HEARTBEAT_INTERVAL": _POSITIVE,
    # spam
    "SPAM_DETECTION_ENABLED": _SWITCH, "SPAM_CONFIRM_PAGES": _COUNT, "SPAM_HOST_SAMPLE": _COUNT,
    "CLOAKING_CHECK_ENABLED": _SWITCH,
    # diagnostics
    "CRAWL_SAMPLE_INTERVAL": _SECONDS,
}

_GETTERS = {int: "getint", float: "getfloat", bool: "getbool"}
_NAMES = {int: "a whole number", float: "a number", bool: "True or False"}


def _describe(rule: Range) -> str:
    bounds = []
    if rule.minimum is not None:
        bounds.append(f"{'>' if rule.above_minimum else '>='} {rule.minimum:n}")
    if rule.maximum is not None:
        bounds.append(f"<= {rule.maximum:n}")
    return " ".join([_NAMES[rule.kind], " and ".join(bounds)]).strip()


def _in_range(value: float, rule: Range) -> bool:
    if rule.kind is bool:
        return True
    if not math.isfinite(value):
        return False
    low = rule.minimum is None or value > rule.minimum or (value == rule.minimum and not rule.above_minimum)
    return low and (rule.maximum is None or value <= rule.maximum)


def check_settings(settings: Any) -> None:
    """Raise :class:`SettingsError` for the first setting of ``RANGES`` that Scrapy's own
    getter cannot read or that is out of its range."""
    for name, rule in RANGES.items():
        raw = settings.get(name)
        if raw is None:
            continue
        try:
            value = getattr(settings, _GETTERS[rule.kind])(name)
        except (TypeError, ValueError):
            value = None
        if value is None or not _in_range(value, rule):
            raise SettingsError(f"setting {name} must be {_describe(rule)}, not {raw!r}")
