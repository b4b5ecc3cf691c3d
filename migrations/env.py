"""Alembic environment: run by `parley db upgrade|downgrade` (bot/store/migrate.py) on its connection."""

from __future__ import annotations

from alembic import context

from bot.store.models import Base

target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("run migrations through `parley db upgrade`, which passes the connection")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported; use `parley db upgrade`")
run_migrations_online()
