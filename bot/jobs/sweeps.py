"""The timed jobs' sweeps: announce and remind escalations, expire undecided ones, purge payloads.

Each sweep is given `now` (the scheduler's clock) and returns how many items it handled. Every item is
handled in its own short transaction and claimed by a conditional UPDATE, so two replicas sweeping at the
same instant never handle one item twice; the notifier is told after the commit, once per item claimed.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import null, select, update

from agent import RunStatus
from bot.notifier import Notifier, tell
from bot.review.config import ReviewConfig
from bot.runs import RunService
from bot.store.database import Database, rows_changed
from bot.store.models import AuditEvent, EscalationRecord, Run, ToolCallRecord
from bot.store.vocabulary import AuditAction, Decision, EscalationStatus

__all__ = [
    "SWEEPS",
    "Sweep",
    "announce",
    "expire",
    "purge",
    "remind",
]

log = logging.getLogger(__name__)

ACTOR = "parley:scheduler"
MAX_ITEMS_PER_PASS = 500  # a pass stays short; whatever is left is the next tick's
PURGE_BATCH = 1000


class Sweep(Protocol):
    """One timed job: handle what is due at `now`, return how many items were handled."""

    async def __call__(self, db: Database, config: ReviewConfig, notifier: Notifier, *, now: datetime) -> int: ...


async def announce(db: Database, config: ReviewConfig, notifier: Notifier, *, now: datetime) -> int:
    """Hand every pending escalation that has no reviewer message yet to the notifier.

    Runs escalated where nobody posts them (`parley ask`, another replica that died before posting, a
    Slack outage) reach the reviewers within one interval. The notifier claims each message itself (one
    conditional UPDATE), so replicas never post one twice.
    """
    async with db.sessions() as session:
        rows = (
            await session.execute(
                select(EscalationRecord, Run)
                .join(Run, Run.id == EscalationRecord.run_id)
                .where(EscalationRecord.status == EscalationStatus.PENDING, EscalationRecord.review_channel.is_(None))
                .order_by(EscalationRecord.created_at, EscalationRecord.id)
                .limit(MAX_ITEMS_PER_PASS)
            )
        ).all()
    for escalation, run in rows:
        await tell(notifier.escalated, escalation, run, what=f"the announcement of escalation {escalation.id}")
    return len(rows)


async def remind(db: Database, config: ReviewConfig, notifier: Notifier, *, now: datetime) -> int:
    """Nudge reviewers once about escalations pending longer than `remind_after_minutes`.

    Escalations already past `expire_after_hours` are left to `expire` (no reminder for a dead request).
    """
    due = now - timedelta(minutes=config.remind_after_minutes)
    expiring = now - timedelta(hours=config.expire_after_hours)
    async with db.sessions() as session:
        ids = (
            await session.scalars(
                select(EscalationRecord.id)
                .where(
                    EscalationRecord.status == EscalationStatus.PENDING,
                    EscalationRecord.reminded_at.is_(None),
                    EscalationRecord.created_at < due,
                    EscalationRecord.created_at > expiring,
                )
                .order_by(EscalationRecord.created_at, EscalationRecord.id)
                .limit(MAX_ITEMS_PER_PASS)
            )
        ).all()
    handled = 0
    for escalation_id in ids:
        claimed = await _claim_reminder(db, escalation_id, now)
        if claimed is None:
            continue  # decided meanwhile, or another replica reminded first
        handled += 1
        await tell(notifier.remind, *claimed, what=f"the reminder for escalation {escalation_id}")
    return handled


async def expire(db: Database, config: ReviewConfig, notifier: Notifier, *, now: datetime) -> int:
    """Settle as `expired` every escalation pending longer than `expire_after_hours` (run → `expired`)."""
    cutoff = now - timedelta(hours=config.expire_after_hours)
    reason = f"no decision within {config.expire_after_hours:g} h"
    async with db.sessions() as session:
        run_ids = (
            await session.scalars(
                select(EscalationRecord.run_id)
                .where(EscalationRecord.status == EscalationStatus.PENDING, EscalationRecord.created_at < cutoff)
                .order_by(EscalationRecord.created_at, EscalationRecord.id)
                .limit(MAX_ITEMS_PER_PASS)
            )
        ).all()
    runs = RunService(db, notifier)
    handled = 0
    for run_id in run_ids:
        settled = await runs.decide(run_id, Decision.EXPIRED, actor=ACTOR, reason=reason, now=now)
        if settled.won:
            handled += 1  # announced by the service; a reviewer or another replica may have decided first
    return handled


async def purge(db: Database, config: ReviewConfig, notifier: Notifier, *, now: datetime) -> int:
    """Drop raw tool payloads and resumable snapshots older than `retention_days`.

    What was decided and why stays: observations, verdicts, escalations and the audit log are not touched.
    One audit event per pass that purged something.
    """
    cutoff = now - timedelta(days=config.retention_days)
    payloads = await _purge_batches(
        db,
        ToolCallRecord,
        (ToolCallRecord.at < cutoff, ToolCallRecord.raw_purged_at.is_(None)),
        {"raw": null(), "raw_purged_at": now},
    )
    snapshots = await _purge_batches(
        db,
        Run,
        (
            Run.snapshot.is_not(None),
            Run.finished_at < cutoff,
            Run.status != RunStatus.AWAITING_REVIEW.value,
        ),
        {"snapshot": null()},
    )
    if payloads or snapshots:
        async with db.sessions() as session, session.begin():
            session.add(
                AuditEvent(
                    run_id=None,
                    at=now,
                    actor=ACTOR,
                    action=AuditAction.PAYLOADS_PURGED,
                    detail={
                        "tool_calls": payloads,
                        "snapshots": snapshots,
                        "older_than": cutoff.isoformat(),
                        "retention_days": config.retention_days,
                    },
                )
            )
    return payloads + snapshots


# The order a pass runs them in: an escalation past its time is expired before a reminder could be sent for it.
# (Runs left behind by a stopped process are recovered every heartbeat, not here: `bot.jobs.recovery`.)
SWEEPS: dict[str, Sweep] = {
    "announce": announce,
    "expire": expire,
    "remind": remind,
    "purge": purge,
}


async def _claim_reminder(db: Database, escalation_id: int, now: datetime) -> tuple[EscalationRecord, Run] | None:
    async with db.sessions() as session, session.begin():
        claimed = await rows_changed(
            session,
            update(EscalationRecord)
            .where(
                EscalationRecord.id == escalation_id,
                EscalationRecord.reminded_at.is_(None),
                EscalationRecord.status == EscalationStatus.PENDING,
            )
            .values(reminded_at=now)
            .execution_options(synchronize_session=False),
        )
        if claimed != 1:
            return None
        escalation = await session.get(EscalationRecord, escalation_id, populate_existing=True)
        assert escalation is not None  # the UPDATE above just found it
        run = await session.get(Run, escalation.run_id)
        assert run is not None  # a foreign key
        session.add(
            AuditEvent(
                run_id=run.id,
                at=now,
                actor=ACTOR,
                action=AuditAction.REVIEW_REMINDED,
                detail={"escalation_id": escalation_id, "waiting_since": escalation.created_at.isoformat()},
            )
        )
    return escalation, run


async def _purge_batches(db: Database, model: type[Any], conditions: tuple[Any, ...], values: dict[str, Any]) -> int:
    purged = 0
    while True:
        async with db.sessions() as session, session.begin():
            ids = (
                await session.scalars(select(model.id).where(*conditions).order_by(model.id).limit(PURGE_BATCH))
            ).all()
            if not ids:
                return purged
            done = await rows_changed(
                session,
                update(model)
                .where(model.id.in_(ids), *conditions)
                .values(**values)
                .execution_options(synchronize_session=False),
            )
            purged += done
