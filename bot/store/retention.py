"""Retention: raw tool payloads, resumable snapshots and the intents of ended runs' tool calls are dropped once
they are older than the retention (an intent is read only to resume a run still under way).

What was decided and why stays: observations, verdicts, escalations and the audit log are never touched. Rows
are purged in batches, each its own short transaction, and one audit event records each pass that purged
something.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Executable, Select, delete, exists, null, select, update

from agent import RunStatus
from bot.store.audit import SCHEDULER, audit
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import HELD
from bot.store.models import CallIntentRecord, Run, ToolCallRecord
from bot.store.vocabulary import AuditAction

PURGE_BATCH = 1000


async def purge(db: Database, *, now: datetime, retention_days: float) -> int:
    """Drop payloads, snapshots and call intents older than `retention_days` (a held run's snapshot stays, and
    the intents of a run queued or running); how many."""
    cutoff = now - timedelta(days=retention_days)
    payloads = await _purge_batches(
        db,
        ToolCallRecord,
        (ToolCallRecord.at < cutoff, ToolCallRecord.raw_purged_at.is_(None)),
        {"raw": null(), "raw_purged_at": now},
    )
    snapshots = await _purge_batches(
        db,
        Run,
        (Run.snapshot.is_not(None), Run.finished_at < cutoff, Run.status != RunStatus.AWAITING_REVIEW.value),
        {"snapshot": null()},
    )
    intents = await _purge_intents(db, cutoff)
    if payloads or snapshots or intents:
        detail = {
            "tool_calls": payloads,
            "snapshots": snapshots,
            "call_intents": intents,
            "older_than": cutoff.isoformat(),
            "retention_days": retention_days,
        }
        async with db.sessions() as session, session.begin():
            audit(session, None, AuditAction.PAYLOADS_PURGED, actor=SCHEDULER, at=now, detail=detail)
    return payloads + snapshots + intents


async def _purge_batches(db: Database, model: type[Any], conditions: tuple[Any, ...], values: dict[str, Any]) -> int:
    return await _in_batches(
        db,
        select(model.id).where(*conditions).order_by(model.id),
        lambda ids: update(model).where(model.id.in_(ids), *conditions).values(**values),
    )


async def _purge_intents(db: Database, cutoff: datetime) -> int:
    """Delete the call intents older than `cutoff` of runs no longer queued or running, a batch of runs at a
    time."""
    old = (
        CallIntentRecord.started_at < cutoff,
        ~exists().where(Run.id == CallIntentRecord.run_id, Run.status.in_(HELD)),
    )
    return await _in_batches(
        db,
        select(CallIntentRecord.run_id).where(*old).distinct().order_by(CallIntentRecord.run_id),
        lambda runs: delete(CallIntentRecord).where(CallIntentRecord.run_id.in_(runs), *old),
    )


async def _in_batches(db: Database, keys: Select[Any], change: Callable[[Sequence[Any]], Executable]) -> int:
    """`change` applied to the keys `keys` selects, PURGE_BATCH of them at a time, each batch in a transaction of
    its own, until it selects none; the rows changed in all."""
    changed = 0
    while True:
        async with db.sessions() as session, session.begin():
            batch = (await session.scalars(keys.limit(PURGE_BATCH))).all()
            if not batch:
                return changed
            changed += await rows_changed(session, change(batch).execution_options(synchronize_session=False))
