"""Shared fixtures: a real SQLite file and a real PostgreSQL schema, and a sandbox world
served on loopback with its ground truth. Helpers that tests call directly are in
``tests/helpers.py``."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mirrorscope.sandbox import SandboxServer, World, build_world

PG_HOST, PG_PORT, PG_DB = "127.0.0.1", 5432, os.environ.get("MIRRORSCOPE_TEST_PG_DB", "test")


REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _postgres_answers() -> bool:
    return _answers(PG_HOST, PG_PORT)


@pytest.fixture
def redis_url() -> str:
    """The real Redis (db 0; tests keep apart by key prefix)."""
    if not _answers(REDIS_HOST, REDIS_PORT):
        pytest.skip(f"no Redis server answers at {REDIS_HOST}:{REDIS_PORT} (.ci/run starts one)")
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/0"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema in the real PostgreSQL, dropped afterwards."""
    if not _postgres_answers():
        pytest.skip(f"no PostgreSQL server answers at {PG_HOST}:{PG_PORT}")
    import psycopg

    schema = f"ms_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DB, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"postgresql+psycopg://{PG_HOST}:{PG_PORT}/{PG_DB}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, dbname=PG_DB, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each store test runs on SQLite and on the real PostgreSQL."""
    return request.getfixturevalue(f"{request.param}_url")


# -- the sandbox: a world, served on 127.0.1.x, and its ground truth ------------------------
# A test module that needs another world overrides `world`; `server` and `truth` follow.


@pytest.fixture(scope="module")
def world() -> World:
    """The standard world (``build_world(0)``), built once per module."""
    return build_world(0)


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[SandboxServer]:
    """The module's world served over real sockets, on a free port."""
    with SandboxServer(world) as running:
        yield running


@pytest.fixture(scope="module")
def truth(world: World, server: SandboxServer) -> dict:
    """The ground truth of the served world, its URLs on the server's port."""
    return world.ground_truth(server.port)
