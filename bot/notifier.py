"""Notifier: how people hear about a run's lifecycle — Slack in `parley serve`, the log elsewhere.

The application service (`bot.runs`) and the timed jobs change the store first, then tell the notifier,
once per change. A notifier that raises loses that one message (logged by the caller); the change stands.
Before a run left behind by a stopped process is ended, the notifier is asked what its people were already
shown (`shown_end`), so that nothing contradicting it is said.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from agent import RunResult, exception_line
from bot.store.models import EscalationRecord, Run
from bot.store.owners import ShownEnd

log = logging.getLogger(__name__)


class Notifier(Protocol):
    """Told after the change is committed; every method is about one run."""

    async def escalated(self, escalation: EscalationRecord, run: Run) -> None:
        """The run waits for people: show its pending escalation to the reviewers (once across replicas)."""

    async def decided(self, escalation: EscalationRecord, run: Run) -> None:
        """A decision was taken (approve, reject, retry, expiry): the reviewers and the asker see it."""

    async def resumed(self, run: Run, result: RunResult) -> None:
        """An approved run went on away from its thread (the command line): the thread sees how it ended."""

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        """An escalation has waited `remind_after_minutes` without a decision: nudge the reviewers."""

    async def stale_ended(self, run: Run) -> None:
        """A run left `running` or `queued` by a process that stopped was ended `degraded`/`cancelled`: its
        notice replaces the run's placeholder."""

    async def shown_end(self, run: Run) -> ShownEnd | None:
        """How the run's people were already told it ended, if they were (None: told nothing final); raises
        when that cannot be known now (then nothing is said, and the question is asked again later)."""


class LogNotifier:
    """Tells nobody but the log: for the command line, and `parley serve` without a reviewer channel."""

    async def escalated(self, escalation: EscalationRecord, run: Run) -> None:
        log.debug("escalation %s of run %s waits for a reviewer (no reviewer channel)", escalation.id, run.id)

    async def decided(self, escalation: EscalationRecord, run: Run) -> None:
        who = escalation.decided_by
        log.info("escalation %s of run %s was %s by %s", escalation.id, run.id, escalation.status, who)

    async def resumed(self, run: Run, result: RunResult) -> None:
        log.info("run %s went on after its approval and ended %s", run.id, result.status.value)

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        log.info("escalation %s of run %s is still waiting for a reviewer", escalation.id, run.id)

    async def stale_ended(self, run: Run) -> None:
        log.info("run %s, left unfinished by a stopped process, was ended %s", run.id, run.status)

    async def shown_end(self, run: Run) -> ShownEnd | None:
        return None  # the log tells nobody: nothing was shown that could be contradicted


async def tell(send: Callable[..., Awaitable[None]], *items: Any, what: str) -> None:
    """Call one notifier method; a message that cannot be sent is logged, never raised: the store already
    has the change, and one lost message must not stop the caller's other work."""
    try:
        await send(*items)
    except Exception as exc:
        log.warning("could not send %s: %s", what, exception_line(exc))
