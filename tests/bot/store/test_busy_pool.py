"""A pool with every connection busy (a burst) is waited for; only a longer wait counts as a failure."""

from __future__ import annotations

import asyncio

import pytest

from bot.store import StoreBusy, StoreUnavailable, connect
from bot.store.database import patiently
from bot.store.runs import load_run


async def test_work_waits_for_a_busy_pool_and_goes_through_once_a_connection_is_free(pg_url: str) -> None:
    db = connect(pg_url, pool_size=1, pool_timeout_s=0.1)  # two connections at most
    try:
        async with db.engine.connect() as first, db.engine.connect() as second:
            await first.exec_driver_sql("SELECT 1")
            await second.exec_driver_sql("SELECT 1")
            waiting = asyncio.create_task(patiently(lambda: load_run(db, "no-such-run"), patience_s=10))
            await asyncio.sleep(0.5)  # five pool timeouts go by
            assert not waiting.done()
        assert await waiting is None  # answered once a connection was free
    finally:
        await db.aclose()


async def test_a_pool_busy_for_longer_than_the_patience_fails_like_any_failure(pg_url: str) -> None:
    db = connect(pg_url, pool_size=1, pool_timeout_s=0.1)
    try:
        async with db.engine.connect() as first, db.engine.connect() as second:
            await first.exec_driver_sql("SELECT 1")
            await second.exec_driver_sql("SELECT 1")
            with pytest.raises(StoreBusy, match=r"every connection to the database at .* is in use") as caught:
                await patiently(lambda: load_run(db, "no-such-run"), patience_s=0.3)
    finally:
        await db.aclose()
    assert isinstance(caught.value, StoreUnavailable)  # callers that catch an outage catch this too


async def test_a_database_that_cannot_be_reached_is_not_waited_for() -> None:
    db = connect("postgresql://parley@127.0.0.1:1/parley", pool_size=1, pool_timeout_s=0.1)
    clock = asyncio.get_running_loop()
    started = clock.time()
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await patiently(lambda: load_run(db, "no-such-run"), patience_s=30)
    finally:
        await db.aclose()

    assert not isinstance(caught.value, StoreBusy)
    assert clock.time() - started < 10  # not the 30 s of patience: an outage fails at once
