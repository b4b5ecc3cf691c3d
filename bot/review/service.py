"""Decisions on escalations, in the store: exactly one per escalation, whoever clicks first.

`settle` is the one way an escalation leaves `pending` (approve, reject, expire, retry): a conditional
UPDATE … WHERE status = 'pending', so double clicks, two reviewers at once, retried deliveries and two
replicas' timed jobs record one decision; the others learn who decided. The run's status, a `review`
verdict and an audit event are written in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select, update

from agent import RunSnapshot, RunStatus
from bot.store.conversations import cancel_run
from bot.store.database import Database, rows_changed
from bot.store.models import AuditEvent, EscalationRecord, Run, Verdict
from bot.store.vocabulary import AuditAction, Decision, EscalationStatus, VerdictKind

CLI_OPERATOR = "cli"  # the actor recorded for `parley review …` (trusted: the operator runs the process)

# The run's status once the decision is taken (an approved held action resumes: `running` until it ends).
RUN_STATUS_AFTER = {
    Decision.APPROVED: RunStatus.APPROVED,
    Decision.REJECTED: RunStatus.REJECTED,
    Decision.EXPIRED: RunStatus.EXPIRED,
}


@dataclass(frozen=True)
class Settled:
    """The outcome of a decision attempt: `won` when this call recorded it, else who had decided before."""

    won: bool
    escalation: EscalationRecord | None
    run: Run | None


async def current_escalation(db: Database, run_id: str) -> tuple[EscalationRecord | None, Run | None]:
    """The run's newest escalation (pending or decided) and the run."""
    async with db.sessions() as session:
        run = await session.get(Run, run_id)
        escalation = await session.scalar(
            select(EscalationRecord)
            .where(EscalationRecord.run_id == run_id)
            .order_by(EscalationRecord.id.desc())
            .limit(1)
        )
    return escalation, run


async def settle(
    db: Database,
    run_id: str,
    decision: Decision,
    *,
    actor: str,
    reason: str | None = None,
    final_answer: str | None = None,
    run_status: RunStatus | None = None,
    owner: str | None = None,
    now: datetime | None = None,
) -> Settled:
    """Record `decision` on the run's pending escalation, unless someone decided first; with `owner`, the
    run is held by that process from now on (an approved held run, `running` until it is resumed)."""
    now = now or datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        claimed = await rows_changed(
            session,
            update(EscalationRecord)
            .where(EscalationRecord.run_id == run_id, EscalationRecord.status == EscalationStatus.PENDING)
            .values(
                status=decision.status,
                decided_at=now,
                decided_by=actor,
                decision_reason=reason,
                final_answer=final_answer,
            ),
        )
        if claimed != 1:
            won = False
        else:
            won = True
            before = await session.scalar(select(Run.status).where(Run.id == run_id))
            after = run_status or RUN_STATUS_AFTER.get(decision)
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
            session.add(
                AuditEvent(
                    run_id=run_id,
                    at=now,
                    actor=actor,
                    action=decision.action,
                    from_status=before,
                    to_status=after or before,
                    detail={"reason": reason} if reason else {},
                )
            )
    escalation, run = await current_escalation(db, run_id)
    return Settled(won, escalation, run)


class HeldCallsChanged(Exception):
    """The saved state is not the one the reviewer approved — it would run other calls, or it cannot be read
    (written by another version, a field missing): nothing runs."""


async def approved_snapshot(db: Database, run_id: str) -> RunSnapshot:
    """The held run's saved state, read back whole and checked: its held calls are exactly those shown.

    The reviewer approved the calls in the escalation (what their message showed). Should the saved state
    differ — edited, or written by another version — the approval does not carry over to it.
    """
    escalation, run = await current_escalation(db, run_id)
    if escalation is None or run is None or not run.snapshot:
        raise HeldCallsChanged(f"run {run_id} kept no state to resume from")
    try:
        snapshot = RunSnapshot.model_validate(run.snapshot)
    except ValidationError as exc:
        raise HeldCallsChanged(f"run {run_id}: its saved state cannot be read by this version ({_where(exc)})") from exc
    shown = [(c.get("id"), c.get("tool"), c.get("arguments")) for c in escalation.held_calls]
    saved = [(call.id, call.tool, call.arguments) for call in snapshot.held]
    if shown != saved:
        raise HeldCallsChanged(f"run {run_id}: the saved held calls differ from those the reviewer approved")
    return snapshot


def _where(exc: ValidationError, shown: int = 3) -> str:
    """Which fields of a saved state are wrong, e.g. `counters.tokens: Field required`."""
    problems = [f"{'.'.join(map(str, error['loc'])) or 'the state'}: {error['msg']}" for error in exc.errors()]
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


async def end_unresumable(db: Database, run_id: str, why: str) -> None:
    """An approved run that cannot resume ends honestly (degraded, cancelled) instead of staying `running`."""
    await cancel_run(
        db,
        run_id,
        from_statuses=(RunStatus.RUNNING, RunStatus.APPROVED),
        answer=f"Approved, but not resumed: {why}.",
        actor="parley",
        action=AuditAction.RESUME_REFUSED,
        detail={"why": why},
    )


async def note_refusal(db: Database, run_id: str, actor: str, attempted: str, why: str) -> None:
    """Someone who may not decide tried to: written to the audit log (nothing else changes)."""
    async with db.sessions() as session, session.begin():
        session.add(
            AuditEvent(
                run_id=run_id,
                at=datetime.now(UTC),
                actor=actor,
                action=AuditAction.REVIEW_REFUSED,
                detail={"attempted": attempted, "why": why},
            )
        )


async def claim_review_message(db: Database, escalation_id: int, channel: str) -> bool:
    """Claim the posting of a pending escalation's reviewer message (one poster across workers and replicas)."""
    async with db.sessions() as session, session.begin():
        claimed = await rows_changed(
            session,
            update(EscalationRecord)
            .where(
                EscalationRecord.id == escalation_id,
                EscalationRecord.review_channel.is_(None),
                EscalationRecord.status == EscalationStatus.PENDING,
            )
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


async def pending_escalations(db: Database, *, limit: int = 50, offset: int = 0) -> list[tuple[EscalationRecord, Run]]:
    """Escalations waiting for a decision, oldest first."""
    async with db.sessions() as session:
        rows = await session.execute(
            select(EscalationRecord, Run)
            .join(Run, Run.id == EscalationRecord.run_id)
            .where(EscalationRecord.status == EscalationStatus.PENDING)
            .order_by(EscalationRecord.created_at, EscalationRecord.id)
            .limit(limit)
            .offset(offset)
        )
        return [(esc, run) for esc, run in rows.all()]


async def count_pending_escalations(db: Database) -> int:
    """How many escalations wait for a decision (one COUNT, on the index by status)."""
    async with db.sessions() as session:
        pending = EscalationRecord.status == EscalationStatus.PENDING
        count = await session.scalar(select(func.count()).select_from(EscalationRecord).where(pending))
        return int(count or 0)
