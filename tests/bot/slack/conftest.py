"""Fixtures of the Slack tests: the fake Slack Web API, and a PostgreSQL database of their own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from bot.store import Database
from tests.bot.store.postgres import emptied, session_database
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
def slack_api() -> Iterator[FakeSlackApi]:
    with FakeSlackApi() as fake:
        yield fake
