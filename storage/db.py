"""Engines and the schema: which database, how it is connected, and bringing it to head.

The database URL is chosen, first match wins: the ``--db`` option of ``mirror-report``,
the Scrapy setting ``DATABASE_URL`` (``-s DATABASE_URL=...``), the environment variable
``DATABASE_URL``, then :data:`DEFAULT_DATABASE_URL`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

#: Embedded by default, so a new user needs no server.
DEFAULT_DATABASE_URL = "sqlite:///mirrorscope.db"



def _migrations() -> str:
    """The migrations' folder: ``alembic/`` in the checkout, ``mirrorscope/migrations`` installed."""
    spec = importlib.util.find_spec("mirrorscope.migrations")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the migrations are not installed with mirrorscope: reinstall the package")
    return list(spec.submodule_search_locations)[0]


class StoreError(Exception):
    """A database URL or connection that cannot be used; the message is one line."""


def resolve_database_url(cli_value: str | None = None, setting: str | None = None) -> str:
    """The URL to use, by the precedence in the module docstring."""
    return cli_value or setting or os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the report read while a crawl writes; NORMAL is durable at each checkpoint.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; raises :class:`StoreError` with a one-line reason."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"bad database URL {url!r}: expected e.g. sqlite:///mirrorscope.db") from None
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in ("", "psycopg2"):
        # psycopg 3 is the driver this project installs (the `postgres` extra).
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {parsed.get_backend_name()!r} in {url!r}: use sqlite or postgresql")
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        parent = Path(parsed.database).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"bad database URL {url!r}: directory {parent} does not exist")
    try:
        engine = create_engine(parsed, pool_pre_ping=True)
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"cannot use {url!r}: {exc} (install mirrorscope[postgres] for PostgreSQL)") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", _migrations())
    return config


def head_revision() -> str:
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on ``engine``."""
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def ensure_schema(engine: Engine) -> None:
    """Bring a fresh or older database to head; a no-op when it is there already."""
    try:
        at_head = current_revision(engine) == head_revision()
    except Exception as exc:  # the driver's own errors: refused connection, bad file...
        raise StoreError(f"cannot open database {engine.url.render_as_string(hide_password=True)}: {_first_line(exc)}") from None
    if not at_head:
        upgrade(engine)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
