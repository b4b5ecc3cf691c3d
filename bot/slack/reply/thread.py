"""A run's presence in its Slack thread: Slack's side of the core's `Replies` and `Reply`.

Each run gets one reply in the medium its workspace supports (`Media`): a stream with a task timeline, or a
message updated as the run goes (`ThreadReply`); a run that already shows a placeholder (queued, or taken over
from a stopped replica) keeps it. `SlackProgress` turns the run's trace into that reply's progress and keeps the
thread's native status in step. The end — the answer, or the notice that the run could not go on — replaces the
progress, marked as the run's end (`marks`), and the status is cleared.
"""

from __future__ import annotations

from agent import DecisionKind, Recorder, RunResult, RunStatus, StepDecided, TraceEvent
from bot.core import Ask, Conversation, Stop
from bot.slack.blocks import SlackMessage, answer_messages, failure_message, progress_blocks, queued_message
from bot.slack.gateway import SlackGateway
from bot.slack.reply.marks import mark_ended
from bot.slack.reply.medium import Media, Medium, StreamingMode
from bot.slack.reply.progress import RunProgress
from bot.slack.reply.session import Sessions, SessionStatus
from bot.slack.reply.status import ThreadStatus
from bot.slack.reply.stream import StreamReply
from bot.slack.reply.throttle import DEFAULT_MIN_INTERVAL_S
from bot.slack.reply.updates import ThreadReply
from bot.wording import DATABASE_UNAVAILABLE, InThread

RunMessage = ThreadReply | StreamReply  # the two media of a run's reply (`Media` chooses)

# What a run's thread is told when it cannot go on.
STOPPED = {
    Stop.INTERRUPTED: InThread.INTERRUPTED,
    Stop.STORE_UNAVAILABLE: DATABASE_UNAVAILABLE,
    Stop.INTERNAL_ERROR: InThread.SOMETHING_BROKE,
    Stop.HELD_CHANGED: InThread.HELD_CHANGED,
}


class SlackReplies:
    """Every run's reply in Slack, in the medium each workspace supports (learnt once per process)."""

    def __init__(
        self,
        gateway: SlackGateway,
        *,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
        streaming: StreamingMode = "auto",
    ) -> None:
        self._gateway = gateway
        self._interval = min_interval_s
        self.media = Media(streaming)
        self.sessions = Sessions(gateway.client)

    def reply(self, ask: Ask, *, queued: bool, placeholder: str | None) -> SlackReply:
        place = _place(ask)
        status = ThreadStatus(self._gateway.client, self.media, place.workspace, place.channel, place.thread)
        message = self._message(ask, place, placeholder, queued=queued)
        return SlackReply(message, ask, status, self.sessions)

    async def tell(self, ask: Ask, problem: str) -> None:
        place = _place(ask)
        reply = ThreadReply(self._gateway.client, place.channel, place.thread, min_interval_s=self._interval)
        await reply.post(failure_message(problem, None))

    def _message(self, ask: Ask, place: Conversation, placeholder: str | None, *, queued: bool) -> RunMessage:
        client = self._gateway.client
        match self.media.medium(place.workspace, placeholder=queued or placeholder is not None):
            case Medium.STREAM:
                return StreamReply(
                    client,
                    self.media,
                    workspace=place.workspace,
                    asker=ask.asker,
                    channel=place.channel,
                    thread_ts=place.thread,
                    min_interval_s=self._interval,
                )
            case Medium.UPDATES:
                return ThreadReply(client, place.channel, place.thread, ts=placeholder, min_interval_s=self._interval)


class SlackReply:
    """One run's message and status line in its thread."""

    def __init__(self, message: RunMessage, ask: Ask, status: ThreadStatus, sessions: Sessions) -> None:
        self._message = message
        self._ask = ask
        self._question = ask.question
        self._status = status
        self._sessions = sessions
        self._progress = SlackProgress(message, ask.question, status)

    @property
    def watcher(self) -> Recorder:
        return self._progress

    async def announce(self, ahead: int | None) -> str | None:
        shown = progress_blocks(self._question, [], state="working") if ahead is None else queued_message(ahead)
        return await self._message.announce(shown)

    async def working(self) -> None:
        await self._sessions.move(
            _place(self._ask), SessionStatus.PROCESSING, question=self._question, asker=self._ask.asker
        )
        await self._status.show(InThread.STATUS_WORKING)

    async def finish(self, result: RunResult) -> None:
        self._progress.state.close_checks()  # the run ended: what it checked last passed or ended it
        messages = answer_messages(result, feedback=True)
        waits = result.status is RunStatus.AWAITING_REVIEW  # a person looks at it; else a follow-up may come
        session = SessionStatus.SUSPENDED if waits else SessionStatus.ACTIVE
        await self._end(mark_ended(messages, result.run_id, result.status, result.termination_reason), session)

    async def stop(self, why: Stop, run_id: str) -> None:
        reason = why.reason
        stopped = [failure_message(STOPPED[why], run_id)]
        await self._end(mark_ended(stopped, run_id, reason.status, reason), SessionStatus.ACTIVE)

    async def _end(self, messages: list[SlackMessage], session: SessionStatus) -> None:
        try:
            await self._message.finish(messages)
        finally:
            await self._status.clear()
            await self._sessions.move(_place(self._ask), session)


class SlackProgress:
    """A Recorder that turns a run's trace into its live progress in the thread."""

    def __init__(self, reply: RunMessage, question: str, status: ThreadStatus | None = None) -> None:
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


def _place(ask: Ask) -> Conversation:
    """The thread of a run's ask (the pool only runs asks that have one)."""
    if ask.conversation is None:
        raise ValueError(f"a question asked outside any conversation has no Slack thread ({ask.question[:40]!r})")
    return ask.conversation
