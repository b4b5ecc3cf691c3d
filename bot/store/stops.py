"""Stop requests: a person asked for a run to stop (a stop button, a command), wherever its process is.

The request is a row; the process holding the run reads it (`requested_among`) and stops the run at once. The
first request of a run is kept and written to the audit log with who asked; a refused one only to the audit log.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from agent import RunStatus
from bot.store.audit import audit
from bot.store.database import Database
from bot.store.models import Run, StopRecord
from bot.store.records import Conversation, StoredRun
from bot.store.rows import stored_run
from bot.store.vocabulary import AuditAction

# What a stop can still change: a run waiting for a worker or under way, or a held one not approved yet (its held
# calls must not run after a stop).
STOPPABLE = frozenset({RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.AWAITING_REVIEW})


async def stoppable_in(db: Database, conversation: Conversation) -> StoredRun | None:
    """The conversation's newest run a stop can still change; None when nothing runs there."""
    async with db.sessions() as session:
        row = await session.scalar(
            select(Run)
            .where(
                Run.workspace_id == conversation.workspace,
                Run.channel_id == conversation.channel,
                Run.thread_ts == conversation.thread,
                Run.status.in_(STOPPABLE),
            )
            .order_by(Run.created_at.desc())
            .limit(1)
        )
        return stored_run(row) if row is not None else None


async def newest_stoppable_of(db: Database, asker: str) -> StoredRun | None:
    """The newest run `asker` asked that a stop can still change."""
    async with db.sessions() as session:
        row = await session.scalar(
            select(Run).where(Run.asker == asker, Run.status.in_(STOPPABLE)).order_by(Run.created_at.desc()).limit(1)
        )
        return stored_run(row) if row is not None else None


async def request_stop(db: Database, run: StoredRun, *, actor: str, shown_as: str) -> bool:
    """Record that `actor` asked for `run` to stop (audited); False when someone asked first (nothing changes)."""
    now = datetime.now(UTC)
    values = {"run_id": run.id, "actor": actor, "shown_as": shown_as, "at": now}
    insert = sqlite_insert if db.is_sqlite else postgresql_insert
    async with db.sessions() as session, session.begin():
        added = await session.execute(
            insert(StopRecord).values(**values).on_conflict_do_nothing().returning(StopRecord.run_id)
        )
        if added.scalar_one_or_none() is None:
            return False
        detail = {"status": str(run.status)}
        audit(session, run.id, AuditAction.STOP_REQUESTED, actor=actor, at=now, detail=detail)
    return True


async def note_stop_refused(db: Database, run_id: str, actor: str, why: str) -> None:
    """Someone who may not stop the run tried to: written to the audit log (nothing else changes)."""
    async with db.sessions() as session, session.begin():
        audit(session, run_id, AuditAction.STOP_REFUSED, actor=actor, at=datetime.now(UTC), detail={"why": why})


async def requested_among(db: Database, run_ids: Collection[str]) -> dict[str, str]:
    """Which of `run_ids` someone asked to stop: run id → who, as the run's answer names them."""
    if not run_ids:
        return {}
    async with db.sessions() as session:
        rows = await session.execute(
            select(StopRecord.run_id, StopRecord.shown_as).where(StopRecord.run_id.in_(list(run_ids)))
        )
        return {run_id: shown_as for run_id, shown_as in rows.all()}
