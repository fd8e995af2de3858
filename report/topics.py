"""The report's topics: the stored co-clustering of the term vectors (``jobs.topics``)
and the topic terms of mirror clusters, duplicate clusters and spam hosts, as JSON keys
and as the table's section. Terms are crawled words: every one is shown through
``safe_text`` here, and through Jinja2's autoescape in the HTML report."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mirrorscope.report.render import add_name_column, add_text_column, add_value_column, safe_text
from mirrorscope.storage.store import Store

__all__ = ["render_topics_table", "topics_report"]

#: Rows of each table section: a store of many clusters stays readable.
TABLE_ROWS = 20


def topics_report(store: Store, mirror_clusters: list[list[str]]) -> dict[str, Any]:
    """The ``coclustering``, ``topics`` and ``mirror_cluster_topics`` keys of the report;
    ``mirror_cluster_topics[i]`` are the terms of ``mirror_clusters[i]`` (its first root
    names it), empty when it has none."""
    topics = store.topic_labels()
    mirror_terms = {t["subject"]: t["terms"] for t in topics if t["kind"] == "mirror"}
    return {
        "coclustering": store.coclustering(),
        "topics": topics,
        "mirror_cluster_topics": [mirror_terms.get(cluster[0], []) if cluster else [] for cluster in mirror_clusters],
    }


def _terms(terms: list[str]) -> Text:
    return Text(", ".join(safe_text(t) for t in terms))


def render_topics_table(report: dict[str, Any], console: Console) -> None:
    """The co-clustering's page clusters with their terms, then each labelled group."""
    summary = report.get("coclustering")
    if summary:
        title = (
            f"Topics: {summary['pages']} pages x {summary['terms']} terms co-clustered "
            f"(k={summary['k']}, l={summary['l']}, {summary['iterations']} iterations, "
            f"information lost {summary['loss'][-1]:.3f} of {summary['mutual_information']:.3f} nats)"
        )
        clusters = Table(title=title, title_justify="left")
        add_value_column(clusters, "cluster")
        add_value_column(clusters, "pages")
        add_text_column(clusters, "terms")
        for row in summary["page_clusters"][:TABLE_ROWS]:
            clusters.add_row(str(row["cluster"]), str(row["pages"]), _terms(row["terms"]))
        console.print(clusters)
    labelled = report.get("topics") or []
    if labelled:
        table = Table(title=f"Topic terms of mirror clusters, duplicate clusters and spam hosts: {len(labelled)}", title_justify="left")
        add_value_column(table, "kind", "duplicate")
        add_name_column(table, "cluster or host")
        add_value_column(table, "pages")
        add_text_column(table, "terms")
        shown: dict[str, int] = {}
        for row in labelled:
            shown[row["kind"]] = shown.get(row["kind"], 0) + 1
            if shown[row["kind"]] <= TABLE_ROWS:
                table.add_row(safe_text(row["kind"]), Text(safe_text(row["subject"])), str(row["pages"]), _terms(row["terms"]))
        console.print(table)
