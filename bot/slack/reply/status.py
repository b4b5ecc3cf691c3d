"""ThreadStatus: Slack's native "is checking get_weather…" line under a run's thread, while the run works.

`assistant.threads.setStatus` is a courtesy: a refusal (not an assistant thread, a missing scope, an older
workspace) never fails the run; that workspace gets no more status calls (`Media.status_refused`).
"""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.reply.medium import Media, passing

log = logging.getLogger(__name__)


class ThreadStatus:
    def __init__(self, client: AsyncWebClient, media: Media, workspace: str, channel: str, thread_ts: str) -> None:
        self._client = client
        self._media = media
        self._workspace = workspace
        self._channel = channel
        self._thread_ts = thread_ts
        self._shown = ""

    async def show(self, status: str) -> None:
        """Show `status` (sent only when it changed); an empty one clears it."""
        if status == self._shown or not self._media.status_allowed(self._workspace):
            return
        try:
            await slack_call(
                self._client.assistant_threads_setStatus(
                    channel_id=self._channel, thread_ts=self._thread_ts, status=status
                )
            )
        except SlackFailure as exc:
            if passing(exc.error):
                log.info("the status of %s/%s was not set: %s", self._channel, self._thread_ts, exc)
            else:
                self._media.status_refused(self._workspace, str(exc.error))
            return
        self._shown = status

    async def clear(self) -> None:
        await self.show("")
