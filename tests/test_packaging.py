"""The package installs anywhere: the wheel built from the checkout holds only the
``mirrorscope`` namespace, every room's files and the migrations, and, installed into a
folder of its own, ``mirror-report`` runs from outside the checkout.

The wheel is built by pip (an isolated build, as ``pip install .`` does) from a copy of
the files git knows, so that no ``build/`` folder of an earlier build leaks into it and
the checkout is left as it was. The installed commands run with ``python -S`` and an
explicit ``PYTHONPATH`` (the install folder, then this environment's site-packages for
the dependencies): without ``-S`` the editable install's finder would put the checkout
into the ``mirrorscope`` namespace, and a module missing from the wheel would be loaded
from the checkout without anyone noticing. Every ``mirrorscope`` module the command
loaded must come from the install folder.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(600)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
ROOMS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]  # package -> folder

# Runs the installed ``mirror-report`` script as its own process would, and writes where
# every mirrorscope module it loaded came from (a file, or a namespace's folders), and
# where the migrations are found (storage/db.py looks them up, it does not import them).
PROBE = """
import atexit, importlib.util, json, os, runpy, sys

def _where():
    loaded = {}
    for name, module in list(sys.modules.items()):
        if name == "mirrorscope" or name.startswith("mirrorscope."):
            file = getattr(module, "__file__", None)
            loaded[name] = [file] if file else list(getattr(module, "__path__", []))
    spec = importlib.util.find_spec("mirrorscope.migrations")
    loaded["mirrorscope.migrations"] = list(spec.submodule_search_locations) if spec else []
    finders = [type(f).__name__ if not isinstance(f, type) else f.__name__ for f in sys.meta_path]
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump({"loaded": loaded, "sys_path": sys.path, "meta_path": finders}, out)

atexit.register(_where)
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


@dataclass
class Installed:
    wheel: Path
    target: Path  # pip install --target

    def run(self, workdir: Path, *args: str, timeout: float = 240) -> tuple[subprocess.CompletedProcess, dict]:
        """``mirror-report *args`` from the install, in ``workdir``; (the process, where its modules came from)."""
        probe_out = workdir / "probe.json"
        probe_out.unlink(missing_ok=True)
        dependencies = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        drop = {"DATABASE_URL", "SCRAPY_SETTINGS_MODULE", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"}
        env = {k: v for k, v in os.environ.items() if k not in drop} | {
            "PYTHONPATH": os.pathsep.join([str(self.target), *dependencies]),
            "PROBE_OUT": str(probe_out),
        }
        script = self.target / "bin" / "mirror-report"
        result = subprocess.run(
            [sys.executable, "-S", "-c", PROBE, str(script), *args],
            cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout,
        )
        assert probe_out.exists(), result.stderr[-3000:]
        return result, json.loads(probe_out.read_text())


def _source_copy(dest: Path) -> Path:
    """The files of the checkout that git tracks or would track (not ignored), copied."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    source = _source_copy(tmp_path_factory.mktemp("source"))
    wheels, target = tmp_path_factory.mktemp("wheels"), tmp_path_factory.mktemp("install")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-w", str(wheels)],
        capture_output=True, text=True, timeout=400,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = wheels.glob("mirrorscope-*.whl")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=400,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield Installed(wheel, target)


def _room_files() -> set[str]:
    """Every file of every room in the checkout, as the wheel must name it."""
    expected = set()
    for package, folder in ROOMS.items():
        root = ROOT / folder
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                expected.add("/".join([*package.split("."), *path.relative_to(root).parts]))
    return expected


def _outside(loaded: dict[str, list[str]], target: Path) -> dict[str, list[str]]:
    """The loaded mirrorscope modules (or namespace folders) that are not in ``target``."""
    return {name: places for name, places in loaded.items() if not places or any(not Path(p).is_relative_to(target) for p in places)}


def test_the_wheel_holds_only_the_namespace_every_room_and_the_migrations(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"mirrorscope", f"mirrorscope-{VERSION}.dist-info"}
    # Every room of the checkout is mapped into the namespace: a new top-level package would
    # otherwise be left out of the wheel.
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages <= set(ROOMS.values())
    assert {"crawler", "detectors", "storage", "settings", "jobs", "report", "sandbox", "alembic"} <= set(ROOMS.values())
    missing = _room_files() - set(names)
    assert not missing, sorted(missing)
    migrations = {n for n in names if n.startswith("mirrorscope/migrations/")}
    assert {"mirrorscope/migrations/env.py", "mirrorscope/migrations/script.py.mako"} <= migrations
    versions = sorted(n.rsplit("/", 1)[1] for n in migrations if n.startswith("mirrorscope/migrations/versions/"))
    assert versions[0].startswith("0001_") and len(versions) == len(list((ROOT / "alembic" / "versions").glob("*.py")))
    entry_points = zipfile.ZipFile(installed.wheel).read(f"mirrorscope-{VERSION}.dist-info/entry_points.txt").decode()
    assert "mirror-report = mirrorscope.report.cli:main" in entry_points


def test_the_installed_command_upgrades_a_new_database_from_anywhere(installed: Installed, tmp_path: Path) -> None:
    database = tmp_path / "new.db"
    result, probe = installed.run(tmp_path, "db", "upgrade", "--db", f"sqlite:///{database}")
    assert result.returncode == 0, result.stderr[-3000:]
    # The checkout is not on the path, and no editable finder is at work.
    assert not any(str(ROOT) == p or "__editable__" in p for p in probe["sys_path"]), probe["sys_path"]
    assert not any("Editable" in finder for finder in probe["meta_path"]), probe["meta_path"]
    assert "mirrorscope.storage.db" in probe["loaded"]
    assert not _outside(probe["loaded"], installed.target)
    with sqlite3.connect(database) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"alembic_version", "crawl_runs", "hosts", "pages", "links", "sketches", "mirror_pairs", "host_verdicts"} <= tables


def test_the_installed_demo_crawls_the_standard_world_finds_its_mirrors_and_renders_html(installed: Installed, tmp_path: Path) -> None:
    result, probe = installed.run(
        tmp_path, "demo", "--world", "standard", "--db", f"sqlite:///{tmp_path / 'demo.db'}", "--format", "json", timeout=400,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert not _outside(probe["loaded"], installed.target)
    assert "mirrorscope.crawler.spiders.web" in probe["loaded"]  # the crawl ran in this process
    sandbox = json.loads(result.stdout)["sandbox"]
    assert sandbox["finish_reason"] == "finished"
    assert sandbox["original_pages_stored"] == sandbox["original_pages"] > 0
    mirrors = sandbox["mirrors"]
    assert mirrors["found"] == mirrors["true_pairs"] == 3 and mirrors["false_pairs"] == mirrors["decoys_reported"] == 0, mirrors
    # The HTML report's template ships with the package.
    html = tmp_path / "report.html"
    result, probe = installed.run(tmp_path, "--db", f"sqlite:///{tmp_path / 'demo.db'}", "--format", "html", "--output", str(html))
    assert result.returncode == 0, result.stderr[-3000:]
    assert not _outside(probe["loaded"], installed.target)
    assert "mirrorscope.report.html" in probe["loaded"] and html.read_text(encoding="utf-8").count('class="edge ') == 3
