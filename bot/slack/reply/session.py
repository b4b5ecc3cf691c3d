"""Sessions: a run's thread as an agent session of Slack's agent messaging experience (`agents.sessions.*`).

The session follows the run: `processing` while it works (Slack shows its native stop button then), `suspended`
while a person reviews its escalation, `active` after an answer (a follow-up may come), `closed` when a reviewer
rejects it or it expires. The first status names the session: the question, shortened, and who asked. Like the
thread status, a session is a courtesy: a workspace whose Slack refuses the methods (an app on the older
experience, a missing scope) gets no more session calls, said once in the log; a passing failure costs one call.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from slack_sdk.web.async_client import AsyncWebClient

from bot.core import Conversation
from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.reply.medium import passing
from bot.suggested_prompts import thread_title

log = logging.getLogger(__name__)


class SessionStatus(StrEnum):
    """agents.sessions.setStatus's statuses."""

    PROCESSING = "processing"  # a run works in the thread: Slack shows the stop button
    ACTIVE = "active"  # waiting for the next question
    SUSPENDED = "suspended"  # waiting for a person's review
    CLOSED = "closed"  # rejected or expired: nothing more will come


class Sessions:
    """Every thread's agent session, for one process: which workspaces refused them is learnt once."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._refused: set[str] = set()

    async def move(
        self, place: Conversation, status: SessionStatus, *, question: str | None = None, asker: str | None = None
    ) -> bool:
        """Set the thread's session to `status` (created if needed, titled by `question`, started by `asker`);
        False when Slack did not take it."""
        if place.workspace in self._refused:
            return False
        call = self._client.agents_sessions_setStatus(
            channel_id=place.channel,
            thread_ts=place.thread,
            status=status.value,
            title=thread_title(question) if question else None,
            initiator_user_id=asker,
        )
        try:
            await slack_call(call)
        except SlackFailure as exc:
            if passing(exc.error):
                log.info("the session of %s/%s was not set %s: %s", place.channel, place.thread, status, exc)
            else:
                self._refuse(place.workspace, str(exc.error))
            return False
        return True

    def _refuse(self, workspace: str, error: str) -> None:
        if workspace in self._refused:
            return
        self._refused.add(workspace)
        log.warning(
            "Slack refused agent sessions in workspace %s (%s): no session status is set there from now on",
            workspace,
            error,
        )
