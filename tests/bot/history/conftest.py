"""Fixtures of the history tests: `parley runs …` run as separate processes on SQLite and on PostgreSQL.

Both stores are filled the way people fill them — `parley db upgrade`, `parley demo` and
`parley ask --replay …` record real runs — once per session, both at once. Each SQLite test gets its own
copy of that file in its tmp_path; PostgreSQL tests share one database created for the session (dropped at
its end) and take out the bulk rows they put in.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.bot.history.parley_cli import ParleyCli
from tests.bot.history.postgres import create_database, drop_database
from tests.bot.history.run_rows import RunRows
from tests.bot.history.stores import SessionStores, Store, record_runs

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh database for the session, migrated by `parley db upgrade` (in `session_stores`)."""
    name, url = create_database("parley_history")
    try:
        yield url
    finally:
        drop_database(name)


@pytest.fixture(scope="session")
def session_stores(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> SessionStores:
    sqlite_dir = tmp_path_factory.mktemp("sqlite_template")
    template = sqlite_dir / "parley.db"
    sqlite = ParleyCli(sqlite_dir, f"sqlite:///{template}")
    postgres = ParleyCli(tmp_path_factory.mktemp("postgres_session"), postgres_url)
    with ThreadPoolExecutor(2) as pool:
        sqlite_runs, postgres_runs = pool.map(record_runs, (sqlite, postgres))
    assert not template.with_name("parley.db-wal").exists(), "the last connection should have checkpointed"
    return SessionStores(template, sqlite_runs, postgres_url, postgres_runs)


def _store(backend: str, session_stores: SessionStores, tmp_path: Path) -> Iterator[Store]:
    if backend == "sqlite":
        path = tmp_path / "parley.db"
        shutil.copyfile(session_stores.sqlite_template, path)
        url = f"sqlite:///{path}"
        yield Store(backend, ParleyCli(tmp_path, url), RunRows(url), session_stores.sqlite_runs)
        return
    rows = RunRows(session_stores.postgres_url)
    try:
        yield Store(backend, ParleyCli(tmp_path, session_stores.postgres_url), rows, session_stores.postgres_runs)
    finally:
        rows.remove_inserted()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, session_stores: SessionStores, tmp_path: Path) -> Iterator[Store]:
    """The recorded runs on one backend; bulk rows a test inserts through `store.rows` are its own."""
    yield from _store(request.param, session_stores, tmp_path)


@pytest.fixture
def sqlite_store(session_stores: SessionStores, tmp_path: Path) -> Iterator[Store]:
    """For behaviour that does not depend on the database (argument checks): SQLite only."""
    yield from _store("sqlite", session_stores, tmp_path)


@pytest.fixture(params=BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ParleyCli]:
    """`parley` pointed at a database with no Parley tables: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield ParleyCli(tmp_path, f"sqlite:///{tmp_path / 'empty.db'}")
        return
    name, url = create_database("parley_history_empty")
    try:
        yield ParleyCli(tmp_path, url)
    finally:
        drop_database(name)
