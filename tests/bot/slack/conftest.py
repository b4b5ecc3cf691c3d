"""Fixtures of the Slack tests: the fake Slack Web API, and a PostgreSQL database of their own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from bot.store import Database, connect
from bot.store.models import Base
from tests.bot.store.postgres import create_database, drop_database, migrate_database, pg_url_of, unique_name
from tests.fakes.slack_api import FakeSlackApi

TABLES = ", ".join(table.name for table in Base.metadata.sorted_tables)


@pytest.fixture(scope="session")
def slack_pg_url() -> Iterator[str]:
    name = unique_name("slack")
    asyncio.run(create_database(name))
    try:
        asyncio.run(migrate_database(pg_url_of(name)))
        yield pg_url_of(name)
    finally:
        asyncio.run(drop_database(name))


@pytest.fixture
async def db(slack_pg_url: str) -> AsyncIterator[Database]:
    store = connect(slack_pg_url)
    async with store.engine.begin() as conn:
        await conn.exec_driver_sql(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
    try:
        yield store
    finally:
        await store.aclose()


@pytest.fixture
def slack_api() -> Iterator[FakeSlackApi]:
    with FakeSlackApi() as fake:
        yield fake
