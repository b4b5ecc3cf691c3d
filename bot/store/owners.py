"""Owners: which live process holds each queued or running run, and the heartbeat that says it is alive.

Every process that holds runs (`parley serve`, `parley ask`, …) has a row in `run_owners` whose hold lasts
until `expires_at`; its heartbeat moves that forward. A queued or running run belongs to the process named
in `runs.owner`; it is left behind (an orphan) only when that owner's hold ran out or it stopped — never
because the run waited long. Each change a live process makes to an orphan is one conditional UPDATE on the
owner it found, so two replicas recovering at once never handle one run twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from agent import RunStatus, TerminationReason
from bot.store.audit import RECOVERER, audit
from bot.store.database import Database, moment, rows_changed
from bot.store.lifecycle import HELD
from bot.store.models import OwnerRecord, Run, RunCheckpoint, Step, ToolCallRecord
from bot.store.records import ShownEnd, StoredRun
from bot.store.rows import stored_run
from bot.store.vocabulary import AuditAction


async def beat(db: Database, owner: str, *, host: str, pid: int, now: datetime | None, hold_s: float) -> bool:
    """Register `owner` or renew its hold until `now + hold_s`; False when it stopped (it never comes back).

    `now` None: the database's clock (`now()`), so that replicas whose clocks disagree still agree on every hold
    (SQLite, one machine's store, takes this process's clock)."""
    insert = sqlite_insert if db.is_sqlite else pg_insert
    at = moment(db, now)
    until = at + timedelta(seconds=hold_s)
    statement = (
        insert(OwnerRecord)
        .values(id=owner, host=host, pid=pid, started_at=at, beat_at=at, expires_at=until)
        .on_conflict_do_update(
            index_elements=[OwnerRecord.id],
            set_={"beat_at": at, "expires_at": until},
            where=OwnerRecord.stopped_at.is_(None),
        )
    )
    async with db.sessions() as session, session.begin():
        return await rows_changed(session, statement) == 1


async def stop(db: Database, owner: str, *, now: datetime | None) -> None:
    """`owner` holds nothing any more: whatever it left queued or running is an orphan at once (`now` None: the
    database's clock)."""
    at = moment(db, now)
    async with db.sessions() as session, session.begin():
        await session.execute(update(OwnerRecord).where(OwnerRecord.id == owner).values(stopped_at=at, expires_at=at))


async def database_now(db: Database) -> datetime:
    """The database's clock, which every replica shares (SQLite: this process's)."""
    if db.is_sqlite:
        return datetime.now(UTC)
    async with db.sessions() as session:
        moment = await session.scalar(select(func.now()))
    assert isinstance(moment, datetime)
    return moment.astimezone(UTC)


async def orphans(db: Database, *, now: datetime, limit: int, seen_by: str) -> list[StoredRun]:
    """Queued and running runs whose owner's hold ran out, who stopped, or who is unknown, oldest first — as
    the live process `seen_by` sees them: its own runs are never orphans to it."""
    left = left_behind(seen_by, now=now)
    async with db.sessions() as session:
        found = await session.scalars(
            select(Run).where(Run.status.in_(HELD), left).order_by(Run.created_at, Run.id).limit(limit)
        )
        return [stored_run(run) for run in found.all()]


def left_behind(seen_by: str, *, now: datetime | None = None) -> ColumnElement[bool]:
    """A run no live process holds, as `seen_by` sees it: no owner, or one whose hold ran out (by `now`, or the
    database's clock) or who stopped — never `seen_by` itself."""
    moment: Any = now if now is not None else func.now()
    alive = select(OwnerRecord.id).where(OwnerRecord.stopped_at.is_(None), OwnerRecord.expires_at > moment)
    return or_(Run.owner.is_(None), and_(Run.owner != seen_by, Run.owner.not_in(alive)))


async def steps_done(db: Database, run_id: str) -> tuple[int, int]:
    """How far a run got: its last recorded step, and how many tool calls it recorded."""
    async with db.sessions() as session:
        steps = await session.scalar(select(func.max(Step.step)).where(Step.run_id == run_id)) or 0
        calls = select(func.count()).select_from(ToolCallRecord).where(ToolCallRecord.run_id == run_id)
        return int(steps), int(await session.scalar(calls) or 0)


async def take_over(db: Database, run: StoredRun, owner: str, *, now: datetime) -> bool:
    """Make `owner` the holder of an orphaned queued run (nothing was done yet); False when it moved on or
    another process took it first."""
    return await _recover(
        db, run, RunStatus.QUEUED, {"owner": owner}, now=now, detail={"outcome": "taken_over", "by": owner}
    )


async def resume_orphan(db: Database, run: StoredRun, owner: str, *, max_resumes: int, now: datetime) -> bool:
    """Make `owner` the holder of an orphaned running run, to resume from its last saved step (counted in
    `runs.resumes`, at most `max_resumes`); False when it moved on, another process took it first, or it was
    resumed that often already."""
    async with db.sessions() as session:  # the last completed step: what it goes on from
        saved = await session.scalar(select(RunCheckpoint.step).where(RunCheckpoint.run_id == run.id))
    detail = {"outcome": "resumed", "by": owner, "after_step": saved or 0, "resume": run.resumes + 1}
    values = {"owner": owner, "resumes": Run.resumes + 1}
    return await _recover(db, run, RunStatus.RUNNING, values, now=now, detail=detail, where=Run.resumes < max_resumes)


async def record_shown_end(db: Database, run: StoredRun, shown: ShownEnd, *, now: datetime) -> bool:
    """Record an orphan as its thread shows it ended (the process that told people died before the store
    took it): what was shown stands; the trace is incomplete. False when it moved on meanwhile."""
    values = {
        "status": shown.status,
        "termination_reason": shown.reason,
        "answer": shown.answer,
        "trace_complete": False,
        "finished_at": now,
        "delivered_at": func.now(),  # its thread shows it
    }
    detail = {"outcome": "as_shown", "message_ts": shown.message_ts, "termination_reason": shown.reason.value}
    return await _recover(db, run, run.status, values, now=now, detail=detail, to_status=shown.status)


async def end_orphan(db: Database, run: StoredRun, answer: str, *, steps: int, tool_calls: int, now: datetime) -> bool:
    """End an orphan honestly, `degraded`/`cancelled` with `answer` — never run again, since a tool call in
    flight may have had its effect. False when it moved on meanwhile."""
    reason = TerminationReason.CANCELLED
    values = {
        "status": reason.status,
        "termination_reason": reason,
        "answer": answer,
        "finished_at": now,
        "steps": steps,
        "tool_calls": tool_calls,
    }
    detail = {"outcome": "ended", "termination_reason": reason.value, "steps_done": steps}
    return await _recover(db, run, run.status, values, now=now, detail=detail, to_status=reason.status)


async def _recover(
    db: Database,
    run: StoredRun,
    status: RunStatus,
    values: dict[str, Any],
    *,
    now: datetime,
    detail: dict[str, Any],
    to_status: RunStatus | None = None,
    where: ColumnElement[bool] | None = None,
) -> bool:
    """One conditional UPDATE on the status and owner the orphan was found with (and `where`), and its audit
    event."""
    same_owner: ColumnElement[bool] = Run.owner.is_(None) if run.owner is None else Run.owner == run.owner
    if where is not None:
        same_owner = and_(same_owner, where)
    async with db.sessions() as session, session.begin():
        changed = await rows_changed(
            session,
            update(Run)
            .where(Run.id == run.id, Run.status == status, same_owner)
            .values(**values)
            .execution_options(synchronize_session=False),
        )
        if changed != 1:
            return False
        audit(
            session,
            run.id,
            AuditAction.RUN_RECOVERED,
            actor=RECOVERER,
            at=now,
            from_status=status,
            to_status=to_status or status,
            detail={"left_by": run.owner, **detail},
        )
    return True
