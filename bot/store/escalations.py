"""Escalations in the store: runs people must decide on, their reviewer messages, and exactly one decision each.

`settle` is the one way an escalation leaves `pending` (approve, reject, expire, retry): a conditional
UPDATE … WHERE status = 'pending', so double clicks, two reviewers at once, retried deliveries and two
replicas' timed jobs record one decision; the others learn who decided. The run's status (by
`lifecycle.after_decision`), a `review` verdict and an audit event are written in the same transaction. Each
posting, reminder and expiry is claimed the same way, so no replica handles one twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update

from agent import RunStatus
from bot.store.audit import SCHEDULER, audit
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import after_decision
from bot.store.models import EscalationRecord, Run, Verdict
from bot.store.records import Escalated, Settled
from bot.store.rows import escalated_run, stored_escalation, stored_run
from bot.store.vocabulary import AuditAction, Decision, EscalationKind, EscalationStatus, RunSource, VerdictKind

MAX_ITEMS_PER_PASS = 500  # a timed job's pass stays short; whatever is left is the next tick's
PENDING = EscalationRecord.status == EscalationStatus.PENDING
# `parley eval`'s runs are measured, not served: their escalations are kept but shown to no reviewer.
FOR_PEOPLE = Run.source != RunSource.EVAL


def _escalated(record: EscalationRecord, run: Run) -> Escalated:
    return Escalated(stored_escalation(record), stored_run(run), escalated_run(run, record))


async def current_escalation(db: Database, run_id: str) -> Escalated | None:
    """The run's newest escalation (pending or decided) with its run; None when it has none."""
    async with db.sessions() as session:
        run = await session.get(Run, run_id)
        record = await session.scalar(
            select(EscalationRecord)
            .where(EscalationRecord.run_id == run_id)
            .order_by(EscalationRecord.id.desc())
            .limit(1)
        )
        return _escalated(record, run) if record is not None and run is not None else None


async def saved_state(db: Database, run_id: str) -> dict[str, Any] | None:
    """The engine's state saved when a policy held the run's calls (what an approval resumes from)."""
    async with db.sessions() as session:
        return await session.scalar(select(Run.snapshot).where(Run.id == run_id))


async def settle(
    db: Database,
    run_id: str,
    decision: Decision,
    *,
    actor: str,
    reason: str | None = None,
    final_answer: str | None = None,
    owner: str | None = None,
    now: datetime | None = None,
) -> Settled:
    """Record `decision` on the run's pending escalation, unless someone decided first; the run's status follows
    `after_decision`. With `owner`, the run is held by that process from now on (an approved held run, `running`
    until it is resumed)."""
    now = now or datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        kind = await session.scalar(select(EscalationRecord.kind).where(EscalationRecord.run_id == run_id, PENDING))
        claimed = 0
        if kind is not None:
            claimed = await rows_changed(
                session,
                update(EscalationRecord)
                .where(EscalationRecord.run_id == run_id, PENDING)
                .values(
                    status=decision.status,
                    decided_at=now,
                    decided_by=actor,
                    decision_reason=reason,
                    final_answer=final_answer,
                ),
            )
        won = claimed == 1
        if won and kind is not None:
            before = await session.scalar(select(Run.status).where(Run.id == run_id))
            after = after_decision(kind, decision)
            values: dict[str, Any] = {}
            if after is not None:
                values["status"] = after
            if final_answer is not None:
                values["answer"] = final_answer
            if owner is not None:
                values["owner"] = owner
            if after in (RunStatus.REJECTED, RunStatus.EXPIRED) or final_answer is not None:
                values["finished_at"] = now
            if values:
                await session.execute(update(Run).where(Run.id == run_id).values(**values))
            session.add(
                Verdict(
                    run_id=run_id, kind=VerdictKind.REVIEW, decided_by=actor, decision=decision, reason=reason, at=now
                )
            )
            detail = {"reason": reason} if reason else {}
            audit(
                session,
                run_id,
                decision.action,
                actor=actor,
                at=now,
                from_status=before,
                to_status=after or before,
                detail=detail,
            )
    found = await current_escalation(db, run_id)
    return Settled(won, found.escalation if found else None, found.run if found else None)


async def note_refusal(db: Database, run_id: str, actor: str, attempted: str, why: str) -> None:
    """Someone who may not decide tried to: written to the audit log (nothing else changes)."""
    async with db.sessions() as session, session.begin():
        detail = {"attempted": attempted, "why": why}
        audit(session, run_id, AuditAction.REVIEW_REFUSED, actor=actor, at=datetime.now(UTC), detail=detail)


async def claim_review_message(db: Database, escalation_id: int, channel: str) -> bool:
    """Claim the posting of a pending escalation's reviewer message (one poster across workers and replicas)."""
    async with db.sessions() as session, session.begin():
        claimed = await rows_changed(
            session,
            update(EscalationRecord)
            .where(EscalationRecord.id == escalation_id, EscalationRecord.review_channel.is_(None), PENDING)
            .values(review_channel=channel),
        )
    return claimed == 1


async def release_review_message(db: Database, escalation_id: int) -> None:
    """Posting failed: let a later attempt (the `announce` job) post it."""
    async with db.sessions() as session, session.begin():
        await session.execute(
            update(EscalationRecord)
            .where(EscalationRecord.id == escalation_id, EscalationRecord.review_ts.is_(None))
            .values(review_channel=None)
        )


async def set_review_message(db: Database, escalation_id: int, channel: str, ts: str) -> None:
    async with db.sessions() as session, session.begin():
        await session.execute(
            update(EscalationRecord)
            .where(EscalationRecord.id == escalation_id)
            .values(review_channel=channel, review_ts=ts)
        )


async def set_message(db: Database, run_id: str, message: str, *, kind: EscalationKind | None = None) -> bool:
    """Replace the message of the run's pending escalation (of `kind`, if given); False when none waits."""
    conditions = [EscalationRecord.run_id == run_id, PENDING]
    if kind is not None:
        conditions.append(EscalationRecord.kind == kind)
    async with db.sessions() as session, session.begin():
        changed = await rows_changed(session, update(EscalationRecord).where(*conditions).values(message=message))
    return changed == 1


async def pending_escalations(db: Database, *, limit: int = 50, offset: int = 0) -> list[Escalated]:
    """Escalations waiting for a decision, oldest first."""
    async with db.sessions() as session:
        rows = await session.execute(
            select(EscalationRecord, Run)
            .join(Run, Run.id == EscalationRecord.run_id)
            .where(PENDING, FOR_PEOPLE)
            .order_by(EscalationRecord.created_at, EscalationRecord.id)
            .limit(limit)
            .offset(offset)
        )
        return [_escalated(record, run) for record, run in rows.all()]


async def count_pending_escalations(db: Database) -> int:
    """How many escalations wait for a decision (one COUNT, on the index by status)."""
    async with db.sessions() as session:
        count = await session.scalar(select(func.count()).select_from(EscalationRecord).where(PENDING))
        return int(count or 0)


async def unannounced(db: Database, *, limit: int = MAX_ITEMS_PER_PASS) -> list[Escalated]:
    """Pending escalations no reviewer message was claimed for yet, oldest first."""
    async with db.sessions() as session:
        rows = await session.execute(
            select(EscalationRecord, Run)
            .join(Run, Run.id == EscalationRecord.run_id)
            .where(PENDING, FOR_PEOPLE, EscalationRecord.review_channel.is_(None))
            .order_by(EscalationRecord.created_at, EscalationRecord.id)
            .limit(limit)
        )
        return [_escalated(record, run) for record, run in rows.all()]


async def due_for_reminder(
    db: Database, *, now: datetime, after: timedelta, expiring: timedelta, limit: int = MAX_ITEMS_PER_PASS
) -> list[int]:
    """Pending escalations older than `after` and not reminded yet; those past `expiring` are left to expiry."""
    async with db.sessions() as session:
        ids = await session.scalars(
            select(EscalationRecord.id)
            .join(Run, Run.id == EscalationRecord.run_id)
            .where(
                PENDING,
                FOR_PEOPLE,
                EscalationRecord.reminded_at.is_(None),
                EscalationRecord.created_at < now - after,
                EscalationRecord.created_at > now - expiring,
            )
            .order_by(EscalationRecord.created_at, EscalationRecord.id)
            .limit(limit)
        )
        return list(ids.all())


async def claim_reminder(db: Database, escalation_id: int, now: datetime) -> Escalated | None:
    """Claim the one reminder of a pending escalation (audited); None when it was decided or reminded meanwhile."""
    async with db.sessions() as session, session.begin():
        claimed = await rows_changed(
            session,
            update(EscalationRecord)
            .where(EscalationRecord.id == escalation_id, EscalationRecord.reminded_at.is_(None), PENDING)
            .values(reminded_at=now)
            .execution_options(synchronize_session=False),
        )
        if claimed != 1:
            return None
        record = await session.get(EscalationRecord, escalation_id, populate_existing=True)
        assert record is not None  # the UPDATE above just found it
        run = await session.get(Run, record.run_id)
        assert run is not None  # a foreign key
        detail = {"escalation_id": escalation_id, "waiting_since": record.created_at.isoformat()}
        audit(session, run.id, AuditAction.REVIEW_REMINDED, actor=SCHEDULER, at=now, detail=detail)
        return _escalated(record, run)


async def expired_by(db: Database, cutoff: datetime, *, limit: int = MAX_ITEMS_PER_PASS) -> list[str]:
    """The runs whose escalation has been pending since before `cutoff`, oldest first."""
    async with db.sessions() as session:
        run_ids = await session.scalars(
            select(EscalationRecord.run_id)
            .where(PENDING, EscalationRecord.created_at < cutoff)
            .order_by(EscalationRecord.created_at, EscalationRecord.id)
            .limit(limit)
        )
        return list(run_ids.all())
