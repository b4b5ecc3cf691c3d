"""Conversations: Slack threads as the store sees them — exactly-once intake, follow-up context, replies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from agent import Exchange, RunStatus, TerminationReason
from bot.store.database import Database, rows_changed
from bot.store.models import AuditEvent, EscalationRecord, Run
from bot.store.vocabulary import AuditAction, RunSource

# Earlier exchanges given to a follow-up: enough for context, bounded so a long thread stays cheap.
MAX_HISTORY = 5
MAX_HISTORY_ANSWER_CHARS = 2000
FINISHED = (RunStatus.SOLVED, RunStatus.DEGRADED, RunStatus.REFUSED, RunStatus.APPROVED, RunStatus.REJECTED)


@dataclass(frozen=True)
class SlackAsk:
    """One Slack message that asks Parley something."""

    workspace_id: str
    channel_id: str
    thread_ts: str  # the thread's root: the conversation
    trigger_ts: str  # the message itself
    asker: str
    question: str


def ask_of(run: Run, esc: EscalationRecord | None) -> SlackAsk:
    """Where a resumed or retried run answers: its own thread, or for a run asked outside Slack (the command
    line) the reviewer message's thread (of its escalation `esc`), so the reviewers see what their decision
    led to."""
    if run.channel_id and run.thread_ts:
        channel, thread = run.channel_id, run.thread_ts
    else:
        channel = (esc.review_channel if esc else None) or ""
        thread = (esc.review_ts if esc else None) or ""
    return SlackAsk(
        workspace_id=run.workspace_id or "",
        channel_id=channel,
        thread_ts=thread,
        trigger_ts=run.trigger_ts or "",
        asker=run.asker,
        question=run.question,
    )


async def enqueue(db: Database, ask: SlackAsk, *, owner: str | None = None) -> str | None:
    """Record the question as a queued run held by `owner`; None when this message already has a run (a
    redelivery)."""
    try:
        return await _queue(
            db,
            owner=owner,
            actor=f"slack:{ask.asker}",
            detail={"channel": ask.channel_id, "message": ask.trigger_ts},
            source=RunSource.SLACK,
            workspace_id=ask.workspace_id,
            channel_id=ask.channel_id,
            thread_ts=ask.thread_ts,
            trigger_ts=ask.trigger_ts,
            asker=ask.asker,
            question=ask.question,
        )
    except IntegrityError:
        return None  # the unique (workspace, channel, trigger_ts) key: this message is already being answered


async def enqueue_retry(db: Database, run: Run, *, owner: str | None = None) -> str:
    """A new queued run of the same question in the same thread, linked to the run a reviewer retried, held by
    `owner`."""
    return await _queue(
        db,
        owner=owner,
        actor="parley",
        detail={"retry_of": run.id},
        source=run.source,
        workspace_id=run.workspace_id,
        channel_id=run.channel_id,
        thread_ts=run.thread_ts,
        trigger_ts=None,  # not a Slack message: the exactly-once key does not apply
        asker=run.asker,
        question=run.question,
        retry_of=run.id,
    )


async def _queue(db: Database, *, actor: str, detail: dict[str, Any], **run: Any) -> str:
    """A new queued run and its `run_queued` audit event, in one transaction; its id."""
    run_id = uuid.uuid4().hex
    now = datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        session.add(Run(id=run_id, status=RunStatus.QUEUED, created_at=now, **run))
        await session.flush()  # the run row first: the audit event refers to it
        session.add(
            AuditEvent(
                run_id=run_id,
                at=now,
                actor=actor,
                action=AuditAction.RUN_QUEUED,
                to_status=RunStatus.QUEUED,
                detail=detail,
            )
        )
    return run_id


async def thread_is_ours(db: Database, workspace_id: str, channel_id: str, thread_ts: str) -> bool:
    """Has Parley been asked in this thread before (so a plain reply there is a follow-up)?"""
    async with db.sessions() as session:
        found = await session.scalar(
            select(Run.id)
            .where(Run.workspace_id == workspace_id, Run.channel_id == channel_id, Run.thread_ts == thread_ts)
            .limit(1)
        )
    return found is not None


async def thread_history(db: Database, run: Run, *, limit: int = MAX_HISTORY) -> list[Exchange]:
    """The thread's earlier finished questions and answers, oldest first, from the store (not Slack)."""
    async with db.sessions() as session:
        rows = (
            await session.execute(
                select(Run.question, Run.answer)
                .where(
                    Run.workspace_id == run.workspace_id,
                    Run.channel_id == run.channel_id,
                    Run.thread_ts == run.thread_ts,
                    Run.created_at < run.created_at,
                    Run.status.in_(FINISHED),
                )
                .order_by(Run.created_at.desc())
                .limit(limit)
            )
        ).all()
    return [Exchange(q, (a or "")[:MAX_HISTORY_ANSWER_CHARS]) for q, a in reversed(rows)]


async def cancel_stopped(db: Database, run_id: str, message: str, *, started: bool = False) -> bool:
    """End a run Parley stopped answering: one that never started, or (`started`) one the worker was cancelled
    in before the engine could record its end. False when it had moved on (started, or ended) after all."""
    ended = await cancel_run(
        db,
        run_id,
        from_statuses=(RunStatus.QUEUED, RunStatus.RUNNING) if started else (RunStatus.QUEUED,),
        answer=message,
        actor="parley",
        action=AuditAction.RUN_CANCELLED,
        detail={"reason": "stopped before the run ended" if started else "stopped before the run started"},
    )
    return ended is not None


async def cancel_run(
    db: Database,
    run_id: str,
    *,
    from_statuses: tuple[RunStatus, ...],
    answer: str,
    actor: str,
    action: AuditAction,
    detail: dict[str, Any],
    values: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> Run | None:
    """End a run that cannot go on as `cancelled` (status degraded), with an honest answer and an audit event.

    Only from one of `from_statuses` (one conditional UPDATE: a run that moved on meanwhile, or that another
    process ended first, is left alone and None is returned); else the ended run.
    """
    reason = TerminationReason.CANCELLED
    now = now or datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        before = await session.scalar(select(Run.status).where(Run.id == run_id))
        ended = await rows_changed(
            session,
            update(Run)
            .where(Run.id == run_id, Run.status.in_(from_statuses))
            .values(
                status=reason.status,
                termination_reason=reason,
                answer=answer,
                finished_at=now,
                **(values or {}),
            )
            .execution_options(synchronize_session=False),
        )
        if ended != 1:
            return None
        session.add(
            AuditEvent(
                run_id=run_id,
                at=now,
                actor=actor,
                action=action,
                from_status=before,
                to_status=reason.status,
                detail=detail,
            )
        )
        return await session.get(Run, run_id, populate_existing=True)


async def load_run(db: Database, run_id: str) -> Run | None:
    async with db.sessions() as session:
        return await session.get(Run, run_id)


async def set_reply_ts(db: Database, run_id: str, reply_ts: str) -> None:
    async with db.sessions() as session, session.begin():
        await session.execute(update(Run).where(Run.id == run_id).values(reply_ts=reply_ts))
