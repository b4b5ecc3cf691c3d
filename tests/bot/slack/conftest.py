"""Fixtures of the Slack tests: the fake Slack Web API, and a PostgreSQL database of their own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.store import Database
from tests.bot.slack.test_serve_process import environment, parley
from tests.bot.store.postgres import (
    create_database,
    drop_database,
    emptied,
    pg_url_of,
    session_database,
    unique_name,
)
from tests.fakes.slack_api import FakeSlackApi


@pytest.fixture(scope="session")
def slack_pg_url() -> Iterator[str]:
    with session_database("slack") as url:
        yield url


@pytest.fixture
async def db(slack_pg_url: str) -> AsyncIterator[Database]:
    async with emptied(slack_pg_url) as store:
        yield store


@pytest.fixture
def serve_db(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL database of its own for a `parley serve` process, migrated with `parley db upgrade` as an
    operator would."""
    name = unique_name("serve")
    asyncio.run(create_database(name))
    try:
        url = pg_url_of(name)
        done = parley("db", "upgrade", env=environment(tmp_path, PARLEY_DATABASE_URL=url), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        yield url
    finally:
        asyncio.run(drop_database(name))


@pytest.fixture
def slack_api() -> Iterator[FakeSlackApi]:
    with FakeSlackApi() as fake:
        yield fake
