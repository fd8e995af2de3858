"""Bad input to ``mirror-report`` and ``scrapy crawl`` (issue 16, items 9 and 10): each case
is one line on stderr, a non-zero exit and no traceback, and a command that may not create
a database leaves none behind. Crawled or typed control characters never reach the
terminal raw; a read-only store can be reported; migrations started at once take turns.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from sqlalchemy import inspect, text

from mirrorscope.report.cli import main
from mirrorscope.report import render
from mirrorscope.sandbox import Host, Resource, World
from mirrorscope.settings.ranges import RANGES, SettingsError, check_settings
from mirrorscope.storage.db import current_revision, downgrade, head_revision, make_engine
from mirrorscope.storage.store import Store
from tests.helpers import crawl_world, mirror_report, project_crawler, run_cli, scrapy_crawl

#: What a hostile page or argument carries: an ANSI colour escape, a bell, a DEL and a
#: right-to-left override; none may reach a terminal raw.
HOSTILE = "\x1b[31mred\x07bell\x7f\u202eevil"
RAW = ("\x1b", "\x07", "\x7f", "\u202e")
SHOWN = "\\x1b[31mred\\x07bell\\x7f\\u202eevil"
#: A seed that is never fetched: every case below is refused before the crawl starts.
SEED = "http://127.0.0.1:9/"


def assert_one_line_error(result: subprocess.CompletedProcess, message: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0, result.stdout[-2000:]
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr[-3000:]
    assert message in lines[0], lines[0]
    assert not any(c in result.stderr for c in RAW)


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> subprocess.CompletedProcess:
    """``mirror-report ARGV`` through its ``main`` in this process (a traceback would fail
    the test as an exception): the cases the subprocess tests cover, without a start-up each."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, out, err)


def upgraded(url: str) -> str:
    """``url`` with mirrorscope's schema and nothing crawled."""
    assert main(["db", "upgrade", "--db", url]) == 0
    return url


# -- settings and options: checked before the crawl starts, before any database is made ----


@pytest.mark.parametrize(
    "args, message",
    [
        (["-s", "DEPTH_LIMIT=abc"], "setting DEPTH_LIMIT must be a whole number >= 0, not 'abc'"),
        (["-s", "CONCURRENT_REQUESTS_PER_DOMAIN=0"], "setting CONCURRENT_REQUESTS_PER_DOMAIN must be a whole number >= 1, not '0'"),
        (["--depth-limit", "0"], "argument --depth-limit: must be at least 1, not 0"),
        (["-s", "DOWNLOAD_MAXSIZE=0"], "setting DOWNLOAD_MAXSIZE must be a whole number >= 1, not '0'"),
    ],
)
def test_crawl_refuses_bad_settings_before_making_the_database(tmp_path: Path, args: list[str], message: str) -> None:
    database = tmp_path / "store.db"
    # Before the fix CONCURRENT_REQUESTS_PER_DOMAIN=0 never ended: the timeout fails it.
    result = mirror_report("crawl", SEED, "--db", f"sqlite:///{database}", *args, timeout=60)
    assert_one_line_error(result, message)
    assert not database.exists()


def test_scrapy_crawl_checks_settings_from_the_settings_module_too(tmp_path: Path) -> None:
    """Settings from ``SCRAPY_SETTINGS_MODULE`` (as scrapy.cfg names it) and from ``-s``."""
    (tmp_path / "hostile_settings.py").write_text("from mirrorscope.settings import *\nCONCURRENT_REQUESTS_PER_DOMAIN = 0\n")
    database = tmp_path / "store.db"
    env = {"SCRAPY_SETTINGS_MODULE": "hostile_settings", "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = run_cli(sys.executable, "-m", "scrapy", "crawl", "web", "-a", f"seeds={SEED}", "-s", f"DATABASE_URL=sqlite:///{database}",
                     "--nolog", env=env, timeout=60)
    assert_one_line_error(result, "error: setting CONCURRENT_REQUESTS_PER_DOMAIN must be a whole number >= 1, not 0")
    result = scrapy_crawl("-a", f"seeds={SEED}", "-s", f"DATABASE_URL=sqlite:///{database}", "-s", "STORE_BATCH_SIZE=0", "--nolog", timeout=60)
    assert_one_line_error(result, "error: setting STORE_BATCH_SIZE must be a whole number >= 1, not '0'")
    assert not database.exists()


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("DEPTH_LIMIT", "-1", "a whole number >= 0, not '-1'"),
        ("STORE_BATCH_SIZE", "-5", "a whole number >= 1, not '-5'"),
        ("ANCHOR_WINDOW", "0", "a whole number >= 1, not '0'"),
        ("DOWNLOAD_TIMEOUT", "soon", "a number > 0, not 'soon'"),
        ("DEPTH_LIMIT", "1.5", "a whole number >= 0, not '1.5'"),
        ("DUPLICATE_THRESHOLD", "nan", "a number > 0 and <= 1, not 'nan'"),
        ("DUPLICATE_THRESHOLD", "0", "a number > 0 and <= 1, not '0'"),
        ("DOWNLOAD_DELAY", "inf", "a number >= 0, not 'inf'"),
        ("ROBOTSTXT_OBEY", "perhaps", "True or False, not 'perhaps'"),
        ("SKETCH_SEED", str(2**64), f"a whole number >= 0 and <= {2**64 - 1}, not '{2**64}'"),
    ],
)
def test_settings_out_of_their_range_are_refused(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(f"setting {name} must be {message}")):
        check_settings(project_crawler(**{name: value}).settings)


@pytest.mark.parametrize("options", [["--depth-limit", "-2"], ["--max-pages", "0"]])
def test_count_options_below_one_are_refused(capsys: pytest.CaptureFixture[str], options: list[str]) -> None:
    assert_one_line_error(in_process(capsys, "crawl", SEED, *options), f"argument {options[0]}: must be at least 1, not {options[1]}")


def test_every_numeric_and_boolean_setting_has_a_range_its_default_is_in() -> None:
    import mirrorscope.settings as project

    typed = {name for name in dir(project) if name.isupper() and isinstance(getattr(project, name), (int, float))}
    assert typed - set(RANGES) == set()
    check_settings(project_crawler().settings)


def test_a_binary_hosts_file_is_one_line(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_bytes(b"127.0.0.1 a.test\n\xff\xfe\x00binary\x1b")
    database = tmp_path / "store.db"
    assert_one_line_error(
        mirror_report("crawl", SEED, "--db", f"sqlite:///{database}", "--hosts-file", str(hosts)),
        f"cannot read hosts file {hosts}: not UTF-8 text (byte 17)",
    )
    assert not database.exists()


# -- databases: only crawl, demo and db upgrade make one; a newer one is refused by name ----


@pytest.mark.parametrize(
    "command", [["report"], ["detect"], ["duplicates"], ["similar", "http://a.test/"], ["db", "current"]], ids=lambda c: c[0]
)
def test_reading_commands_do_not_make_a_database_at_a_mistyped_path(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    database = tmp_path / "stroe.db"
    assert_one_line_error(in_process(capsys, *command, "--db", f"sqlite:///{database}"), f"no database at {database}")
    assert not database.exists()


def test_report_does_not_make_the_default_database(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run([sys.executable, "-m", "mirrorscope.report.cli", "report"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert_one_line_error(result, f"no database at {tmp_path / 'mirrorscope.db'}")
    assert os.listdir(tmp_path) == []


def test_an_empty_file_is_no_store_and_stays_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "empty.db"
    database.touch()
    assert_one_line_error(in_process(capsys, "report", "--db", f"sqlite:///{database}"), "holds no mirrorscope store")
    assert database.stat().st_size == 0


COMMANDS = [["report"], ["detect"], ["duplicates"], ["similar", "http://a.test/"], ["db", "current"], ["db", "upgrade"], ["crawl", SEED]]


def test_a_database_of_a_newer_version_is_named_with_its_revision(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    engine = make_engine(upgraded(db_url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'f00d0099'"))
    engine.dispose()
    message = f"is at revision 'f00d0099', unknown to this version of mirrorscope (it knows up to '{head_revision()}')"
    assert_one_line_error(mirror_report("report", "--db", db_url), message)
    for command in COMMANDS:
        assert_one_line_error(in_process(capsys, *command, "--db", db_url), message)


def test_a_reading_command_still_upgrades_an_older_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = upgraded(f"sqlite:///{tmp_path / 'old.db'}")
    engine = make_engine(url)
    downgrade(engine, "0006")
    result = in_process(capsys, "report", "--db", url, "--format", "json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert current_revision(engine) == head_revision()
    engine.dispose()


def _upgrade_at_once(url: str, barrier: Any, as_crawl: bool) -> None:
    barrier.wait()
    if as_crawl:  # what `crawl` does: check_crawl_input and the crawl's context open the store
        Store(url).close()
        sys.exit(0)
    sys.exit(main(["db", "upgrade", "--db", url]))


def test_migrations_started_at_once_take_turns(db_url: str) -> None:
    """Four processes bring one fresh store to head at the same moment: two as `db
    upgrade`, two as crawls do. Without the lock all but one died creating the tables."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(4)
    workers = [context.Process(target=_upgrade_at_once, args=(db_url, barrier, n % 2 == 1)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    engine = make_engine(db_url)
    assert current_revision(engine) == head_revision() and "crawl_runs" in inspect(engine).get_table_names()
    engine.dispose()


# -- output files and echoed arguments -------------------------------------------------------


def test_output_into_a_missing_directory_or_onto_a_directory_is_one_line(tmp_path: Path) -> None:
    url = upgraded(f"sqlite:///{tmp_path / 'store.db'}")
    missing = tmp_path / "no" / "report.json"
    assert_one_line_error(mirror_report("--db", url, "--format", "json", "--output", str(missing)), f"directory {missing.parent} does not exist")
    assert_one_line_error(mirror_report("duplicates", "--db", url, "--output", str(tmp_path)), f"--output {tmp_path} is a directory")
    assert not missing.parent.exists()


def test_arguments_are_echoed_without_their_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = upgraded(f"sqlite:///{tmp_path / 'store.db'}")
    assert_one_line_error(mirror_report("similar", HOSTILE, "--db", url), f"no link to {SHOWN} and no title for it in the store")
    assert_one_line_error(in_process(capsys, HOSTILE), f"unrecognized arguments: {SHOWN}")
    assert_one_line_error(scrapy_crawl("-a", f"seeds={tmp_path / HOSTILE}", "--nolog"), f"seeds file not found: {tmp_path}/{SHOWN}")


# -- a crawled store: titles with control characters, and reading it read-only -------------------


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A finished crawl of a host whose title and anchor text hold ``HOSTILE`` (as
    character references): (the store's file, the host's name)."""
    tmp = tmp_path_factory.mktemp("hostile")
    hostile = "&#27;[31mred&#7;bell&#127;&#x202E;evil"
    index = f"<html><head><title>{hostile}</title></head><body><p>An index of notes on tides and weather.</p>" \
            f'<a href="/a.html">{hostile} tide tables</a> <a href="/b.html">weather notes</a></body></html>'
    pages = {"/": Resource(body=index.encode())}
    pages |= {f"/{n}.html": Resource(body=f"<title>{hostile} {n}</title><p>Notes {n} on the tides of {n}.</p>".encode()) for n in "ab"}
    world = World(seed=0, hosts=[Host("www.tide-notes.org", "127.0.1.90", "other", pages)], seed_paths=[("www.tide-notes.org", "/")])
    database = tmp / "store.db"
    crawl_world(world, tmp, f"sqlite:///{database}")
    yield database, "www.tide-notes.org"


def test_titles_with_control_characters_are_stored_raw_and_never_shown_raw(hostile_store: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    database, host = hostile_store
    url = f"sqlite:///{database}"
    store = Store(url, access="read")
    titles = {p["url"].split("/", 3)[-1]: p["title"] for p in store.pages()}
    target = next(p["url"] for p in store.pages() if p["url"].endswith("/a.html"))
    store.close()
    assert titles[""] == HOSTILE and titles["a.html"].startswith(HOSTILE)
    results = [mirror_report("report", "--db", url)]
    results += [in_process(capsys, *args, "--db", url) for args in (["--format", "csv"], ["--format", "json"], ["duplicates"], ["similar", target])]
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
        assert not any(c in result.stdout + result.stderr for c in RAW), result.args
    assert all(host in results[n].stdout for n in (0, 2, 4))


def test_a_read_only_store_is_reported_without_a_write(hostile_store: tuple[Path, str], tmp_path: Path) -> None:
    """The store and its directory are made read-only. As root chmod stops nothing, so the
    commands run as an unprivileged user of a user namespace, where it does."""
    folder = tmp_path / "ro"
    folder.mkdir()
    database = folder / "store.db"
    shutil.copyfile(hostile_store[0], database)
    database.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    before = (database.read_bytes(), database.stat().st_mtime_ns)
    as_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if os.geteuid() == 0 else []
    try:
        if as_user:
            denied = run_cli(*as_user, sys.executable, "-c", f"open({str(database)!r}, 'r+b')")
            assert "Permission denied" in denied.stderr, "the namespace does not stop writes: the test would prove nothing"
        for args, shown in ((["report", "--format", "json"], "www.tide-notes.org"), (["duplicates"], "Near-duplicate clusters"),
                            (["db", "current"], f"at revision {head_revision()}")):
            result = run_cli(*as_user, sys.executable, "-m", "mirrorscope.report.cli", *args, "--db", f"sqlite:///{database}")
            assert result.returncode == 0 and shown in result.stdout, result.stderr[-3000:]
        assert sorted(os.listdir(folder)) == ["store.db"]
        assert (database.read_bytes(), database.stat().st_mtime_ns) == before
    finally:
        folder.chmod(stat.S_IRWXU)


def test_a_read_only_open_sets_no_journal_mode(hostile_store: tuple[Path, str], tmp_path: Path) -> None:
    """Even where writes are allowed, a reader leaves the file alone (a -wal file beside it
    is SQLite's own, and holds nothing)."""
    database = tmp_path / "store.db"
    shutil.copyfile(hostile_store[0], database)
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    before = (database.read_bytes(), database.stat().st_mtime_ns)
    assert mirror_report("report", "--db", f"sqlite:///{database}").returncode == 0
    assert (database.read_bytes(), database.stat().st_mtime_ns) == before


# -- every renderer neutralises every crawled string ---------------------------------------------


def _hostile_report() -> dict[str, Any]:
    run = {"id": 1, "status": HOSTILE, "started_at": None, "finished_at": None, "seconds": None, "seeds": [HOSTILE]}
    verdict = {"host": HOSTILE, "score": 0.9, "pages": 2, "reasons": [HOSTILE], "features": {HOSTILE: 1.0}}
    return {
        "crawl": {"runs": 1, "last_run": run, "hosts": 1, "pages": 2, "links": 1, "bytes": 9, "outcomes": {HOSTILE: 2}},
        "hosts": [{"host": HOSTILE, "ip": HOSTILE, "registrable_domain": HOSTILE, "pages": 2}],
        "mirrors": [{"a": "=" + HOSTILE, "b": HOSTILE, "level": HOSTILE, "score": 0.5, "paths_checked": 2, "paths_matched": 2,
                     "fractions": {"a_on_b": 1.0, "b_on_a": 1.0}, "inferred": False, "features": {HOSTILE: 0.5}, "reasons": [HOSTILE]}],
        "mirror_clusters": [[HOSTILE, HOSTILE]],
        "duplicate_clusters": [{"size": 2, "identical": True, "representative": HOSTILE, "members": [HOSTILE, "@" + HOSTILE]}],
        "containment": [{"page": HOSTILE, "container": HOSTILE, "containment": 0.9, "source": HOSTILE}],
        "spam_hosts": [verdict], "traps": [verdict], "method": HOSTILE,
    }


def _table(renderer: Any, report: dict[str, Any], **options: Any) -> str:
    console = Console(file=io.StringIO(), width=400)
    renderer(report, console, **options)
    return console.file.getvalue()


def test_every_renderer_neutralises_every_crawled_string() -> None:
    report = _hostile_report()
    outputs = {
        "table": _table(render.render_table, report),
        "duplicates table": _table(render.render_duplicates_table, report, limit=5),
        "similar table": _table(render.render_similar_table, {"url": HOSTILE, "similar": [{"url": HOSTILE, "similarity": 0.5}]}),
        "csv": render.render_csv(report),
        "duplicates csv": render.render_duplicates_csv(report),
        "json": render.render_json(report),
    }
    for name, output in outputs.items():
        assert not any(c in output for c in RAW), name
        assert SHOWN in output or "\\u001b[31mred\\u0007bell\\u007f\\u202eevil" in output, name
    assert "'=\\x1b" in outputs["csv"] and "'@\\x1b" in outputs["duplicates csv"]
    assert outputs["csv"].splitlines()[0].endswith(SHOWN)
