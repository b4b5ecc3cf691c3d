"""The durable side of crash-safe runs: claiming a queued run, its checkpoints, its calls' intents, and what a
survivor reads back to resume it.

Every write is conditional on the writer still holding the run (`runs.owner`, status `running`): a process that
was cut off and taken for dead learns it lost the run at its next write, and records nothing more. Times are the
database's (`now()`), never a process's own clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, literal, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql import func

from agent import CallIntent, ErrorCode, RunStatus
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import ENDED
from bot.store.models import CallIntentRecord, Run, RunCheckpoint, ToolCallRecord, UTCDateTime
from bot.store.owners import left_behind
from bot.store.recorder import storable
from bot.store.records import StoredRun
from bot.store.rows import stored_run


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


def _held_by(run_id: str, owner: str) -> Any:
    return exists().where(Run.id == run_id, Run.owner == owner, Run.status == RunStatus.RUNNING)


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
    """Replace the run's checkpoint with `state` (one statement); False when `owner` no longer holds the run.

    On PostgreSQL the commit does not wait for the WAL flush (`synchronous_commit = off` for this transaction
    only): it is visible to every replica at once, and only a crash of the database server itself could lose
    the newest checkpoints — a run then resumes from an older one, and treats the calls since as in flight. An
    intent, which must never be lost, is committed durably."""
    insert = sqlite_insert if db.is_sqlite else pg_insert
    source = select(literal(run_id), literal(step), literal(storable(state), type_=RunCheckpoint.state.type)).where(
        _held_by(run_id, owner)
    )
    statement = insert(RunCheckpoint).from_select(["run_id", "step", "state"], source)
    statement = statement.on_conflict_do_update(
        index_elements=[RunCheckpoint.run_id],
        set_={"step": statement.excluded.step, "state": statement.excluded.state, "saved_at": func.now()},
    )
    async with db.sessions() as session, session.begin():
        if not db.is_sqlite:
            await session.execute(text("SET LOCAL synchronous_commit TO OFF"))
        return await rows_changed(session, statement) == 1


async def record_intents(db: Database, run_id: str, owner: str, step: int, intents: Sequence[CallIntent]) -> bool:
    """The calls of `step` about to run, recorded (the database's time as their start) before any of them
    runs; False when `owner` no longer holds the run (nothing is recorded)."""
    insert = sqlite_insert if db.is_sqlite else pg_insert
    columns = ["run_id", "tool_call_id", "step", "tool", "signature", "arguments"]
    async with db.sessions() as session, session.begin():
        for intent in intents:
            source = select(
                literal(run_id),
                literal(intent.id),
                literal(step),
                literal(intent.tool),
                literal(intent.signature),
                literal(storable(intent.arguments), type_=CallIntentRecord.arguments.type),
            ).where(_held_by(run_id, owner))
            statement = insert(CallIntentRecord).from_select(columns, source)
            statement = statement.on_conflict_do_update(
                index_elements=[CallIntentRecord.run_id, CallIntentRecord.tool_call_id],
                set_={"step": statement.excluded.step, "started_at": func.now()},
            )
            if await rows_changed(session, statement) != 1:
                await session.rollback()
                return False
    return True


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
