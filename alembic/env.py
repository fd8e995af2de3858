"""Alembic environment: runs the migrations on a connection mirrorscope hands over,
or on DATABASE_URL / sqlalchemy.url when Alembic's command line is used directly."""

import os

from alembic import context
from sqlalchemy import engine_from_config, pool

from mirrorscope.storage.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    section = config.get_section(config.config_ini_section, {})
    if os.environ.get("DATABASE_URL"):
        section["sqlalchemy.url"] = os.environ["DATABASE_URL"]
    engine = engine_from_config(section, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("mirrorscope migrations run online only: give a database URL")
run_migrations_online()
