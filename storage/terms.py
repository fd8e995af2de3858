"""The term vector tables (``detectors.term_vectors``) and what the co-clustering job
(``jobs.topics``) writes: the term dictionary with document frequencies, each page's
vector, the last co-clustering's summary and the topic labels."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from mirrorscope.storage.models import Coclustering, Page, Term, TermVector, TopicLabel
from mirrorscope.storage.records import PageRecord
from mirrorscope.storage.sql import Tables, chunks, insert_new, utc_now


def replace_term_vectors(conn: Connection, records: Sequence[PageRecord], ids: dict[str, int]) -> None:
    """Store the term vectors of ``records`` (page ids by URL in ``ids``) within the
    caller's transaction; a re-fetched page without a vector loses its old one."""
    for chunk in chunks([ids[r.url] for r in records]):
        conn.execute(delete(TermVector).where(TermVector.page_id.in_(chunk)))
    rows = [
        {"page_id": ids[r.url], "terms": r.term_vector[0], "data": r.term_vector[1]}
        for r in records if r.term_vector is not None
    ]
    if rows:
        conn.execute(insert(TermVector), rows)


class TermTables(Tables):
    """Terms, term vectors, co-clusterings and topic labels."""

    def term_ids(self, terms: Sequence[str]) -> list[int]:
        """The ids of ``terms`` (distinct, storable), those not stored yet added with
        document frequency 0; another crawl adding the same term at once gets the same id."""
        found: dict[str, int] = {}
        with self.engine.begin() as conn:
            for chunk in chunks(list(terms), self.write_batch):
                insert_new(conn, Term.__table__, [{"term": t, "document_frequency": 0} for t in chunk])
            for chunk in chunks(list(terms)):
                found.update((term, tid) for term, tid in conn.execute(select(Term.term, Term.id).where(Term.term.in_(chunk))))
        return [found[t] for t in terms]

    def add_document_frequencies(self, ids: Sequence[int], increments: Sequence[int]) -> None:
        """Add ``increments`` to the document frequencies of term ``ids``: increments, not
        values, so crawls sharing a store each add their own pages."""
        if not len(ids):
            return
        stmt = (
            update(Term.__table__)
            .where(Term.__table__.c.id == bindparam("tid"))
            .values(document_frequency=Term.__table__.c.document_frequency + bindparam("inc"))
        )
        rows = [{"tid": int(i), "inc": int(n)} for i, n in zip(ids, increments)]
        with self.engine.begin() as conn:
            for chunk in chunks(rows, self.write_batch):
                conn.execute(stmt, list(chunk))

    def term_dictionary(self) -> list[tuple[int, str, int]]:
        """Every stored term as (id, term, document frequency), by id."""
        return self._tuples(select(Term.id, Term.term, Term.document_frequency).order_by(Term.id))

    def term_vector_count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(TermVector)).scalar_one())

    def term_vector_batches(self) -> Iterator[list[tuple[int, str, bytes]]]:
        """Every stored term vector as (page id, URL, bytes), by page id, in batches."""
        return self._batches(
            select(TermVector.page_id, Page.url, TermVector.data)
            .join(Page, Page.id == TermVector.page_id)
            .order_by(TermVector.page_id)
        )

    def replace_topics(self, summary: dict[str, Any] | None, labels: Sequence[tuple[str, str, int, list[str]]]) -> None:
        """Replace the stored co-clustering summary (None: none, a store without term
        vectors) and the topic labels, each label (kind, subject, pages, terms)."""
        with self.engine.begin() as conn:
            conn.execute(delete(Coclustering))
            conn.execute(delete(TopicLabel))
            if summary is not None:
                conn.execute(insert(Coclustering), [{"summary": summary, "computed_at": utc_now()}])
            rows = [{"kind": k, "subject": s, "pages": p, "terms": list(t)} for k, s, p, t in labels]
            for chunk in chunks(rows, self.write_batch):
                conn.execute(insert(TopicLabel), list(chunk))

    def coclustering(self) -> dict[str, Any] | None:
        """The stored co-clustering summary, or None when none was made."""
        rows = self._tuples(select(Coclustering.summary).order_by(Coclustering.id.desc()).limit(1))
        return rows[0][0] if rows else None

    def topic_labels(self) -> list[dict[str, Any]]:
        """The stored topic labels as {kind, subject, pages, terms}, by kind and subject."""
        return self._dicts(
            select(TopicLabel.kind, TopicLabel.subject, TopicLabel.pages, TopicLabel.terms)
            .order_by(TopicLabel.kind, TopicLabel.subject)
        )
