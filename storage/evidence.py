"""The reads behind the HTML report's evidence views: what a page said (title, link
texts, spam reasons), fetches by host and kind, and the links a trap host left unfetched.

Every read takes the URLs or hosts it is about, in bounded IN lists, so that a report of a
large store reads the few pages it shows, not the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from mirrorscope.storage.models import AnchorPair, Host, Link, Page, Sketch
from mirrorscope.storage.rows import PageFacts
from mirrorscope.storage.sql import Tables, chunks


class EvidenceTables(Tables):
    """Page facts and link texts for the report's evidence."""

    def pages_by_url(self, urls: Sequence[str]) -> dict[str, dict[str, Any]]:
        """URL -> outcome, depth (-1: a mirror validation fetch), title, spam score and spam
        reasons, of the stored ones among ``urls``."""
        found: dict[str, dict[str, Any]] = {}
        for part in chunks(sorted(set(urls))):
            query = select(Page.url, Page.outcome, Page.depth, Page.title, Page.spam_score, Page.spam_reasons).where(Page.url.in_(part))
            found.update((row["url"], row) for row in self._dicts(query))
        return found

    def page_facts_of(self, hosts: Sequence[str]) -> list[PageFacts]:
        """``page_facts`` (host, IP, URL, path, outcome, sketch bytes) of the pages of ``hosts`` only."""
        found: list[PageFacts] = []
        for part in chunks(sorted(set(hosts))):
            query = (
                select(Host.name.label("host"), Host.ip, Page.url, Page.path, Page.outcome, Sketch.data)
                .join(Host, Host.id == Page.host_id)
                .outerjoin(Sketch, Sketch.page_id == Page.id)
                .where(Host.name.in_(part))
                .order_by(Page.id)
            )
            found.extend(cast(list[PageFacts], self._dicts(query)))
        return found

    def links_to(self, hosts: Sequence[str]) -> list[tuple[str, str, str]]:
        """Distinct (source host, target host, target URL) of the stored links to ``hosts``."""
        found: list[tuple[str, str, str]] = []
        for part in chunks(sorted(set(hosts))):
            query = (
                select(Host.name, Link.target_host, Link.target_url)
                .join(Page, Page.id == Link.source_page_id)
                .join(Host, Host.id == Page.host_id)
                .where(Link.target_host.in_(part))
                .distinct()
            )
            found.extend(cast(list[tuple[str, str, str]], self._tuples(query)))
        return found

    def link_texts(self, urls: Sequence[str], per_page: int) -> dict[str, list[tuple[str, str, str]]]:
        """URL -> its first ``per_page`` links' (words before, anchor, words after), in page order."""
        texts: dict[str, list[tuple[str, str, str]]] = {}
        for part in chunks(sorted(set(urls))):
            query = (
                select(Page.url, Link.before, Link.anchor, Link.after)
                .join(Page, Page.id == Link.source_page_id)
                .where(Page.url.in_(part), Link.position < per_page)
                .order_by(Page.url, Link.position)
            )
            for url, before, anchor, after in self._tuples(query):
                texts.setdefault(url, []).append((before, anchor, after))
        return texts

    def fetches_by_host(self) -> list[tuple[str, str, bool, int]]:
        """(host, outcome, is a duplicate of another page, pages) over every stored page."""
        duplicate = Page.duplicate_of_id.is_not(None)
        query = (
            select(Host.name, Page.outcome, duplicate, func.count(Page.id))
            .join(Host, Host.id == Page.host_id)
            .group_by(Host.name, Page.outcome, duplicate)
        )
        return [(host, outcome, bool(dup), count) for host, outcome, dup, count in self._tuples(query)]

    def spam_pages(self, hosts: Sequence[str], per_host: int) -> dict[str, list[dict[str, Any]]]:
        """Host -> its ``per_host`` pages of highest spam score (URL, title, score, reasons)."""
        found: dict[str, list[dict[str, Any]]] = {}
        for part in chunks(sorted(set(hosts))):
            rank = func.row_number().over(partition_by=Page.host_id, order_by=(Page.spam_score.desc(), Page.url)).label("rank")
            ranked = (
                select(Host.name.label("host"), Page.url, Page.title, Page.spam_score, Page.spam_reasons, rank)
                .join(Host, Host.id == Page.host_id)
                .where(Host.name.in_(part), Page.spam_score.is_not(None))
                .subquery()
            )
            query = select(ranked.c.host, ranked.c.url, ranked.c.title, ranked.c.spam_score, ranked.c.spam_reasons).where(
                ranked.c.rank <= per_host
            ).order_by(ranked.c.host, ranked.c.rank)
            for row in self._dicts(query):
                found.setdefault(row.pop("host"), []).append(row)
        return found

    def unfetched_links_to(self, hosts: Sequence[str], per_host: int) -> dict[str, list[str]]:
        """Host -> up to ``per_host`` distinct URLs on it that stored pages link to and no
        page row holds (what the crawl refused or never reached), by URL."""
        target = aliased(Page)
        found: dict[str, list[str]] = {}
        for part in chunks(sorted(set(hosts))):
            unfetched = (
                select(Link.target_host.label("host"), Link.target_url.label("url"))
                .outerjoin(target, target.url == Link.target_url)
                .where(Link.target_host.in_(part), target.id.is_(None))
                .distinct()
                .subquery()
            )
            rank = func.row_number().over(partition_by=unfetched.c.host, order_by=unfetched.c.url).label("rank")
            ranked = select(unfetched.c.host, unfetched.c.url, rank).subquery()
            query = select(ranked.c.host, ranked.c.url).where(ranked.c.rank <= per_host).order_by(ranked.c.host, ranked.c.rank)
            for host, url in self._tuples(query):
                found.setdefault(host, []).append(url)
        return found

    def anchors_to(self, hosts: Sequence[str], per_host: int) -> dict[str, list[tuple[str, str]]]:
        """Host -> up to ``per_host`` (linking page URL, anchor text) of links to it, in the
        order stored: what others say of a host, even one never fetched."""
        found: dict[str, list[tuple[str, str]]] = {}
        for part in chunks(sorted(set(hosts))):
            rank = func.row_number().over(partition_by=Link.target_host, order_by=Link.id).label("rank")
            ranked = (
                select(Link.target_host.label("host"), Page.url, Link.anchor, rank)
                .join(Page, Page.id == Link.source_page_id)
                .where(Link.target_host.in_(part))
                .subquery()
            )
            query = select(ranked.c.host, ranked.c.url, ranked.c.anchor).where(ranked.c.rank <= per_host).order_by(ranked.c.host, ranked.c.rank)
            for host, url, anchor in self._tuples(query):
                found.setdefault(host, []).append((url, anchor))
        return found

    def first_pages(self, limit: int) -> list[str]:
        """The URLs of the first ``limit`` pages fetched with outcome ``ok`` (the seeds' side
        of the crawl first)."""
        with self.engine.connect() as conn:
            return list(conn.execute(select(Page.url).where(Page.outcome == "ok").order_by(Page.id).limit(limit)).scalars())

    def similar_neighbours(self, urls: Sequence[str], per_url: int) -> dict[str, list[dict[str, Any]]]:
        """URL -> its ``per_url`` most similar URLs by anchor bags, most alike first, for
        those of ``urls`` in a stored pair (each side read through its index)."""
        found: dict[str, list[dict[str, Any]]] = {}
        for part in chunks(sorted(set(urls))):
            for side, other in ((AnchorPair.url_a, AnchorPair.url_b), (AnchorPair.url_b, AnchorPair.url_a)):
                for url, neighbour, similarity in self._tuples(select(side, other, AnchorPair.similarity).where(side.in_(part))):
                    found.setdefault(url, []).append({"url": neighbour, "similarity": similarity})
        return {
            url: sorted(rows, key=lambda row: (-row["similarity"], row["url"]))[:per_url]
            for url, rows in sorted(found.items())
        }
