"""The audit log: one append-only row per status change or decision, with its actor and time.

Every writer in the store adds its event through `audit`, in the same transaction as the change it records, so
the log never says something happened that did not, nor misses what did.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agent import RunStatus
from bot.store.models import AuditEvent
from bot.store.vocabulary import AuditAction

ENGINE = "engine"  # the actor of what the engine's trace records
PARLEY = "parley"  # Parley itself (a run it stopped, a resume it refused)
RECOVERER = "parley:recovery"  # a live process handling what a stopped one left
SCHEDULER = "parley:scheduler"  # the timed jobs


def audit(
    session: AsyncSession,
    run_id: str | None,
    action: AuditAction,
    *,
    actor: str,
    at: datetime,
    from_status: RunStatus | None = None,
    to_status: RunStatus | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Add one audit event to the session's transaction (its run's row must be flushed first)."""
    session.add(
        AuditEvent(
            run_id=run_id,
            at=at,
            actor=actor,
            action=action,
            from_status=from_status,
            to_status=to_status,
            detail=detail or {},
        )
    )
