"""Notifier: how people hear about a run's lifecycle — Slack in `parley serve`, the log elsewhere.

The run service changes the store first, then tells the notifier, once per change. A notifier that raises loses
that one message (logged by `tell`); the change stands. Before a run left behind by a stopped process is ended,
the notifier is asked what its people were already shown (`shown_end`), so that nothing contradicting it is said.
Everything it is given is a record (`bot.store.records`): a notifier never reads or writes the store.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent import RunResult, exception_line
from bot.store import Escalated, ShownEnd, StoredRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Posted:
    """Where a reviewer message went: the channel (as the medium names it) and the message."""

    channel: str
    ts: str


class Notifier(Protocol):
    """Told after the change is committed; every method is about one run."""

    @property
    def review_channel(self) -> str | None:
        """Where reviewers read escalations; None: nowhere but the command line (`parley review`)."""

    async def post_escalation(self, escalated: Escalated, channel: str) -> Posted | None:
        """Post the pending escalation for the reviewers in `channel` (the service claimed it: once across
        replicas); None when it could not be posted (the `announce` job tries again)."""

    async def show_escalation(self, escalated: Escalated) -> None:
        """The posted reviewer message again, as the escalation now reads (a 👎's note arrived)."""

    async def decided(self, escalated: Escalated) -> None:
        """A decision was taken (approve, reject, retry, expiry): the reviewers and the asker see it."""

    async def resumed(self, run: StoredRun, result: RunResult) -> None:
        """An approved run went on away from its thread (the command line): the thread sees how it ended."""

    async def remind(self, escalated: Escalated) -> None:
        """A posted escalation has waited `remind_after_minutes` without a decision: nudge the reviewers."""

    async def stale_ended(self, run: StoredRun) -> None:
        """A run left `running` or `queued` by a process that stopped was ended `degraded`/`cancelled`: its
        notice replaces the run's placeholder."""

    async def shown_end(self, run: StoredRun) -> ShownEnd | None:
        """How the run's people were already told it ended, if they were (None: told nothing final); raises
        when that cannot be known now (then nothing is said, and the question is asked again later)."""


class LogNotifier:
    """Tells nobody but the log: for the command line, and `parley serve` without Slack."""

    review_channel: str | None = None

    async def post_escalation(self, escalated: Escalated, channel: str) -> Posted | None:
        return None  # never asked: there is no reviewer channel

    async def show_escalation(self, escalated: Escalated) -> None:
        log.debug("escalation %s of run %s changed", escalated.escalation.id, escalated.run.id)

    async def decided(self, escalated: Escalated) -> None:
        escalation = escalated.escalation
        who = escalation.decided_by
        log.info("escalation %s of run %s was %s by %s", escalation.id, escalated.run.id, escalation.status, who)

    async def resumed(self, run: StoredRun, result: RunResult) -> None:
        log.info("run %s went on after its approval and ended %s", run.id, result.status.value)

    async def remind(self, escalated: Escalated) -> None:
        log.info("escalation %s of run %s is still waiting for a reviewer", escalated.escalation.id, escalated.run.id)

    async def stale_ended(self, run: StoredRun) -> None:
        log.info("run %s, left unfinished by a stopped process, was ended %s", run.id, run.status)

    async def shown_end(self, run: StoredRun) -> ShownEnd | None:
        return None  # the log tells nobody: nothing was shown that could be contradicted


async def tell(send: Callable[..., Awaitable[Any]], *items: Any, what: str) -> Any:
    """Call one notifier method; a message that cannot be sent is logged, never raised (None is returned): the
    store already has the change, and one lost message must not stop the caller's other work."""
    try:
        return await send(*items)
    except Exception as exc:
        log.warning("could not send %s: %s", what, exception_line(exc))
        return None
