"""The HTML report: one self-contained file (no network, no CDN) from the report document.

Jinja2 renders ``templates/report.html.j2`` with autoescape on, so every crawled string
(titles, URLs, anchors, excerpts, host names) is text, never markup. The data the page's
script reads (the host table it pages, the similar-URL lists) is JSON inside a
``<script type="application/json">`` element, with ``<``, ``>``, ``&`` and U+2028/2029
escaped so that no string can close the element; the script only ever sets
``textContent``. A Content-Security-Policy forbids every fetch.

The mirror clusters are drawn as SVG, one graph per cluster, laid out in Python by
networkx's ``spring_layout`` (Fruchterman-Reingold, seeded, so a report renders the same
twice; ``spiral_layout`` for clusters of two or three roots). Near-duplicate pairs are compared side by side with ``difflib.SequenceMatcher``:
lines first, then words within changed lines.
"""

from __future__ import annotations

import difflib
import json
from itertools import zip_longest
from typing import Any
from urllib.parse import urlsplit

import networkx as nx
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from mirrorscope.report.evidence import HOST_CLASSES

#: Size of one cluster's drawing, in SVG user units (a node's label sits under it).
GRAPH_WIDTH, GRAPH_HEIGHT, GRAPH_MARGIN = 420, 220, 40
#: How far a label sits from its node's centre (a node's radius is 9).
LABEL_OFFSET = 12
#: Clusters of this many roots or more are laid out by the spring layout.
SPRING_MIN_ROOTS = 4
#: Mirror clusters drawn open; the rest are collapsed until asked for.
CLUSTERS_OPEN = 12
#: Rows per page of the paged tables (hosts, mirror pairs, clusters).
PAGE_ROWS = 100
#: Words of a side of the side-by-side comparison: beyond, a page's text is cut.
DIFF_WORDS = 3000

_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}

_environment = Environment(
    loader=PackageLoader("mirrorscope.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def script_json(value: Any) -> Markup:
    """``value`` as JSON safe inside a ``<script>`` element: no ``</script>``, no comment
    opener, no line terminator that ends a JavaScript string."""
    return Markup(json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_ESCAPES))


def root_label(url: str) -> str:
    """A mirror root as people name it: host and path prefix, without the scheme."""
    parts = urlsplit(url)
    return parts.netloc + (parts.path or "/")


def _edge_style(mirror: dict[str, Any]) -> str:
    """``prefix`` when a side sits under a path prefix, else the level (full, partial)."""
    prefixed = any(urlsplit(mirror[side]).path not in ("", "/") for side in ("a", "b"))
    return "prefix" if prefixed else mirror["level"]


def _layout(roots: list[str], pairs: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Positions of a cluster's roots in the GRAPH_WIDTH x GRAPH_HEIGHT box: networkx's
    spring layout (seeded), or its spiral layout for clusters of up to three roots, which
    any layout draws as a slanted line or a bent path (the spring layout's iterations made
    most of the render time of a 10,000-host report; a circular one lays a pair flat,
    its labels side by side). Both scale into [-1, 1]; the margins keep the labels inside."""
    graph = nx.Graph()
    graph.add_nodes_from(roots)
    graph.add_edges_from((m["a"], m["b"]) for m in pairs)
    layout = nx.spiral_layout(graph) if len(roots) < SPRING_MIN_ROOTS else nx.spring_layout(graph, seed=0)
    half_w, half_h = GRAPH_WIDTH / 2, GRAPH_HEIGHT / 2
    return {
        url: (round(half_w + x * (half_w - GRAPH_MARGIN), 1), round(half_h + y * (half_h - GRAPH_MARGIN / 2), 1))
        for url, (x, y) in layout.items()
    }


def _node(url: str, canonical: bool, x: float, y: float) -> dict[str, Any]:
    """A root drawn at (x, y), its label running from it towards the middle of the box (above
    it in the upper half, below in the lower) so that it stays inside and off the edge."""
    start = x < GRAPH_WIDTH / 2
    return {
        "url": url, "label": root_label(url), "canonical": canonical, "x": x, "y": y,
        "anchor": "start" if start else "end", "label_x": x - LABEL_OFFSET if start else x + LABEL_OFFSET,
        "label_y": y - LABEL_OFFSET if y < GRAPH_HEIGHT / 2 else y + 2 * LABEL_OFFSET,
    }


def cluster_graphs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per mirror cluster: its nodes (position, label, canonical: the first root) and its
    edges (the index of the pair in ``report["mirrors"]``, style, ends)."""
    cluster_of = {url: n for n, cluster in enumerate(report["mirror_clusters"]) for url in cluster}
    edges: list[list[tuple[int, dict[str, Any]]]] = [[] for _ in report["mirror_clusters"]]
    for index, mirror in enumerate(report["mirrors"]):
        if mirror["a"] in cluster_of and cluster_of[mirror["a"]] == cluster_of.get(mirror["b"]):
            edges[cluster_of[mirror["a"]]].append((index, mirror))
    graphs = []
    for number, (cluster, cluster_edges) in enumerate(zip(report["mirror_clusters"], edges), 1):
        position = _layout(cluster, [m for _, m in cluster_edges])
        graphs.append({
            "number": number,
            "nodes": [_node(url, i == 0, *position[url]) for i, url in enumerate(cluster)],
            "edges": [{"pair": index, "style": _edge_style(m), "url_a": m["a"], "url_b": m["b"], "a": position[m["a"]],
                       "b": position[m["b"]], "title": f"{root_label(m['a'])} \u2194 {root_label(m['b'])}: {m['level']}"}
                      for index, m in cluster_edges],
        })
    return graphs


def _word_marks(left: str, right: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Two lines as (text, changed) segments, word by word."""
    words_a, words_b = left.split(" "), right.split(" ")
    marks_a: list[tuple[str, bool]] = []
    marks_b: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes():
        if i2 > i1:
            marks_a.append((" ".join(words_a[i1:i2]), tag != "equal"))
        if j2 > j1:
            marks_b.append((" ".join(words_b[j1:j2]), tag != "equal"))
    return marks_a, marks_b


def _cut(text: str) -> list[str]:
    """``text``'s lines, cut after DIFF_WORDS words."""
    lines, words = [], 0
    for line in text.split("\n"):
        if words >= DIFF_WORDS:
            break
        lines.append(line)
        words += line.count(" ") + 1
    return lines


def side_by_side(text_a: str, text_b: str) -> list[tuple[list[tuple[str, bool]], list[tuple[str, bool]]]]:
    """Rows of a side-by-side comparison: each side a list of (text, changed) segments."""
    lines_a, lines_b = _cut(text_a), _cut(text_b)
    rows = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines_a, lines_b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(([(line, False)], [(line, False)]) for line in lines_a[i1:i2])
            continue
        for left, right in zip_longest(lines_a[i1:i2], lines_b[j1:j2]):
            if left is None or right is None:
                rows.append(([(left, True)] if left is not None else [], [(right, True)] if right is not None else []))
            else:
                rows.append(_word_marks(left, right))
    return rows


def _budget_bars(fetches: dict[str, int]) -> list[dict[str, Any]]:
    top = max(fetches.values(), default=0) or 1
    return [{"kind": kind, "label": kind.replace("_", " "), "pages": fetches[kind], "share": fetches[kind] / top} for kind in HOST_CLASSES]


def render_html(report: dict[str, Any]) -> str:
    """The report (with its ``evidence`` key, ``evidence.build_evidence``) as one HTML file."""
    evidence = report["evidence"]
    data = {
        "hosts": [[h["host"], h["ip"], h["registrable_domain"], h["pages"]] for h in report["hosts"]],
        "similar": evidence["similar"],
        "page_rows": PAGE_ROWS,
    }
    comparisons = [dict(pair, rows=side_by_side(pair["text_a"], pair["text_b"])) for pair in evidence["duplicate_texts"]]
    return _environment.get_template("report.html.j2").render(
        report=report,
        evidence=evidence,
        graphs=cluster_graphs(report),
        bars=_budget_bars(evidence["fetches_by_class"]),
        comparisons=comparisons,
        root_label=root_label,
        data=script_json(data),
        clusters_open=CLUSTERS_OPEN,
        page_rows=PAGE_ROWS,
        graph_size=(GRAPH_WIDTH, GRAPH_HEIGHT),
    )
