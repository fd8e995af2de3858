"""The JSON that ``mirror-report`` writes is what ``report/report.schema.json`` says it is:
on a store crawled from the standard sandbox (through ``mirror-report demo``) and on an
empty store, for the report, ``duplicates`` and ``similar``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mirrorscope.report.cli import main
from mirrorscope.report.document import report_schema

SCHEMA = report_schema()


def validate(document: Any, definition: str | None = None) -> None:
    """Validate against the report's schema, or against one of its ``$defs``."""
    schema = SCHEMA if definition is None else {"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"}
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)


def json_of(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """What ``mirror-report ARGV`` writes on stdout, parsed; it must exit 0."""
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """The demo's JSON over the standard world, and the URL of the store it crawled into."""
    tmp = tmp_path_factory.mktemp("demo")
    url = f"sqlite:///{tmp / 'store.db'}"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "mirrorscope.report.cli", "demo", "--world", "standard", "--format", "json", "--db", url],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout), url


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_demo_and_the_report_of_a_crawled_store_match_the_schema(demo: tuple[dict[str, Any], str], capsys: pytest.CaptureFixture[str]) -> None:
    document, url = demo
    validate(document)
    assert document["mirrors"] and document["duplicate_clusters"] and document["sandbox"]["mirrors"]["found"]
    report = json_of(capsys, "--db", url, "--format", "json")
    validate(report)
    assert report == {k: v for k, v in document.items() if k != "sandbox"}


def test_duplicates_and_similar_of_a_crawled_store_match_the_schema(demo: tuple[dict[str, Any], str], capsys: pytest.CaptureFixture[str]) -> None:
    document, url = demo
    for method in ("broder", "center", "super-shingles"):
        validate(json_of(capsys, "duplicates", "--db", url, "--method", method, "--format", "json"), "duplicates_report")
    similar = json_of(capsys, "similar", document["crawl"]["last_run"]["seeds"][0], "--db", url, "--format", "json")
    validate(similar, "similar_report")
    assert similar["similar"]


def empty_store(tmp_path: Path) -> str:
    """A store with the schema and nothing crawled (reading commands create none)."""
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    assert main(["db", "upgrade", "--db", url]) == 0
    return url


def test_the_report_of_an_empty_store_matches_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json_of(capsys, "--db", empty_store(tmp_path), "--format", "json")
    validate(report)
    assert report["crawl"]["runs"] == 0 and report["crawl"]["last_run"]["id"] is None and report["hosts"] == []


@pytest.mark.parametrize(
    "spoil",
    [
        lambda doc: doc.pop("traps"),
        lambda doc: doc["crawl"]["last_run"].pop("seeds"),
        lambda doc: doc["crawl"].update(sketches=3),
        lambda doc: doc["crawl"].update(pages="3"),
    ],
    ids=["missing-key", "missing-nested-key", "key-outside-the-contract", "wrong-type"],
)
def test_the_schema_rejects_a_document_outside_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: Any) -> None:
    report = json_of(capsys, "--db", empty_store(tmp_path), "--format", "json")
    spoil(report)
    with pytest.raises(jsonschema.ValidationError):
        validate(report)
