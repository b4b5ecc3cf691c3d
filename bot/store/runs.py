"""Runs as the store keeps them outside the engine's trace: exactly-once intake, retries, follow-up context,
Parley's message in the thread, and the honest end of a run Parley stopped."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from agent import Exchange, RunStatus, TerminationReason
from bot.store.audit import PARLEY, audit
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import CONCLUDED, FROM, Change
from bot.store.models import Run
from bot.store.records import Ask, Conversation, RunOrigin, StoredRun
from bot.store.rows import stored_run
from bot.store.vocabulary import AuditAction

# Earlier exchanges given to a follow-up: enough for context, bounded so a long thread stays cheap.
MAX_HISTORY = 5
MAX_HISTORY_ANSWER_CHARS = 2000


async def enqueue(db: Database, ask: Ask, *, owner: str | None = None) -> str | None:
    """Record the question as a queued run held by `owner`; None when its message already has a run (the medium
    delivered it again)."""
    detail: dict[str, Any] = {"message": ask.message}
    if ask.conversation is not None:
        detail["channel"] = ask.conversation.channel
    return await _queue(
        db,
        ask.origin,
        ask.question,
        owner=owner,
        actor=f"{ask.origin.source}:{ask.asker}",
        detail=detail,
        trigger_ts=ask.message,
    )


async def enqueue_retry(db: Database, run: StoredRun, *, owner: str | None = None) -> str:
    """A new queued run of the same question in the same conversation, linked to the run a reviewer retried,
    held by `owner`."""
    run_id = await _queue(
        db,
        run.origin,
        run.question,
        owner=owner,
        actor=PARLEY,
        detail={"retry_of": run.id},
        trigger_ts=None,  # not a message: the exactly-once key does not apply
        retry_of=run.id,
    )
    assert run_id is not None, "a retry has no message, so nothing it could be a second run of"
    return run_id


async def _queue(
    db: Database, origin: RunOrigin, question: str, *, actor: str, detail: dict[str, Any], **columns: Any
) -> str | None:
    """A new queued run and its `run_queued` audit event, in one transaction; its id, or None when the unique
    (workspace, channel, trigger_ts) key says its message already has a run.

    One INSERT … ON CONFLICT DO NOTHING: a redelivered message (half of the requests of a burst Slack retries)
    costs one statement, not a refused insert, its exception and a rollback.
    """
    run_id = uuid.uuid4().hex
    now = datetime.now(UTC)
    place = origin.conversation
    new_run = (sqlite_insert if db.is_sqlite else postgresql_insert)(Run).values(
        id=run_id,
        status=RunStatus.QUEUED,
        created_at=now,
        source=origin.source,
        asker=origin.asker,
        question=question,
        workspace_id=place.workspace if place else None,
        channel_id=place.channel if place else None,
        thread_ts=place.thread if place else None,
        **columns,
    )
    async with db.sessions() as session, session.begin():
        added = await session.scalar(new_run.on_conflict_do_nothing().returning(Run.id))
        if added is None:
            return None
        audit(session, run_id, AuditAction.RUN_QUEUED, actor=actor, at=now, to_status=RunStatus.QUEUED, detail=detail)
    return run_id


async def thread_is_ours(db: Database, conversation: Conversation) -> bool:
    """Has Parley been asked in this conversation before (so a plain reply there is a follow-up)?"""
    async with db.sessions() as session:
        found = await session.scalar(
            select(Run.id)
            .where(
                Run.workspace_id == conversation.workspace,
                Run.channel_id == conversation.channel,
                Run.thread_ts == conversation.thread,
            )
            .limit(1)
        )
    return found is not None


async def thread_history(db: Database, run: StoredRun, *, limit: int = MAX_HISTORY) -> list[Exchange]:
    """The conversation's earlier concluded questions and answers, oldest first, from the store (not Slack)."""
    if run.conversation is None:
        return []
    async with db.sessions() as session:
        rows = (
            await session.execute(
                select(Run.question, Run.answer)
                .where(
                    Run.workspace_id == run.workspace_id,
                    Run.channel_id == run.channel_id,
                    Run.thread_ts == run.thread_ts,
                    Run.created_at < run.created_at,
                    Run.status.in_(CONCLUDED),
                )
                .order_by(Run.created_at.desc())
                .limit(limit)
            )
        ).all()
    return [Exchange(q, (a or "")[:MAX_HISTORY_ANSWER_CHARS]) for q, a in reversed(rows)]


async def end_run(
    db: Database,
    run_id: str,
    change: Change,
    *,
    answer: str,
    action: AuditAction,
    detail: dict[str, Any],
    reason: TerminationReason = TerminationReason.CANCELLED,
    actor: str = PARLEY,
    now: datetime | None = None,
) -> StoredRun | None:
    """End a run that cannot go on — `reason` (status degraded), an honest answer, an audit event — if it is
    still in one of the statuses `change` may be made from (one conditional UPDATE); else None: it moved on
    meanwhile, or another process ended it first."""
    now = now or datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        before = await session.scalar(select(Run.status).where(Run.id == run_id))
        ended = await rows_changed(
            session,
            update(Run)
            .where(Run.id == run_id, Run.status.in_(FROM[change]))
            .values(status=reason.status, termination_reason=reason, answer=answer, finished_at=now)
            .execution_options(synchronize_session=False),
        )
        if ended != 1:
            return None
        audit(session, run_id, action, actor=actor, at=now, from_status=before, to_status=reason.status, detail=detail)
        row = await session.get(Run, run_id, populate_existing=True)
        return stored_run(row) if row is not None else None


async def load_run(db: Database, run_id: str) -> StoredRun | None:
    async with db.sessions() as session:
        row = await session.get(Run, run_id)
        return stored_run(row) if row is not None else None


async def set_reply_ts(db: Database, run_id: str, reply_ts: str) -> None:
    async with db.sessions() as session, session.begin():
        await session.execute(update(Run).where(Run.id == run_id).values(reply_ts=reply_ts))
