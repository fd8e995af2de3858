"""The HTML report (``mirror-report --format html``), in headless chromium where it is
installed: the demo world's report loads without a console error, its graph is the
sandbox's true mirror pairs, a click on a pair shows that pair's evidence, a store whose
pages carry script injections adds no element and runs no script, and a screenshot is
written and is not blank. Without chromium those tests skip; the escaping, the evidence's
schema and the 80-column terminal table are checked here in any case."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from rich.console import Console

from mirrorscope.report.cli import main
from mirrorscope.report.document import build_report, report_schema
from mirrorscope.report.evidence import report_with_evidence
from mirrorscope.report.html import CLUSTERS_OPEN, PAGE_ROWS, render_html, script_json
from mirrorscope.report.render import TABLE_WIDTH, render_table
from mirrorscope.sandbox.world import build_world
from mirrorscope.storage.records import LinkRecord
from mirrorscope.storage.store import Store
from tests.helpers import ARTIFACTS, open_chromium, page, requires_chromium

pytestmark = pytest.mark.timeout(600)

#: What a hostile page puts in its title, anchors and everything else the report shows:
#: a script-tag breakout, an event handler, an element with an id, a JavaScript line
#: terminator and a comment opener.
INJECTION = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b id="injected">b</b>\u2028<!--'
EVIL_URL = 'http://evil.example/"><script>window.pwned=3</script>'


def strip_port(url: str) -> str:
    """A URL root as host and path, without scheme or port (the demo's port is any free one)."""
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path or '/'}"


def report_of(url: str) -> dict[str, Any]:
    """The report document of the store at ``url`` with its ``evidence`` key."""
    store = Store(url, access="read")
    try:
        return report_with_evidence(store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``mirror-report demo --format html`` over the default (full) world: the file, and
    the URL of the store it crawled into."""
    tmp = tmp_path_factory.mktemp("demo-html")
    url = f"sqlite:///{tmp / 'store.db'}"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "mirrorscope.report.cli", "demo", "--format", "html", "--output", str(tmp / "report.html"), "--db", url],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=400,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "report.html", url


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store whose pages, anchors, verdicts and similar URLs carry :data:`INJECTION`,
    rendered by ``mirror-report --format html``: the file and the store's URL."""
    tmp = tmp_path_factory.mktemp("hostile-html")
    url = f"sqlite:///{tmp / 'store.db'}"
    linking = page("http://a.example/", title=INJECTION, spam_score=0.1, spam_reasons=[INJECTION])
    linking.links = [
        LinkRecord(target, urlsplit(target).hostname, INJECTION, INJECTION, INJECTION)
        for target in ("http://b.example/", "http://spam.example/", "http://trap.example/2026/12/01/", EVIL_URL)
    ]
    verdict = {"score": 1.0, "pages": 1, "flagged": True, "reasons": [INJECTION], "features": {INJECTION: 1.0}}
    store = Store(url)
    try:
        store.write_pages([
            linking,
            page("http://b.example/", title=INJECTION),
            page("http://spam.example/", title=INJECTION, spam_score=0.9, spam_reasons=[INJECTION]),
            page("http://trap.example/", title=INJECTION),
        ], None)
        ids = {p["url"]: p["id"] for p in store.pages()}
        pair = [ids["http://a.example/"], ids["http://b.example/"]]
        store.replace_duplicate_clusters("broder", [(pair[0], pair, False)], [], [])
        store.replace_host_verdicts([{"host": "spam.example", "kind": "spam", **verdict}, {"host": "trap.example", "kind": "trap", **verdict}])
        store.replace_mirrors(
            [{"url_a": "http://a.example/", "url_b": "http://b.example/", "level": "full", "score": 0.9, "paths_checked": 2,
              "paths_matched": 2, "fraction_ab": 1.0, "fraction_ba": 1.0, "inferred": False, "features": {INJECTION: 0.5},
              "reasons": [INJECTION]}],
            [[("http://a.example/", True), ("http://b.example/", False)]],
        )
        store.replace_anchor_clusters([("http://a.example/", EVIL_URL, 0.9)], [])
    finally:
        store.close()
    assert main(["--db", url, "--format", "html", "--output", str(tmp / "report.html")]) == 0
    return tmp / "report.html", url


@pytest.fixture(scope="module")
def browser() -> Any:
    driver = open_chromium()
    yield driver
    driver.quit()


def load(browser: Any, path: Path) -> list[dict[str, Any]]:
    """Open the report from disk; the console entries it logged."""
    browser.get_log("browser")  # what earlier pages logged
    browser.get(path.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    return browser.get_log("browser")


# -- in the browser ------------------------------------------------------------------------


@requires_chromium
def test_the_demo_report_loads_from_disk_with_no_console_error(demo: tuple[Path, str], browser: Any) -> None:
    path, url = demo
    log = load(browser, path)
    assert [entry for entry in log if entry["level"] in ("SEVERE", "WARNING")] == []
    hosts = report_of(url)["hosts"]
    # The page's script ran: the host table holds its first page of rows.
    assert browser.execute_script("return document.querySelectorAll('#host-table tbody tr').length") == min(len(hosts), 100)
    assert browser.execute_script("return document.querySelectorAll('.budget-bar').length") == 5


@requires_chromium
def test_the_graph_holds_the_true_mirror_pairs_of_the_sandbox(demo: tuple[Path, str], browser: Any) -> None:
    path, _ = demo
    load(browser, path)
    edges = browser.execute_script("return Array.from(document.querySelectorAll('.edge'), e => [e.dataset.a, e.dataset.b])")
    nodes = browser.execute_script("return Array.from(document.querySelectorAll('.node'), n => n.dataset.url)")
    truth = build_world(0, hard_mirrors=True, spam=True).ground_truth(80)
    true_pairs = {frozenset((strip_port(m["a"]), strip_port(m["b"]))) for m in truth["mirrors"]}
    assert {frozenset(map(strip_port, edge)) for edge in edges} == true_pairs
    assert sorted(map(strip_port, nodes)) == sorted({root for pair in true_pairs for root in pair})
    canonical = browser.execute_script("return Array.from(document.querySelectorAll('details.cluster[data-cluster]'), c => c.querySelectorAll('.node.canonical').length)")
    assert canonical == [1] * len(canonical) and canonical


@requires_chromium
def test_clicking_a_pair_shows_its_evidence(demo: tuple[Path, str], browser: Any) -> None:
    path, url = demo
    load(browser, path)
    mirrors = report_of(url)["mirrors"]
    panels = browser.find_elements("css selector", ".pair-evidence")
    assert len(panels) == len(mirrors) and not any(p.is_displayed() for p in panels)
    last = len(mirrors) - 1
    browser.find_element("css selector", f".edge[data-pair='{last}'] .hit").click()
    shown = [p.get_attribute("id") for p in panels if p.is_displayed()]
    assert shown == [f"pair-{last}"]
    panel = browser.find_element("id", f"pair-{last}")
    assert strip_port(mirrors[last]["a"]).split("/")[0] in panel.text and "Validated" in panel.text
    samples = panel.find_elements("css selector", "table.samples tbody tr")
    assert len(samples) >= 5 and any("identical" in row.text or "contained" in row.text for row in samples)
    assert "selected" in browser.find_element("css selector", f".edge[data-pair='{last}']").get_attribute("class")
    browser.find_element("css selector", ".show-pair[data-pair='0']").click()
    assert [p.get_attribute("id") for p in panels if p.is_displayed()] == ["pair-0"]


@requires_chromium
def test_injections_in_crawled_strings_add_no_element_and_run_no_script(hostile: tuple[Path, str], browser: Any) -> None:
    path, _ = hostile
    log = load(browser, path)
    assert [entry for entry in log if entry["level"] == "SEVERE"] == []
    found = browser.execute_script(
        "return {pwned: window.pwned === undefined ? null : window.pwned, scripts: document.scripts.length,"
        " injected: document.getElementById('injected') !== null, images: document.images.length,"
        " text: document.body.innerText}"
    )
    assert found["pwned"] is None and found["scripts"] == 2 and not found["injected"] and found["images"] == 0
    # Shown as text: the title, the anchors and the reasons; then the hostile URL, as a
    # similar URL the script lists.
    assert INJECTION.split("\u2028")[0] in found["text"]
    browser.find_element("css selector", "#similar-url option:nth-child(2)").click()
    rows = browser.find_elements("css selector", "#similar-table tbody tr")
    assert [row.text.split(maxsplit=1)[1] for row in rows] == [EVIL_URL]
    assert browser.execute_script("return window.pwned === undefined && document.scripts.length === 2")
    assert browser.execute_script("return document.querySelectorAll('.edge').length") == 1


@requires_chromium
def test_a_screenshot_of_the_demo_report_is_written_and_not_blank(demo: tuple[Path, str], browser: Any) -> None:
    path, _ = demo
    load(browser, path)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report-demo.png"
    assert browser.save_screenshot(str(shot))
    # The browser decodes its own PNG on a blank page (no image library needed here).
    browser.get("about:blank")
    stats = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const image = new Image();
        image.onload = () => {
          const canvas = document.createElement('canvas');
          canvas.width = image.width; canvas.height = image.height;
          const context = canvas.getContext('2d');
          context.drawImage(image, 0, 0);
          const pixels = context.getImageData(0, 0, image.width, image.height).data;
          let sum = 0, squares = 0, n = 0;
          for (let i = 0; i < pixels.length; i += 4) {
            const grey = (pixels[i] + pixels[i + 1] + pixels[i + 2]) / 3;
            sum += grey; squares += grey * grey; n += 1;
          }
          const mean = sum / n;
          done({width: image.width, height: image.height, variance: squares / n - mean * mean});
        };
        image.src = 'data:image/png;base64,' + arguments[0];
        """,
        __import__("base64").b64encode(shot.read_bytes()).decode(),
    )
    assert stats["width"] > 0 and stats["height"] > 0
    assert stats["variance"] > 100, stats  # a blank or single-colour page is ~0


# -- without a browser ---------------------------------------------------------------------


def test_inline_json_cannot_close_its_script_element() -> None:
    value = {"title": INJECTION, "url": EVIL_URL, "amp": "a & b", "terminators": "\u2028\u2029"}
    text = str(script_json(value))
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == value


def test_the_html_of_a_hostile_store_holds_the_injections_as_text_only(hostile: tuple[Path, str]) -> None:
    path, url = hostile
    html = path.read_text(encoding="utf-8")
    for raw in ("<script>window.pwned", '<b id="injected">', "<img", 'onerror="'):
        assert raw not in html
    assert html.count("<script") == 2
    jsonschema.validate(report_of(url), report_schema(), cls=jsonschema.Draft202012Validator)


def test_the_demo_evidence_matches_the_schema(demo: tuple[Path, str]) -> None:
    _, url = demo
    report = report_of(url)
    jsonschema.validate(report, report_schema(), cls=jsonschema.Draft202012Validator)
    samples = report["evidence"]["mirror_samples"]
    assert len(samples) == len(report["mirrors"]) and all(rows for rows, m in zip(samples, report["mirrors"]) if not m["inferred"])
    # Some sampled counterparts were fetched by the validation itself (depth -1), not reached by links.
    rows = [row for pair in samples for row in pair]
    assert any(row["validation_a"] or row["validation_b"] for row in rows)
    assert all(row["outcome_a"] is not None for row in rows if row["validation_a"])
    # The demo computed the anchor bags: the first pages fetched have similar URLs.
    similar = report["evidence"]["similar"]
    assert similar and all(rows == sorted(rows, key=lambda row: -row["similarity"]) for rows in similar.values())


def test_the_terminal_table_fits_80_columns_and_breaks_no_host_name(tmp_path: Path) -> None:
    long_hosts = [f"{first}.{'very-long-name-' * n}example.org" for first, n in (("alpha", 1), ("bravo", 3), ("charlie", 6))]
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store(url)
    try:
        store.write_pages([page(f"http://{host}/") for host in long_hosts], None)
        verdicts = [{"host": host, "kind": "spam", "score": 0.9, "pages": 1, "flagged": True,
                     "reasons": ["share of linking hosts that are spam 1 >= 1"], "features": {}} for host in long_hosts]
        store.replace_host_verdicts(verdicts)
        store.replace_mirrors(
            [{"url_a": f"http://{long_hosts[0]}/", "url_b": f"http://{long_hosts[2]}/", "level": "partial", "score": 0.8,
              "paths_checked": 20, "paths_matched": 18, "fraction_ab": 0.9, "fraction_ba": 0.9, "inferred": False,
              "features": {"content": 0.9, "paths": 0.8, "path_bigrams": 0.7}, "reasons": []}],
            [[(f"http://{long_hosts[0]}/", True), (f"http://{long_hosts[2]}/", False)]],
        )
        report = build_report(store)
    finally:
        store.close()
    console = Console(file=io.StringIO(), width=TABLE_WIDTH)
    render_table(report, console)
    lines = console.file.getvalue().splitlines()
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    cells = [cell.strip() for line in lines for cell in line.split("\u2502")]
    for host in long_hosts:
        head = host.split(".")[0] + "."
        # Each host is on one line, whole or cut with an ellipsis; no cell holds its rest.
        shown = [line for line in lines if head in line]
        assert shown and all(host in line or "\u2026" in line for line in shown), shown
        assert not [cell for cell in cells if cell and host.endswith(cell.removesuffix("/")) and head not in cell]


def many_hosts_report(hosts: int) -> dict[str, Any]:
    """A report document of ``hosts`` hosts, one in ten mirrored (clusters of two)."""
    names = [f"host{i:05d}.example.org" for i in range(hosts)]
    mirrored = hosts // 10
    mirrors = [
        {"a": f"http://{names[mirrored + i]}/", "b": f"http://{names[i]}/", "level": "full", "score": 0.9, "paths_checked": 6,
         "paths_matched": 6, "fractions": {"a_on_b": 1.0, "b_on_a": 1.0}, "inferred": True, "features": {"content": 1.0},
         "reasons": ["transitive inference"]}
        for i in range(mirrored)
    ]
    run = {"id": 1, "status": "finished", "started_at": None, "finished_at": None, "seconds": None, "seeds": []}
    return {
        "crawl": {"runs": 1, "last_run": run, "hosts": hosts, "pages": hosts, "links": 0, "bytes": 0, "outcomes": {"ok": hosts}},
        "hosts": [{"host": name, "ip": None, "registrable_domain": None, "pages": 1} for name in names],
        "mirrors": mirrors, "mirror_clusters": [[m["a"], m["b"]] for m in mirrors],
        "duplicate_clusters": [], "containment": [], "spam_hosts": [], "traps": [],
        "evidence": {
            "fetches_by_class": {"original": hosts - mirrored, "duplicates_and_mirrors": mirrored, "spam": 0, "traps": 0, "errors": 0},
            "mirror_samples": [[] for _ in mirrors], "duplicate_texts": [], "spam_pages": {}, "trap_urls": {}, "similar": {},
        },
    }


@requires_chromium
def test_a_report_of_many_hosts_collapses_clusters_and_pages_its_tables(tmp_path: Path, browser: Any) -> None:
    report = many_hosts_report(2_000)
    jsonschema.validate(report, report_schema(), cls=jsonschema.Draft202012Validator)
    path = tmp_path / "many.html"
    path.write_text(render_html(report), encoding="utf-8")
    assert [entry for entry in load(browser, path) if entry["level"] == "SEVERE"] == []
    found = browser.execute_script(
        "const clusters = Array.from(document.querySelectorAll('#mirror-graphs > details'));"
        "return {open: clusters.filter(c => c.open).length, shown: clusters.filter(c => !c.hidden).length,"
        " hosts: Array.from(document.querySelectorAll('#host-table tbody tr'), r => r.cells[0].textContent),"
        " pager: document.getElementById('host-pager').textContent}"
    )
    assert found["open"] == CLUSTERS_OPEN and found["shown"] == PAGE_ROWS
    assert found["hosts"] == [h["host"] for h in report["hosts"][:PAGE_ROWS]] and "page 1 of 20" in found["pager"]
    browser.find_element("css selector", "#host-pager button:nth-of-type(2)").click()
    second = browser.execute_script("return Array.from(document.querySelectorAll('#host-table tbody tr'), r => r.cells[0].textContent)")
    assert second == [h["host"] for h in report["hosts"][PAGE_ROWS : 2 * PAGE_ROWS]]
