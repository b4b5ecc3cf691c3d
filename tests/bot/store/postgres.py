"""The PostgreSQL the store tests run against (the machines run one on 127.0.0.1:5432), and databases made
and dropped on it through the `postgres` database."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from bot.store import Database, StoreUnavailable, check_reachable, connect
from bot.store.migrate import upgrade
from bot.store.models import Base

PG_HOST = "127.0.0.1"
PG_PORT = 5432
ADMIN_URL = f"postgresql+asyncpg://postgres@{PG_HOST}:{PG_PORT}/postgres"

MakeDatabase = Callable[[], Awaitable[str]]
EVERY_TABLE = ", ".join(table.name for table in Base.metadata.sorted_tables)


def pg_url_of(name: str) -> str:
    """The URL people would write (`postgresql://…`): normalising it to asyncpg is the store's job."""
    return f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{name}"


def unique_name(kind: str) -> str:
    return f"parley_test_{kind}_{os.getpid()}_{uuid.uuid4().hex[:8]}"


async def create_database(name: str) -> None:
    admin = connect(ADMIN_URL)
    problem = None
    try:
        await check_reachable(admin)
    except StoreUnavailable as exc:
        problem = str(exc)
    finally:
        await admin.aclose()
    if problem is not None:  # an error of every PostgreSQL test, never a skip
        pytest.fail(f"the store tests need PostgreSQL: {problem}", pytrace=False)
    await _admin_sql(f'CREATE DATABASE "{name}"')


async def migrate_database(url: str) -> None:
    """Migrate to the newest schema, as `parley db upgrade` does."""
    db = connect(url)
    try:
        await upgrade(db)
    finally:
        await db.aclose()


async def drop_database(name: str) -> None:
    await _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # FORCE: a killed client's sessions too


async def _admin_sql(statement: str) -> None:
    engine = create_async_engine(ADMIN_URL, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.exec_driver_sql(statement)
    finally:
        await engine.dispose()


@contextlib.contextmanager
def session_database(kind: str) -> Iterator[str]:
    """A migrated PostgreSQL database for a test session (its URL); dropped at the end whatever happened."""
    name = unique_name(kind)
    asyncio.run(create_database(name))
    try:
        asyncio.run(migrate_database(pg_url_of(name)))
        yield pg_url_of(name)
    finally:
        asyncio.run(drop_database(name))


@contextlib.asynccontextmanager
async def emptied(url: str) -> AsyncIterator[Database]:
    """The database at `url`, every table emptied for this test (TRUNCATE: the audit log refuses DELETE);
    the engine lives on this test's event loop."""
    db = connect(url)
    async with db.engine.begin() as conn:
        await conn.exec_driver_sql(f"TRUNCATE {EVERY_TABLE} RESTART IDENTITY CASCADE")
    try:
        yield db
    finally:
        await db.aclose()
