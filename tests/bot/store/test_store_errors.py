"""A database that is down leaves the store as `StoreUnavailable`, whatever was asked of it: no SQLAlchemy,
asyncpg or socket exception escapes. What is not an outage (a refused value, a missing run, a bad cursor) is
told apart. PostgreSQL is refused (nothing listens), or reached through a TCP proxy the test cuts."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from agent import RunStarted
from bot.store import (
    AmbiguousRun,
    Ask,
    BadCursor,
    Conversation,
    Database,
    RunNotFound,
    RunOrigin,
    RunSource,
    StoreBusy,
    StoreError,
    StoreRecorder,
    StoreUnavailable,
    check_reachable,
    connect,
    ensure_current,
)
from bot.store.lifecycle import Change
from bot.store.migrate import current_revision, downgrade, upgrade
from bot.store.models import Run
from bot.store.queries import RunFilter, decode_cursor, export_rows, list_runs, load_trace, resolve_run_id
from bot.store.rows import stored_run
from bot.store.runs import end_run, enqueue, enqueue_retry, load_run, set_reply_ts, thread_history, thread_is_ours
from bot.store.vocabulary import AuditAction
from tests.bot.store.postgres import PG_PORT
from tests.bot.store.recording import CLI
from tests.fakes.tcp_proxy import TcpProxy

DEADLINE_S = 20
SECRET = "s3cret-pw"
NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
THREAD = Conversation("T0TEAM", "C0CHAN", "1700000000.000100")
ASK = Ask("q?", RunOrigin(RunSource.SLACK, "U0ASKER", THREAD), message="1700000000.000200")
A_RUN = stored_run(
    Run(
        id="a" * 32, source="slack", workspace_id="T0TEAM", channel_id="C0CHAN", thread_ts="1", asker="U0ASKER",
        question="q?", status="queued", created_at=NOW,
    )
)  # fmt: skip


async def _first_run(db: Database) -> dict[str, Any] | None:
    async for row in export_rows(db, RunFilter()):
        return row
    return None


def _started(db: Database) -> Awaitable[None]:
    event = RunStarted(run_id="r" * 32, question="q?", brain="b", replayed=False, tools=[], limits={})
    return StoreRecorder(db, CLI, write_timeout_s=DEADLINE_S).record(event)


async def _aiosqlite_threads_ended() -> None:
    """aiosqlite's thread of a connection that failed to open reports to the loop a moment later: the loop must
    still be running then (else the thread raises "Event loop is closed")."""
    deadline = asyncio.get_running_loop().time() + DEADLINE_S
    while any("_connection_worker_thread" in t.name for t in threading.enumerate()):
        assert asyncio.get_running_loop().time() < deadline, "aiosqlite's connection threads did not end"
        await asyncio.sleep(0.01)


# Every way into the store a caller has, each asked once.
STORE_CALLS: dict[str, Callable[[Database], Awaitable[Any]]] = {
    "check_reachable": check_reachable,
    "current_revision": current_revision,
    "ensure_current": ensure_current,
    "upgrade": upgrade,
    "downgrade": lambda db: downgrade(db, "base"),
    "list_runs": lambda db: list_runs(db, RunFilter(statuses=["solved", "degraded"])),
    "export_rows": _first_run,
    "resolve_run_id": lambda db: resolve_run_id(db, "abcdef"),
    "load_trace": lambda db: load_trace(db, "abcdef"),
    "enqueue": lambda db: enqueue(db, ASK),
    "enqueue_retry": lambda db: enqueue_retry(db, A_RUN),
    "thread_is_ours": lambda db: thread_is_ours(db, Conversation("T0TEAM", "C0CHAN", "1")),
    "thread_history": lambda db: thread_history(db, A_RUN),
    "end_run": lambda db: end_run(
        db, "q" * 32, Change.CANCEL, answer="stopped", action=AuditAction.RUN_CANCELLED, detail={}
    ),
    "load_run": lambda db: load_run(db, "a" * 32),
    "set_reply_ts": lambda db: set_reply_ts(db, "a" * 32, "1.2"),
    "record": _started,
}


@pytest.fixture(params=["refused", "cut", "sqlite-unopenable"])
async def down(request: pytest.FixtureRequest, pg_name: str, tmp_path: Path) -> AsyncIterator[Database]:
    """A store whose database is down: nothing listens on its port; PostgreSQL cut off after it answered
    (its pooled connection dropped, new ones refused); a SQLite file that cannot be opened."""
    if request.param == "refused":
        db = connect(f"postgresql://parley:{SECRET}@127.0.0.1:1/parley")
        yield db
        await db.aclose()
        return
    if request.param == "sqlite-unopenable":
        where = tmp_path / "parley.db"
        os.mkdir(where)  # a directory where the file should be
        db = connect(f"sqlite:///{where}")
        yield db
        await db.aclose()
        await _aiosqlite_threads_ended()
        return
    async with TcpProxy(PG_PORT) as proxy:
        db = connect(f"postgresql://postgres:{SECRET}@127.0.0.1:{proxy.port}/{pg_name}")
        await check_reachable(db)  # one open connection in the pool
        await proxy.close()
        yield db
        await asyncio.wait_for(db.aclose(), DEADLINE_S)


@pytest.mark.parametrize("call", list(STORE_CALLS), ids=list(STORE_CALLS))
async def test_store_calls_on_a_database_that_is_down_raise_store_unavailable_only(down: Database, call: str) -> None:
    with pytest.raises(StoreError) as caught:
        await asyncio.wait_for(STORE_CALLS[call](down), DEADLINE_S)

    assert type(caught.value) is StoreUnavailable  # not a busy pool, not SQLAlchemy's, asyncpg's or OSError
    message = str(caught.value)
    assert message.startswith(f"cannot reach the database at {down.shown_url}: ") and "\n" not in message
    assert SECRET not in message


async def test_a_connection_cut_in_the_middle_of_a_statement_is_store_unavailable(pg_name: str) -> None:
    async with TcpProxy(PG_PORT) as proxy:
        db = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{pg_name}")
        try:

            async def slow_read() -> None:
                async with db.sessions() as session:
                    await session.execute(text("SELECT pg_sleep(10)"))

            reading = asyncio.create_task(slow_read())
            await asyncio.sleep(0.5)  # the statement is on the server
            await proxy.close()
            with pytest.raises(StoreUnavailable) as caught:
                await asyncio.wait_for(reading, DEADLINE_S)
        finally:
            await asyncio.wait_for(db.aclose(), DEADLINE_S)

    assert isinstance(caught.value.__cause__, SQLAlchemyError)  # kept for the operator's traceback


@pytest.mark.parametrize(
    "url", ["postgresql://postgres@127.0.0.1:5432/{missing}", "postgresql://nobody@127.0.0.1:5432/postgres"]
)
async def test_a_database_or_role_that_does_not_exist_is_store_unavailable(url: str) -> None:
    db = connect(url.format(missing="parley_test_no_such_database"))
    try:
        with pytest.raises(StoreUnavailable, match="does not exist"):
            await load_run(db, "a" * 32)
    finally:
        await db.aclose()


async def test_a_value_the_database_refuses_is_not_an_outage(db: Database) -> None:
    with pytest.raises(IntegrityError, match="ck_runs_status"):
        async with db.sessions() as session, session.begin():
            session.add(Run(id="x", source="cli", asker="a", question="q", status="finished-ish", created_at=NOW))

    assert await enqueue(db, ASK) is not None
    assert await enqueue(db, ASK) is None  # a redelivery: the unique key's IntegrityError, handled in the store


async def test_not_found_and_ambiguous_runs_are_their_own_errors_without_a_command_line(db: Database) -> None:
    async with db.sessions() as session, session.begin():
        for run_id in ("abcdef0" + "0" * 25, "abcdef1" + "0" * 25):
            session.add(Run(id=run_id, source="cli", asker="a", question="q", status="solved", created_at=NOW))

    with pytest.raises(RunNotFound) as unknown:
        await resolve_run_id(db, "f" * 32)
    with pytest.raises(RunNotFound) as short:
        await resolve_run_id(db, "abc")
    with pytest.raises(AmbiguousRun) as ambiguous:
        await resolve_run_id(db, "abcdef")

    assert (unknown.value.wanted, unknown.value.too_short, str(unknown.value)) == (
        "f" * 32,
        False,
        f"no run {'f' * 32!r}",
    )
    assert (short.value.too_short, str(short.value)) == (
        True,
        "no run 'abc' (give the whole id or at least 6 characters)",
    )
    assert (ambiguous.value.wanted, str(ambiguous.value)) == (
        "abcdef",
        "'abcdef' names more than one run; give more characters",
    )
    assert await resolve_run_id(db, "abcdef1") == "abcdef1" + "0" * 25


def test_a_cursor_the_store_did_not_hand_out_is_a_bad_cursor_naming_no_flag() -> None:
    with pytest.raises(BadCursor) as caught:
        decode_cursor("not-a-cursor!")

    assert caught.value.cursor == "not-a-cursor!"
    assert "--cursor" not in str(caught.value) and "parley" not in str(caught.value)


def test_store_errors_are_one_family_and_a_busy_pool_is_an_outage() -> None:
    for error in (StoreUnavailable, RunNotFound, AmbiguousRun, BadCursor):
        assert issubclass(error, StoreError) and not issubclass(error, SQLAlchemyError | OSError)
    assert issubclass(StoreBusy, StoreUnavailable)
