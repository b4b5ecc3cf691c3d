"""ThreadReply: Parley's one message in a thread — posted at once, updated as the run goes, throttled."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import SlackMessage, progress_blocks
from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.reply.progress import RunProgress
from bot.slack.reply.throttle import DEFAULT_MIN_INTERVAL_S, Throttle

log = logging.getLogger(__name__)


class ThreadReply:
    """A message in `channel`/`thread_ts` that only ever shows the newest state, at most every interval."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        thread_ts: str,
        *,
        ts: str | None = None,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.ts = ts
        self._latest: SlackMessage | None = None
        self._throttle = Throttle(self._send_latest, self._still_waiting, interval_s=min_interval_s, clock=clock)
        self._finished = False
        self._shown: SlackMessage | None = None  # the newest state asked for (sent, or waiting its turn)

    async def announce(self, message: SlackMessage) -> str | None:
        """The run's first sign in the thread: posted, or shown in the placeholder it already has (then None)."""
        if self.ts is not None:
            await self.show(message)
            return None
        return await self.post(message)

    async def progress(self, progress: RunProgress) -> None:
        """Show the run's progress as lines in the message (a state that looks the same is not sent again)."""
        await self.show(progress_blocks(progress.question, progress.lines, state="working"))

    async def post(self, message: SlackMessage) -> str | None:
        """Post the first version; returns its ts (None when Slack refused: the run still goes on)."""
        try:
            response = await slack_call(
                self._client.chat_postMessage(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    text=message.text,
                    blocks=message.blocks,
                    metadata=message.metadata,
                )
            )
        except SlackFailure as exc:
            log.warning("posting in %s/%s failed: %s", self.channel, self.thread_ts, exc)
            return None
        self.ts = response.get("ts")
        self._throttle.sent()
        return self.ts

    async def show(self, message: SlackMessage) -> None:
        """Show `message` now if the interval allows, else once it does (newer states replace older)."""
        if self._finished or message == self._shown:
            return
        self._shown = message
        self._latest = message
        await self._throttle.ask()

    async def finish(self, messages: Sequence[SlackMessage]) -> None:
        """The final answer: replaces the progress message, further parts follow in the thread.

        An update already on its way is let through (cancelling it mid-request could land it after the
        answer); one still waiting sees `_finished` and stays quiet. The interval holds for the answer too.
        """
        self._finished = True
        self._latest = None
        first, *rest = messages
        async with self._throttle.lock:
            if self.ts is not None:
                await self._throttle.turn()
            if self.ts is None or not await self._update(self.ts, first):
                await self.post(first)
            for message in rest:
                await self.post(message)

    def _still_waiting(self) -> bool:
        return self._latest is not None and not self._finished

    async def _send_latest(self) -> None:
        async with self._throttle.lock:
            message, self._latest = self._latest, None
            if message is None or self._finished:
                return
            if self.ts is None:
                await self.post(message)
            else:
                await self._update(self.ts, message)

    async def _update(self, ts: str, message: SlackMessage) -> bool:
        try:
            await slack_call(
                self._client.chat_update(
                    channel=self.channel, ts=ts, text=message.text, blocks=message.blocks, metadata=message.metadata
                )
            )
        except SlackFailure as exc:
            log.warning("updating %s in %s failed: %s", self.ts, self.channel, exc)
            return False
        self._throttle.sent()
        return True
