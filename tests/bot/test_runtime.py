"""The runtime's start: first-use costs are paid before anyone is served (the checker's language data, the
database's connections), and a database that cannot be reached at start does not stop it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from bot.assembly import build_runtime
from bot.settings import Settings
from bot.store import Database, connect
from tests.agent.test_warm_up import loaded_once
from tests.bot.slack.harness import agent_for
from tests.bot.store.postgres import session_database
from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture(scope="module")
def runtime_pg_url() -> Iterator[str]:
    with session_database("runtime") as url:
        yield url


@pytest.fixture
async def db(runtime_pg_url: str) -> AsyncIterator[Database]:
    store = connect(runtime_pg_url, pool_size=3)
    try:
        yield store
    finally:
        await store.aclose()


async def test_runtime_start_pays_first_use_costs_before_serving(db: Database, llm_server: FakeLLMServer) -> None:
    caches = loaded_once()
    async with httpx.AsyncClient() as http, agent_for(llm_server.base_url, ["calculator"], http) as agent:
        runtime = build_runtime(Settings(workers=1), db, agent)
        await runtime.start()
        try:
            assert {name for name, cache in caches.items() if cache.cache_info().currsize == 0} == set()
            assert db.engine.pool.checkedin() == 3  # type: ignore[attr-defined]  # the pool's connections, open
        finally:
            await runtime.stop()


async def test_runtime_starts_when_the_database_cannot_be_reached(llm_server: FakeLLMServer, caplog) -> None:
    closed = connect("postgresql://postgres@127.0.0.1:1/nothing", pool_size=2)  # nothing listens on port 1
    try:
        async with httpx.AsyncClient() as http, agent_for(llm_server.base_url, ["calculator"], http) as agent:
            runtime = build_runtime(Settings(workers=1), closed, agent)
            await runtime.start()
            await runtime.stop()
    finally:
        await closed.aclose()
    assert any("could not open the database's connections at start" in r.getMessage() for r in caplog.records)
