"""SlackProgress: a Recorder that turns a run's trace into its live progress in the thread.

It keeps the run's one progress state (`RunProgress`) and hands it to the run's reply — whichever medium it
is, the reply renders it — and keeps the thread's native status in step.
"""

from __future__ import annotations

from typing import Protocol

from agent import DecisionKind, StepDecided, TraceEvent
from bot.slack.run_progress import RunProgress
from bot.slack.status import ThreadStatus
from bot.wording import InThread


class ProgressReply(Protocol):
    """A run's reply as progress sees it (`ThreadReply`, `StreamReply`)."""

    async def progress(self, progress: RunProgress) -> None: ...


class SlackProgress:
    def __init__(self, reply: ProgressReply, question: str, status: ThreadStatus | None = None) -> None:
        self._reply = reply
        self._status = status
        self.state = RunProgress(question)

    async def record(self, event: TraceEvent) -> None:
        if not self.state.apply(event):
            return
        await self._reply.progress(self.state)
        if isinstance(event, StepDecided) and event.decision is DecisionKind.TOOL_CALLS and self.state.start_calls():
            await self._reply.progress(self.state)  # the step's calls run now: pending → in progress
        await self._show_status(event)

    async def _show_status(self, event: TraceEvent) -> None:
        if self._status is None or not isinstance(event, StepDecided):
            return
        if event.decision is DecisionKind.FINAL:
            await self._status.show(InThread.STATUS_CHECKING_ANSWER)
        elif tools := self.state.running_tools():
            await self._status.show(InThread.STATUS_CHECKING.format(tools=", ".join(tools)))
