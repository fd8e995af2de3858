"""Values made storable before they reach the database.

A crawled string can hold what a column refuses: a NUL (PostgreSQL's text cannot hold
one: a NUL in one page's ``Content-Type`` failed its whole batch), a lone surrogate left
by decoding (no driver encodes one), or more characters than its VARCHAR (a link to a
400-character host name). :func:`storable` replaces the first two with U+FFFD and cuts
the last to the column's length, taken from the models. A cut value ends in
:data:`CUT_MARK` and a hash of the whole, so two long values stay two and a cut one is
never taken for a real one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from itertools import chain
from operator import attrgetter
from typing import Any

from sqlalchemy import Column

from mirrorscope.storage.models import Host, Link, Page
from mirrorscope.storage.records import LinkRecord, PageRecord

#: What a cut value ends with, before its hash: '#' is in no host name and in no URL
#: the crawl normalised (fragments are dropped), so a cut value is recognisable.
CUT_MARK = "#cut-"
_HASH_BYTES = 8
_CUT = re.compile(re.escape(CUT_MARK) + "[0-9a-f]{%d}$" % (2 * _HASH_BYTES))
_CUT_CHARS = len(CUT_MARK) + 2 * _HASH_BYTES
# NUL, and the surrogates no UTF-8 encoder accepts alone.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def _lengths(columns: dict[str, Any]) -> dict[str, int | None]:
    """Record field -> the length of the column it is stored in (None: unbounded)."""
    return {name: getattr(column.type, "length", None) for name, column in columns.items()}


def _column(model: Any, name: str) -> Column:
    return model.__table__.c[name]


#: The string fields of a page record and the columns they are stored in.
_PAGE_LENGTHS = _lengths({
    "url": _column(Page, "url"), "host": _column(Host, "name"), "hostname": _column(Host, "hostname"),
    "path": _column(Page, "path"), "ip": _column(Host, "ip"), "registrable_domain": _column(Host, "registrable_domain"),
    "outcome": _column(Page, "outcome"), "error": _column(Page, "error"), "content_type": _column(Page, "content_type"),
    "title": _column(Page, "title"), "redirect_to": _column(Page, "redirect_to"),
    "duplicate_kind": _column(Page, "duplicate_kind"),
    "etag": _column(Page, "etag"), "last_modified": _column(Page, "last_modified"),
})
_LINK_LENGTHS = _lengths({name: _column(Link, name) for name in ("target_url", "target_host", "anchor", "before", "after")})
_LINK_TEXTS = attrgetter(*_LINK_LENGTHS)


def cut_to(value: str, length: int) -> str:
    """``value`` when it has at most ``length`` characters; else its start, :data:`CUT_MARK`
    and a hash of the whole value, ``length`` characters in all."""
    if len(value) <= length:
        return value
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=_HASH_BYTES).hexdigest()
    return value[: length - _CUT_CHARS] + CUT_MARK + digest


def is_cut(value: str) -> bool:
    """Whether ``value`` is a cut one (:func:`cut_to`)."""
    return _CUT.match(value, max(0, len(value) - _CUT_CHARS)) is not None


def _unstorable(value: str) -> bool:
    """Whether ``value`` holds a NUL or a lone surrogate (memchr and the UTF-8 encoder are
    many times faster than a regular expression over a page's text)."""
    if "\x00" in value:
        return True
    if value.isascii():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def storable_text(value: str, length: int | None = None) -> str:
    """``value`` without NULs and lone surrogates, cut to ``length``."""
    if _unstorable(value):
        value = _UNSTORABLE.sub(_REPLACEMENT, value)
    return value if length is None else cut_to(value, length)


def _changes(record: Any, lengths: dict[str, int | None]) -> dict[str, str]:
    """The string fields of ``record`` that are not storable as they are, made storable."""
    changes = {}
    for name, length in lengths.items():
        value = getattr(record, name)
        if value is not None and (fixed := storable_text(value, length)) != value:
            changes[name] = fixed
    return changes


def _storable_link(link: LinkRecord) -> LinkRecord:
    changes = _changes(link, _LINK_LENGTHS)
    return dataclasses.replace(link, **changes) if changes else link


def _links_storable(links: list[LinkRecord]) -> bool:
    """Whether every link is storable as it is: one pass over all their strings (a page's
    links are most of what a batch stores, and nearly always storable)."""
    texts = "".join(filter(None, chain.from_iterable(map(_LINK_TEXTS, links))))
    if _unstorable(texts):
        return False
    return all(
        max(map(len, filter(None, map(attrgetter(name), links))), default=0) <= length
        for name, length in _LINK_LENGTHS.items() if length is not None
    )


def storable(record: PageRecord) -> PageRecord:
    """``record`` with every string it stores (its links' too) storable; the record
    itself when nothing needed it."""
    changes: dict[str, Any] = _changes(record, _PAGE_LENGTHS)
    if not _links_storable(record.links):
        changes["links"] = [_storable_link(link) for link in record.links]
    if record.spam_reasons and any(map(_unstorable, record.spam_reasons)):
        changes["spam_reasons"] = [storable_text(reason) for reason in record.spam_reasons]
    return dataclasses.replace(record, **changes) if changes else record
