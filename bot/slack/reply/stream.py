"""StreamReply: Parley's message in a thread as a Slack stream — the run's task timeline, then its answer.

`chat.startStream` when the run is announced, `chat.appendStream` with the tasks that changed (at most one append
per interval: newer states of a task replace older ones waiting to be sent), and at the end one append with the
answer — only once the run ended, so no unchecked draft is ever streamed — then `chat.stopStream` with the
answer's closing blocks and the end-of-run mark (`bot.slack.reply.marks`). A message longer than one follows as
ordinary posts.

Where Slack refuses streaming (`bot.slack.reply.medium.UNSUPPORTED`), the workspace falls back for good and this run
goes on as a `ThreadReply`: a normal placeholder is posted and updated, and the answer replaces it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import SlackMessage
from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.reply.chunks import markdown_of, progress_chunks
from bot.slack.reply.medium import Media, unsupported
from bot.slack.reply.progress import RunProgress, TaskKind, TaskStatus
from bot.slack.reply.throttle import DEFAULT_MIN_INTERVAL_S, Throttle
from bot.slack.reply.updates import ThreadReply
from bot.wording import InThread

log = logging.getLogger(__name__)

TASK_DISPLAY_MODE = "timeline"
ENDED_STREAM = "message_not_in_streaming_state"  # Slack stopped the stream itself: this run goes on without it


class StreamReply:
    """A streamed message in `channel`/`thread_ts`, addressed to the asker (`recipient_*`, as Slack requires)."""

    def __init__(
        self,
        client: AsyncWebClient,
        media: Media,
        *,
        workspace: str,
        asker: str,
        channel: str,
        thread_ts: str,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._media = media
        self._workspace = workspace
        self._asker = asker
        self.channel = channel
        self.thread_ts = thread_ts
        self.ts: str | None = None
        self._throttle = Throttle(self._send_latest, self._still_waiting, interval_s=min_interval_s, clock=clock)
        self._progress: RunProgress | None = None  # the run's state, as last handed over
        self._waiting = False  # a newer state waits to be sent
        self._plan_title: str | None = None  # as the stream shows it
        self._sent: dict[str, int] = {}  # task id → the version the stream shows
        self._finished = False
        self._fallback: ThreadReply | None = None
        self._calls_shown = False  # the first tool calls under way were sent (unthrottled)

    @property
    def streaming(self) -> bool:
        """False once this run went on as an updated message instead."""
        return self._fallback is None

    async def announce(self, message: SlackMessage) -> str | None:
        """Start the stream; its ts is the reply's. Refused: post `message` as a normal placeholder instead."""
        try:
            response = await slack_call(
                self._client.chat_startStream(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    recipient_team_id=self._workspace,
                    recipient_user_id=self._asker,
                    task_display_mode=TASK_DISPLAY_MODE,
                    chunks=[{"type": "plan_update", "title": InThread.STREAM_STARTED}],
                )
            )
        except SlackFailure as exc:
            fallback = self._fall_back(exc, "starting")
            # Refused for good: the placeholder goes up now. A passing failure: as a failed post today, the
            # run's first progress posts it.
            return await fallback.post(message) if unsupported(exc.error) else None
        self.ts = response.get("ts")
        self._plan_title = InThread.STREAM_STARTED
        self._throttle.sent()
        return self.ts

    async def progress(self, progress: RunProgress) -> None:
        """Send what changed now if the interval allows, else once it does (a task's newer state replaces older)."""
        if self._fallback is not None:
            await self._fallback.progress(progress)
            return
        if self._finished:
            return
        self._progress, self._waiting = progress, True
        if not self._calls_shown and _calls_running(progress):
            # The plan and the first calls, at once: with a real model a call is often over before the interval
            # is, and its task would never be seen in progress. Throttled as usual from then on.
            self._calls_shown = True
            await self._send_latest()
            return
        await self._throttle.ask()

    async def finish(self, messages: Sequence[SlackMessage]) -> None:
        """The end: the tasks' last states and the first message's text in one append, then the stream is
        stopped with its closing blocks and metadata; further messages follow as posts."""
        self._finished = True
        if self._fallback is not None:
            await self._fallback.finish(messages)
            return
        first, *rest = messages
        async with self._throttle.lock:
            if self._fallback is not None:  # refused while the last update was on its way
                await self._fallback.finish(messages)
                return
            await self._throttle.turn()
            chunks, versions = self._changes()
            text = markdown_of(first)
            if text:
                chunks.append({"type": "markdown_text", "text": text})
            appended = await self._append(chunks, versions) if chunks else True
            if not appended and self._fallback is not None:
                await self._fallback.finish(messages)  # the stream is refused: the answer is posted instead
                return
            await self._stop(first, text=None if appended else text)
            for message in rest:
                await ThreadReply(self._client, self.channel, self.thread_ts).post(message)

    def _still_waiting(self) -> bool:
        return self._waiting and not self._finished and self._fallback is None

    async def _send_latest(self) -> None:
        async with self._throttle.lock:
            self._waiting = False
            if self._finished or self._fallback is not None:
                return
            chunks, versions = self._changes()
            if chunks:
                await self._append(chunks, versions)
        if self._fallback is not None and self._progress is not None:  # refused just now: go on in a message
            await self._fallback.progress(self._progress)

    def _changes(self) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The chunks of what changed since the last append, and the versions they show (read at once)."""
        if self._progress is None:
            return [], {}
        chunks = progress_chunks(self._progress, plan_title=self._plan_title, sent=self._sent)
        versions = {task.id: task.version for task in self._progress.tasks.values()}
        return chunks, versions

    async def _append(self, chunks: list[dict[str, Any]], versions: dict[str, int]) -> bool:
        assert self.ts is not None
        try:
            await slack_call(self._client.chat_appendStream(channel=self.channel, ts=self.ts, chunks=chunks))
        except SlackFailure as exc:
            if unsupported(exc.error) or exc.error == ENDED_STREAM:
                self._fall_back(exc, "appending to")
            else:
                log.warning("appending to the stream %s in %s failed: %s", self.ts, self.channel, exc)
            return False
        self._throttle.sent()
        self._sent.update(versions)
        if self._progress is not None and self._progress.plan_title is not None:
            self._plan_title = self._progress.plan_title
        return True

    async def _stop(self, message: SlackMessage, *, text: str | None) -> None:
        assert self.ts is not None
        try:
            await slack_call(
                self._client.chat_stopStream(
                    channel=self.channel,
                    ts=self.ts,
                    markdown_text=text or None,
                    blocks=message.closing_part or None,
                    metadata=message.metadata,
                )
            )
        except SlackFailure as exc:
            if unsupported(exc.error):
                self._media.stream_refused(self._workspace, str(exc.error))
            log.warning(
                "stopping the stream %s in %s failed (%s): its closing part follows as a post",
                self.ts,
                self.channel,
                exc,
            )
            # The answer's text is in the stream already; its sources, status line, buttons and the end-of-run
            # mark (what a survivor reads back) must still reach the thread.
            closing = SlackMessage(text=message.text, blocks=message.closing_part, metadata=message.metadata)
            await ThreadReply(self._client, self.channel, self.thread_ts).post(closing)

    def _fall_back(self, exc: SlackFailure, doing: str) -> ThreadReply:
        """This run goes on as an updated message (and, refused for good, the workspace's later runs too)."""
        if unsupported(exc.error):
            self._media.stream_refused(self._workspace, str(exc.error))
        else:
            log.warning("%s the stream in %s failed (%s): this run goes on by chat.update", doing, self.channel, exc)
        self._fallback = ThreadReply(
            self._client, self.channel, self.thread_ts, min_interval_s=self._throttle.interval_s
        )
        return self._fallback


def _calls_running(progress: RunProgress) -> bool:
    return any(t.kind is TaskKind.TOOL_CALL and t.status is TaskStatus.IN_PROGRESS for t in progress.tasks.values())
