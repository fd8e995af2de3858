"""Engines and the schema: which database, how it is connected, and bringing it to head.

The database URL is chosen, first match wins: the ``--db`` option of ``mirror-report``,
the Scrapy setting ``DATABASE_URL`` (``-s DATABASE_URL=...``), the environment variable
``DATABASE_URL``, then :data:`DEFAULT_DATABASE_URL`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

#: Embedded by default, so a new user needs no server.
DEFAULT_DATABASE_URL = "sqlite:///mirrorscope.db"

#: What a command may do to its database: ``create`` it when missing (crawl, demo, db
#: upgrade), ``write`` to one that exists (detect), or only ``read`` it (report, duplicates,
#: similar, db current), which needs no write access to the file or its directory.
Access = Literal["create", "write", "read"]
_SQLITE_MODES = {"create": "rwc", "write": "rw", "read": "ro"}
#: First key of the PostgreSQL advisory lock that serialises migrations (the second is the
#: schema's): two crawls started at once on a fresh store must not both create its tables.
_MIGRATION_LOCK = 0x6D697272  # "mirr"


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
    # First, so that the pragmas below wait for a migration in another process too.
    cursor.execute("PRAGMA busy_timeout=30000")
    # WAL lets the report read while a crawl writes; NORMAL is durable at each checkpoint.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_read_pragmas(dbapi_connection, _record) -> None:
    # Setting WAL writes the file's header: a reader leaves the journal mode alone.
    dbapi_connection.execute("PRAGMA busy_timeout=30000")


def _sqlite_file_url(parsed: URL, access: Access) -> URL:
    """``parsed`` as an SQLite URI that opens the file in ``access``'s mode (``ro`` never
    writes, ``rw`` never creates); raises :class:`StoreError` for a file that must exist."""
    path = Path(parsed.database).expanduser().resolve()
    if not path.parent.is_dir():
        raise StoreError(f"bad database URL {parsed.render_as_string()!r}: directory {path.parent} does not exist")
    if access != "create" and not path.is_file():
        raise StoreError(f"no database at {path}: `mirror-report crawl`, `demo` or `db upgrade` makes one")
    query = f"mode={_SQLITE_MODES[access]}"
    if access == "read" and not os.access(path.parent, os.W_OK) and not Path(f"{path}-wal").exists():
        # SQLite cannot read a WAL database where it may not create the -shm file, except
        # as immutable: with no -wal file beside it no writer has it open.
        query += "&immutable=1"
    return parsed.set(database=f"file:{quote(str(path))}?{query}", query={**parsed.query, "uri": "true"})


def make_engine(url: str, access: Access = "create") -> Engine:
    """An engine for ``url`` that may do ``access`` to it; raises :class:`StoreError` with a
    one-line reason."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"bad database URL {url!r}: expected e.g. sqlite:///mirrorscope.db") from None
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in ("", "psycopg2"):
        # psycopg 3 is the driver this project installs (the `postgres` extra).
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {parsed.get_backend_name()!r} in {url!r}: use sqlite or postgresql")
    # A URI the user wrote (sqlite:///file:...?uri=true) is opened as written.
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") and not parsed.database.startswith("file:"):
        parsed = _sqlite_file_url(parsed, access)
    try:
        engine = create_engine(parsed, pool_pre_ping=True)
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"cannot use {url!r}: {exc} (install mirrorscope[postgres] for PostgreSQL)") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_read_pragmas if access == "read" else _sqlite_pragmas)
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


def known_revision(engine: Engine) -> str | None:
    """The database's revision; :class:`StoreError` when it cannot be read or when a newer
    mirrorscope wrote it (a revision this version's migrations do not know)."""
    try:
        current = current_revision(engine)
    except Exception as exc:  # the driver's own errors: refused connection, bad file...
        raise StoreError(f"cannot open database {database_name(engine)}: {_first_line(exc)}") from None
    if current is not None:
        try:
            ScriptDirectory.from_config(_alembic_config()).get_revision(current)
        except CommandError:
            raise StoreError(
                f"database {database_name(engine)} is at revision {current!r}, unknown to this version of mirrorscope "
                f"(it knows up to {head_revision()!r}): a newer mirrorscope wrote it"
            ) from None
    return current


def _lock_migrations(connection: Connection) -> None:
    """Hold the migration lock until ``connection``'s transaction ends, so that a second
    process migrating at once waits and then finds the schema at head."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key, hashtext(current_schema()))"), {"key": _MIGRATION_LOCK})
    else:
        # pysqlite runs DDL outside any transaction unless one is begun explicitly.
        connection.exec_driver_sql("BEGIN EXCLUSIVE")


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on ``engine``, in one transaction
    holding the migration lock; :class:`StoreError` when the database refuses."""
    current = known_revision(engine)
    config = _alembic_config()
    try:
        with engine.begin() as connection:
            _lock_migrations(connection)
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except DBAPIError as exc:  # the driver's: a read-only file, a lost connection...
        raise StoreError(f"cannot upgrade database {database_name(engine)} from revision {current}: {_first_line(exc.orig or exc)}") from None


def downgrade(engine: Engine, revision: str) -> None:
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def ensure_schema(url: str, engine: Engine, access: Access = "create") -> None:
    """Bring a fresh (``create`` only) or older database to head; a no-op when it is
    there already. A reader upgrades through an engine of its own that may write."""
    current = known_revision(engine)
    if current == head_revision():
        return
    if current is None and access != "create":
        raise StoreError(f"database {database_name(engine)} holds no mirrorscope store: `mirror-report crawl`, `demo` or `db upgrade` makes one")
    writer = engine if access != "read" else make_engine(url, "write")
    try:
        upgrade(writer)
    finally:
        if writer is not engine:
            writer.dispose()


def database_name(engine: Engine) -> str:
    """The database as the user named it: the file of an SQLite URI, else the URL without its password."""
    database = engine.url.database or ""
    if engine.dialect.name == "sqlite" and database.startswith("file:"):
        return unquote(database.removeprefix("file:").split("?", 1)[0])
    return engine.url.render_as_string(hide_password=True)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
