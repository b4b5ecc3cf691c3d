"""The durable side of crash-safe runs: claiming a queued run, its checkpoints, its calls' intents, and what a
survivor reads back to resume it.

Every write is conditional on the writer still holding the run (`runs.owner`, status `running`): a process that
was cut off and taken for dead learns it lost the run at its next write, and records nothing more. Times are the
database's (`now()`), never a process's own clock.

Checkpoints and intents are each written by one statement, built once (`_checkpoint_upsert`, `_intents_insert`;
on PostgreSQL a step's pending checkpoint and its intents go as one, the first a CTE of the second), in the
transaction their caller gives: the step's own, which the recorder writes for its `StepDecided` anyway, or one of
their own (`save_checkpoint`, `record_intents`). `RunWriter` decides which, and keeps them in order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Integer, String, Table, Text, bindparam, exists, select, text, union_all, update
from sqlalchemy import cast as cast_as
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import func

from agent import CallIntent, ErrorCode, RunStatus
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import ENDED
from bot.store.models import CallIntentRecord, Json, Run, RunCheckpoint, ToolCallRecord, UTCDateTime
from bot.store.owners import left_behind
from bot.store.records import StoredRun
from bot.store.rows import stored_run
from bot.store.storable import storable, storable_text


@dataclass(frozen=True)
class SavedRun:
    """What a survivor resumes a run from: its last checkpoint (None: none was saved), the intents of later
    steps, and how long it has been running by the database's clock."""

    checkpoint: dict[str, Any] | None
    step: int
    intents: list[CallIntent]
    spent_s: float


@dataclass(frozen=True)
class UnknownCall:
    """A tool call whose outcome is unknown: in flight when its process stopped, and never run again."""

    run_id: str
    tool_call_id: str
    tool: str
    step: int
    at: datetime  # when it was written back as unknown


def _is_sqlite(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "sqlite"


async def claim(db: Database, run_id: str, owner: str) -> bool:
    """Queued → running, held by `owner`: one conditional UPDATE, committed before anything runs. False when
    the run is not queued under `owner` any more (ended, or taken over)."""
    async with db.sessions() as session, session.begin():
        return (
            await rows_changed(
                session,
                update(Run)
                .where(Run.id == run_id, Run.status == RunStatus.QUEUED, Run.owner == owner)
                .values(status=RunStatus.RUNNING, started_at=func.now())
                .execution_options(synchronize_session=False),
            )
            == 1
        )


async def save_checkpoint(db: Database, run_id: str, owner: str, step: int, state: dict[str, Any]) -> bool:
    """Replace the run's checkpoint with `state`, in a transaction of its own; False when `owner` no longer holds
    the run.

    On PostgreSQL the commit does not wait for the WAL flush (`synchronous_commit = off` for this transaction
    only): it is visible to every replica at once, and only a crash of the database server itself could lose
    the newest checkpoints — a run then resumes from an older one, and treats the calls since as in flight. An
    intent, which must never be lost, is committed durably."""
    async with db.sessions() as session, session.begin():
        if not db.is_sqlite:
            await session.execute(text("SET LOCAL synchronous_commit TO OFF"))
        return await write_checkpoint(session, run_id, owner, step, state)


async def write_checkpoint(session: AsyncSession, run_id: str, owner: str, step: int, state: dict[str, Any]) -> bool:
    """Replace the run's checkpoint with `state` in `session`'s transaction (one statement); False when `owner`
    no longer holds the run."""
    values = _checkpoint_values(run_id, owner, step, state)
    return await rows_changed(session, _checkpoint_upsert(_is_sqlite(session)), values) == 1


async def write_checkpoint_and_intents(
    session: AsyncSession,
    run_id: str,
    owner: str,
    checkpoint: tuple[int, dict[str, Any]],
    step: int,
    intents: Sequence[CallIntent],
) -> bool:
    """The run's checkpoint after the step before `step`, then the intents of `step`, in `session`'s transaction:
    both, or (False: `owner` no longer holds the run) neither. On PostgreSQL one statement, the checkpoint's
    upsert a data-modifying CTE: both see the same snapshot of the run, so both find it held, or neither."""
    if not intents or _is_sqlite(session):
        return await write_checkpoint(session, run_id, owner, *checkpoint) and await write_intents(
            session, run_id, owner, step, intents
        )
    values = _checkpoint_values(run_id, owner, *checkpoint) | _intent_values(run_id, owner, step, intents)
    return await rows_changed(session, _checkpoint_and_intents(len(intents)), values) == len(intents)


async def record_intents(db: Database, run_id: str, owner: str, step: int, intents: Sequence[CallIntent]) -> bool:
    """The calls of `step` about to run, recorded in a transaction of their own (the database's time as their
    start) before any of them runs; False when `owner` no longer holds the run (nothing is recorded)."""
    async with db.sessions() as session, session.begin():
        return await write_intents(session, run_id, owner, step, intents)


async def write_intents(
    session: AsyncSession, run_id: str, owner: str, step: int, intents: Sequence[CallIntent]
) -> bool:
    """The intents of `step`, in `session`'s transaction: one statement, so all of them or none (False when
    `owner` no longer holds the run). An intent written again (the same call, in another transaction) keeps one
    row, with the newer step and start."""
    if not intents:
        return True
    values = _intent_values(run_id, owner, step, intents)
    return await rows_changed(session, _intents_insert(_is_sqlite(session), len(intents)), values) == len(intents)


def _checkpoint_values(run_id: str, owner: str, step: int, state: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": run_id, "owner": owner, "checkpoint_step": step, "state": storable_text(state)}


def _intent_values(run_id: str, owner: str, step: int, intents: Sequence[CallIntent]) -> dict[str, Any]:
    values: dict[str, Any] = {"run_id": run_id, "owner": owner, "step": step}
    for n, intent in enumerate(intents):
        values |= {f"id_{n}": intent.id, f"tool_{n}": intent.tool, f"signature_{n}": intent.signature}
        values[f"arguments_{n}"] = storable(intent.arguments)
    return values


# The two statements of every journaled step, built once (per dialect, and per number of calls): building them
# again for each write cost more CPU than sending them. On the tables, not the ORM classes: executed with their
# parameters, an ORM insert would be taken for a bulk insert of rows.


@functools.cache
def _checkpoint_upsert(sqlite: bool) -> Any:
    # The state comes as JSON text (`storable_text`): PostgreSQL parses it, SQLite keeps it as it is.
    state: Any = bindparam("state", type_=Text)
    source = select(
        bindparam("run_id", type_=String),
        bindparam("checkpoint_step", type_=Integer),
        state if sqlite else cast_as(state, JSONB),
    ).where(_held())
    insert = sqlite_insert if sqlite else pg_insert
    statement = insert(cast(Table, RunCheckpoint.__table__)).from_select(["run_id", "step", "state"], source)
    return statement.on_conflict_do_update(
        index_elements=[RunCheckpoint.run_id],
        set_={"step": statement.excluded.step, "state": statement.excluded.state, "saved_at": func.now()},
    )


@functools.cache
def _checkpoint_and_intents(count: int) -> Any:
    """PostgreSQL: the checkpoint's upsert as a CTE of the intents' insert (one round trip, one snapshot)."""
    checkpoint = _checkpoint_upsert(False).returning(RunCheckpoint.run_id).cte("checkpoint")
    return _intents_insert(False, count).add_cte(checkpoint)


@functools.cache
def _intents_insert(sqlite: bool, count: int) -> Any:
    held = _held()
    rows = [
        select(
            bindparam("run_id", type_=String),
            bindparam(f"id_{n}", type_=String),
            bindparam("step", type_=Integer),
            bindparam(f"tool_{n}", type_=String),
            bindparam(f"signature_{n}", type_=String),
            bindparam(f"arguments_{n}", type_=Json),
        ).where(held)
        for n in range(count)
    ]
    columns = ["run_id", "tool_call_id", "step", "tool", "signature", "arguments"]
    statement = (sqlite_insert if sqlite else pg_insert)(cast(Table, CallIntentRecord.__table__)).from_select(
        columns, rows[0] if count == 1 else union_all(*rows)
    )
    return statement.on_conflict_do_update(
        index_elements=[CallIntentRecord.run_id, CallIntentRecord.tool_call_id],
        set_={"step": statement.excluded.step, "started_at": func.now()},
    )


def _held() -> Any:
    """The run (parameter `run_id`) is running, held by `owner`: what every journal write is conditional on."""
    return exists().where(
        Run.id == bindparam("run_id", type_=String),
        Run.owner == bindparam("owner", type_=String),
        Run.status == RunStatus.RUNNING,
    )


async def saved_run(db: Database, run_id: str) -> SavedRun:
    """The run's last checkpoint and the intents after it, and its time so far by the database's clock."""
    async with db.sessions() as session:
        row = (
            await session.execute(select(RunCheckpoint.state, RunCheckpoint.step).where(RunCheckpoint.run_id == run_id))
        ).first()
        step = row.step if row is not None else -1
        found = await session.scalars(
            select(CallIntentRecord)
            .where(CallIntentRecord.run_id == run_id, CallIntentRecord.step > step)
            .order_by(CallIntentRecord.started_at, CallIntentRecord.tool_call_id)
        )
        intents = [
            CallIntent(id=i.tool_call_id, tool=i.tool, arguments=dict(i.arguments), signature=i.signature)
            for i in found.all()
        ]
        times = (
            await session.execute(select(Run.started_at, func.now(type_=UTCDateTime())).where(Run.id == run_id))
        ).first()
    spent = 0.0
    if times is not None and times[0] is not None:
        spent = max(0.0, (times[1] - times[0]).total_seconds())
    return SavedRun(row.state if row is not None else None, max(step, 0), intents, spent)


async def release(db: Database, run_id: str, owner: str) -> bool:
    """`owner` gives up a run it holds (queued or running): any live process recovers it now. False when it
    did not hold it any more."""
    async with db.sessions() as session, session.begin():
        return (
            await rows_changed(
                session,
                update(Run)
                .where(Run.id == run_id, Run.owner == owner, Run.status.in_((RunStatus.QUEUED, RunStatus.RUNNING)))
                .values(owner=None)
                .execution_options(synchronize_session=False),
            )
            == 1
        )


async def unknown_calls(db: Database, run_id: str | None = None, *, limit: int = 100) -> list[UnknownCall]:
    """The newest calls whose outcome was unknown when their run was taken over (of one run, with `run_id`)."""
    query = select(ToolCallRecord).where(ToolCallRecord.error_code == ErrorCode.OUTCOME_UNKNOWN)
    if run_id is not None:
        query = query.where(ToolCallRecord.run_id == run_id)
    async with db.sessions() as session:
        found = await session.scalars(query.order_by(ToolCallRecord.at.desc()).limit(limit))
        return [UnknownCall(c.run_id, c.tool_call_id, c.tool, c.step, c.at) for c in found.all()]


async def mark_delivered(db: Database, run_id: str) -> None:
    """The run's end reached its conversation (the database's time)."""
    async with db.sessions() as session, session.begin():
        await session.execute(
            update(Run)
            .where(Run.id == run_id, Run.delivered_at.is_(None))
            .values(delivered_at=func.now())
            .execution_options(synchronize_session=False)
        )


async def undelivered(db: Database, *, now: datetime, seen_by: str, limit: int) -> list[StoredRun]:
    """Ended runs asked in a conversation whose end never reached it, left by a process that is gone (as the
    live process `seen_by` sees it), oldest first."""
    async with db.sessions() as session:
        found = await session.scalars(
            select(Run)
            .where(
                Run.status.in_(ENDED),
                Run.delivered_at.is_(None),
                Run.channel_id.is_not(None),
                Run.thread_ts.is_not(None),
                left_behind(seen_by, now=now),
            )
            .order_by(Run.finished_at, Run.id)
            .limit(limit)
        )
        return [stored_run(run) for run in found.all()]


async def claim_delivery(db: Database, run: StoredRun, owner: str) -> bool:
    """`owner` delivers the end of a run left undelivered, once across replicas: one conditional update on the
    owner it was found with."""
    same_owner = Run.owner.is_(None) if run.owner is None else Run.owner == run.owner
    async with db.sessions() as session, session.begin():
        return (
            await rows_changed(
                session,
                update(Run)
                .where(Run.id == run.id, Run.delivered_at.is_(None), same_owner)
                .values(owner=owner)
                .execution_options(synchronize_session=False),
            )
            == 1
        )
