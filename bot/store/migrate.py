"""Migrations: Alembic driven on our own connection, and the schema check every entry point makes."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from bot.store.database import Database
from bot.store.errors import SchemaOutOfDate

UPGRADE_HINT = "run `parley db upgrade`"


def migrations_dir() -> Path:
    """`migrations/` beside the packages in a checkout, `bot/migrations` inside a wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "migrations", here / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError(f"the migrations are missing (looked in {here.parent / 'migrations'})")


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "no migrations found"
    return head


async def upgrade(db: Database, revision: str = "head") -> None:
    async with db.transaction() as conn:
        await conn.run_sync(lambda sync: command.upgrade(alembic_config(sync), revision))


async def downgrade(db: Database, revision: str) -> None:
    async with db.transaction() as conn:
        await conn.run_sync(lambda sync: command.downgrade(alembic_config(sync), revision))


async def current_revision(db: Database) -> str | None:
    async with db.connection() as conn:
        return await conn.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())


async def ensure_current(db: Database, *, create_if_empty: bool = False) -> None:
    """Refuse an out-of-date schema; an empty embedded database may be created at the newest revision."""
    current = await current_revision(db)
    head = head_revision()
    if current == head:
        return
    if current is None and create_if_empty:
        await upgrade(db)
        return
    state = "has no Parley tables" if current is None else f"is at revision {current}"
    raise SchemaOutOfDate(f"the database at {db.shown_url} {state}; this Parley needs {head}: {UPGRADE_HINT}")
