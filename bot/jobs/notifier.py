"""Notifier: how the timed jobs tell people what they did (Slack in `parley serve`, the log elsewhere)."""

from __future__ import annotations

import logging
from typing import Protocol

from bot.store.models import EscalationRecord, Run

log = logging.getLogger(__name__)


class Notifier(Protocol):
    """Told once per item a timed job handled, after the change is committed.

    A notifier that raises loses that one message (logged); the change in the store stands and the job
    goes on with its next item.
    """

    async def announce(self, escalation: EscalationRecord, run: Run) -> None:
        """A pending escalation has no reviewer message yet: post it (claiming it, so it is posted once)."""

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        """An escalation has waited `remind_after_minutes` without a decision: nudge the reviewers."""

    async def expired(self, escalation: EscalationRecord, run: Run) -> None:
        """Nobody decided within `expire_after_hours`: the escalation and its run are now `expired`."""

    async def stale_ended(self, run: Run) -> None:
        """A run left `running` or `queued` by a process that died was ended `degraded`/`cancelled`."""


class SilentNotifier:
    """Tells nobody but the log: for the command line, and `parley serve` without Slack."""

    async def announce(self, escalation: EscalationRecord, run: Run) -> None:
        log.debug("escalation %s of run %s waits for a reviewer (no reviewer channel)", escalation.id, run.id)

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        log.info("escalation %s of run %s is still waiting for a reviewer", escalation.id, run.id)

    async def expired(self, escalation: EscalationRecord, run: Run) -> None:
        log.info("escalation %s of run %s expired without a decision", escalation.id, run.id)

    async def stale_ended(self, run: Run) -> None:
        log.info("run %s, left unfinished by a stopped process, was ended %s", run.id, run.status)
