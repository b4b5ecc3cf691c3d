"""A person's stop, from Slack: the native stop button of an agent session (`agent_session_stopped`) and
`/parley stop [RUN_ID]` (for workspaces on the older experience, and for operators).

Both find the run, ask the run service to stop it (`RunService.request_stop`: the asker or a reviewer only; the
store carries the request to whichever replica holds the run) and tell the person only what concerns them: a
refusal, privately. The stopped run's thread is told by the run's own answer ("stopped by @person", with what
it had found), once. A stop where nothing runs is acknowledged and changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from agent import RunStatus, exception_line
from bot.core import (
    AmbiguousRun,
    History,
    RunNotFound,
    RunService,
    StopOutcome,
    Stopper,
    Stopping,
    StoredRun,
    StoreUnavailable,
)
from bot.slack.events import Ignored, read_session_stopped
from bot.slack.gateway import SlackGateway
from bot.slack.review.reviewers import Reviewers
from bot.wording import InCommand, InStop

log = logging.getLogger(__name__)

RUN_ID_INPUT_CHARS = 64


class StopDesk:
    """Stops runs for people in Slack."""

    def __init__(self, service: RunService, history: History, reviewers: Reviewers, gateway: SlackGateway) -> None:
        self._service = service
        self._history = history
        self._reviewers = reviewers
        self._gateway = gateway

    async def on_session_stopped(self, body: dict[str, Any]) -> None:
        """The stop button of a thread's agent session was clicked (bolt acknowledged already)."""
        stopped = read_session_stopped(body)
        if isinstance(stopped, Ignored):
            log.info("ignored an agent_session_stopped event %s: %s", body.get("event_id"), stopped.reason)
            return
        said: str | None = None
        try:
            run = await self._service.stoppable_in(stopped.conversation)
            stopping = await self._stop(run, stopped.user)
            if stopping.outcome is StopOutcome.REFUSED:
                said = _told(stopping)
        except StoreUnavailable as exc:
            log.error("a stop in %s was not recorded, the store is unavailable: %s", stopped.where, exception_line(exc))
            said = InStop.UNAVAILABLE
        if said is not None:  # refused or lost: the person is told, privately (the thread tells the rest)
            await self._gateway.ephemeral(stopped.conversation.channel, stopped.user, said, what="answer a stop")

    async def by_command(self, user: str, arguments: list[str]) -> str:
        """`/parley stop [RUN_ID]`: the run named (by id or prefix), or the newest of the person's own."""
        if len(arguments) > 1:
            return InStop.NEED_ONE
        try:
            if not arguments:
                run = await self._service.newest_stoppable_of(user)
                if run is None:
                    return InStop.NOTHING_OF_YOURS
            else:
                wanted = arguments[0][:RUN_ID_INPUT_CHARS]
                try:
                    run = await self._service.stored(await self._history.run_id(wanted))
                except RunNotFound:
                    return InCommand.NO_RUN.format(wanted=wanted)
                except AmbiguousRun:
                    return InCommand.AMBIGUOUS.format(wanted=wanted)
            return _told(await self._stop(run, user))
        except StoreUnavailable as exc:
            log.error("a /parley stop was not recorded, the store is unavailable: %s", exception_line(exc))
            return InStop.UNAVAILABLE

    async def _stop(self, run: StoredRun | None, user: str) -> Stopping:
        reviewer = await self._reviewers.is_reviewer(user)
        stopper = Stopper(person=user, actor=f"slack:{user}", shown_as=f"<@{user}>", reviewer=reviewer)
        stopping = await self._service.request_stop(run, stopper)
        log.info("a stop from %s: %s (run %s)", user, stopping.outcome, stopping.run.id if stopping.run else "none")
        return stopping


def _told(stopping: Stopping) -> str:
    """What the person who asked for the stop reads, only them."""
    run = stopping.run
    run_id = run.id[:8] if run is not None else ""
    if stopping.outcome is StopOutcome.REFUSED:
        return InStop.REFUSED.format(run=run_id)
    if stopping.outcome is StopOutcome.NOTHING_RUNNING or run is None:
        return InStop.NOTHING_RUNNING
    if stopping.outcome is StopOutcome.ALREADY:
        return InStop.ALREADY.format(run=run_id)
    if stopping.outcome is StopOutcome.ELSEWHERE:
        return InStop.ELSEWHERE.format(run=run_id)
    held = run.status is RunStatus.AWAITING_REVIEW
    return (InStop.REQUESTED_HELD if held else InStop.REQUESTED).format(run=run_id)
