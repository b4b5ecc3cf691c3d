"""Fixtures of the timed-job tests: a PostgreSQL database of their own (emptied per test), more engines on
it to play other replicas, and SQLite files for what must hold on the embedded store too."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.store import Database, connect
from tests.bot.jobs.rows import MakeReplica
from tests.bot.store.postgres import emptied, migrate_database, session_database


@pytest.fixture(scope="session")
def jobs_pg_url() -> Iterator[str]:
    with session_database("jobs") as url:
        yield url


@pytest.fixture(scope="session")
def jobs_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("jobs-sqlite") / "template.db"
    asyncio.run(migrate_database(f"sqlite:///{path}"))
    return path


@pytest.fixture
async def db(jobs_pg_url: str) -> AsyncIterator[Database]:
    """The jobs' PostgreSQL database, emptied for this test."""
    async with emptied(jobs_pg_url) as store:
        yield store


@pytest.fixture
async def replica(db: Database) -> AsyncIterator[MakeReplica]:
    """Another process on the same database: a separate engine with its own connections."""
    engines: list[Database] = []

    def make() -> Database:
        engines.append(connect(db.url.render_as_string(hide_password=False)))
        return engines[-1]

    try:
        yield make
    finally:
        for engine in engines:
            await engine.aclose()


@pytest.fixture
async def sqlite_store(jobs_sqlite_template: Path, tmp_path: Path) -> AsyncIterator[tuple[Database, MakeReplica]]:
    """A SQLite file of this test's own, and a maker of more engines (replicas) on that file."""
    path = tmp_path / "parley.db"
    shutil.copyfile(jobs_sqlite_template, path)
    engines = [connect(f"sqlite:///{path}")]

    def make() -> Database:
        engines.append(connect(f"sqlite:///{path}"))
        return engines[-1]

    try:
        yield engines[0], make
    finally:
        for engine in engines:
            await engine.aclose()


@pytest.fixture(params=["postgresql", "sqlite"])
def lease_store(request: pytest.FixtureRequest) -> tuple[Database, MakeReplica]:
    """A store and a maker of replicas on it: the test runs once on PostgreSQL, once on a SQLite file."""
    if request.param == "postgresql":
        return request.getfixturevalue("db"), request.getfixturevalue("replica")
    return request.getfixturevalue("sqlite_store")
