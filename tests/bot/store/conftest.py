"""Fixtures of the store tests: a real PostgreSQL database for the session, a SQLite file per test.

PostgreSQL: one database with a unique name is created through the `postgres` database when the session
starts, migrated once with `bot.store.migrate.upgrade` (what `parley db upgrade` runs in production) and
dropped when the session ends, whatever happened. PostgreSQL being unreachable is an error of every test
that needs it, never a skip: the store is tested against the real thing or not at all.

Isolation: each PostgreSQL test starts with `TRUNCATE … RESTART IDENTITY CASCADE` of every store table.
Unique run ids alone would not do: some tests read whole tables (the secrets test dumps every row of every
table, the concurrency test counts them all). TRUNCATE fires no row triggers, so the fixture can empty the
audit log while DELETE and UPDATE stay refused for the code under test. SQLite: the schema is migrated once
into a template file and each test works on its own copy in tmp_path.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.store import Database, connect
from tests.bot.store.postgres import (
    MakeDatabase,
    create_database,
    drop_database,
    emptied,
    migrate_database,
    pg_url_of,
    unique_name,
)


@pytest.fixture(scope="session")
def pg_name() -> Iterator[str]:
    """The session's PostgreSQL database, migrated to head once; dropped at the end even after failures."""
    name = unique_name("store")
    asyncio.run(create_database(name))
    try:
        asyncio.run(migrate_database(pg_url_of(name)))
        yield name
    finally:
        asyncio.run(drop_database(name))


@pytest.fixture(scope="session")
def pg_url(pg_name: str) -> str:
    return pg_url_of(pg_name)


@pytest.fixture
async def postgres_db(pg_url: str) -> AsyncIterator[Database]:
    """The session's database, emptied for this test; the engine lives on this test's event loop."""
    async with emptied(pg_url) as db:
        yield db


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite") / "template.db"
    asyncio.run(migrate_database(f"sqlite:///{path}"))
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "the template's WAL was not checkpointed on close"
    return path


@pytest.fixture
async def sqlite_db(sqlite_template: Path, tmp_path: Path) -> AsyncIterator[Database]:
    path = tmp_path / "parley.db"
    shutil.copyfile(sqlite_template, path)
    db = connect(f"sqlite:///{path}")
    try:
        yield db
    finally:
        await db.aclose()


@pytest.fixture(params=["postgresql", "sqlite"])
def db(request: pytest.FixtureRequest) -> Database:
    """For what must hold on both back-ends: the test runs once on each."""
    return request.getfixturevalue("postgres_db" if request.param == "postgresql" else "sqlite_db")


@pytest.fixture
async def make_pg_database() -> AsyncIterator[MakeDatabase]:
    """Throwaway PostgreSQL databases (empty, no schema) for tests that must not touch the shared one."""
    made: list[str] = []

    async def make() -> str:
        name = unique_name("scratch")
        await create_database(name)
        made.append(name)
        return name

    try:
        yield make
    finally:
        for name in made:
            await drop_database(name)
