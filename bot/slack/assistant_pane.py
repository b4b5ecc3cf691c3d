"""Where people open Parley to ask it: the Messages tab of Slack's agent messaging experience (`agent_view`), and
the assistant pane of the older one (`assistant_view`, opened from Slack's top bar, through bolt's
`AsyncAssistant` middleware). Which one a workspace has is read from the events Slack sends, never configured:
`app_home_opened` on the Messages tab offers the suggested prompts there (no thread: they sit above the
composer), `assistant_thread_started` offers them in the pane's new thread. A prompt clicked in the Messages tab
is a direct message, asked and answered in its own thread like any other.

A new assistant thread is offered the suggested prompts; a question asked there goes through the same intake
as a direct message (`RunService.take`: the same exactly-once key, queue, progress and answer), and one thread is
one conversation, so a follow-up there carries the earlier exchanges. The thread's first question becomes its
title. The middleware takes every threaded DM message without a bot (bolt's `user_message`), so a reply in an
ordinary DM thread comes here too and is taken the same way. The run's status in the thread is not set here.
bolt acknowledges before these listeners run; what Slack refuses here is logged and loses no question.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.web.async_client import AsyncWebClient

from agent import exception_line
from bot.core import RunService, StoreUnavailable
from bot.slack.events import Candidate, Ignored, read, read_assistant_thread
from bot.slack.gateway import attempt
from bot.suggested_prompts import PromptSet, thread_title

log = logging.getLogger(__name__)

Take = Callable[[Candidate], Awaitable[str | None]]


class AssistantPane:
    """The listeners of bolt's assistant middleware: thread started, context changed, a person's message."""

    def __init__(self, prompts: PromptSet, service: RunService, take: Take, client: AsyncWebClient) -> None:
        self.prompts = prompts
        self._service = service
        self._take = take
        self._client = client

    def middleware(self) -> AsyncAssistant:
        assistant = AsyncAssistant(logger=log)
        assistant.thread_started(self._thread_started)
        # Parley does not read the channel a person is looking at; bolt's default would store it via Slack.
        assistant.thread_context_changed(self._context_changed)
        assistant.user_message(self._user_message)
        return assistant

    async def _thread_started(self, body: dict[str, Any], set_suggested_prompts: Any = None) -> None:
        thread = read_assistant_thread(body)
        if isinstance(thread, Ignored):
            log.warning("assistant_thread_started %s not handled: %s", body.get("event_id"), thread.reason)
            return
        if not self.prompts.prompts or set_suggested_prompts is None:
            return
        where = f"{thread.channel_id}/{thread.thread_ts}"
        await attempt(
            set_suggested_prompts(self._offered(), title=self.prompts.title),
            what=f"set the suggested prompts of assistant thread {where}",
        )

    async def messages_tab_opened(self, channel: str, user: str) -> None:
        """Someone opened Parley's Messages tab (the agent messaging experience): its prompts, without a thread."""
        if not self.prompts.prompts:
            return
        call = self._client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, prompts=self._offered(), title=self.prompts.title
        )
        await attempt(call, what=f"set the suggested prompts of the Messages tab of {user} ({channel})")

    def _offered(self) -> list[dict[str, str]]:
        return [prompt.model_dump() for prompt in self.prompts.prompts]

    async def _context_changed(self, body: dict[str, Any]) -> None:
        log.debug("assistant thread context changed (not used): %s", body.get("event_id"))

    async def _user_message(self, body: dict[str, Any], context: Any, set_title: Any = None) -> None:
        """A question in an assistant thread: taken exactly like a DM; the thread's first one titles it."""
        found = read(body, context.get("bot_user_id"))
        if isinstance(found, Ignored):
            log.debug("ignored event %s: %s", body.get("event_id"), found.reason)
            return
        first = await self._is_first_question(found)
        run_id = await self._take(found)
        if run_id is None or not first or set_title is None:
            return
        ask = found.ask
        await attempt(set_title(thread_title(ask.question)), what=f"title the assistant thread of run {run_id}")

    async def _is_first_question(self, candidate: Candidate) -> bool:
        conversation = candidate.ask.conversation
        if conversation is None:
            return False
        try:
            return not await self._service.asked_before(conversation)
        except StoreUnavailable as exc:
            log.warning("cannot tell whether a question opens its assistant thread: %s", exception_line(exc))
            return False


def register_assistant_pane(app: AsyncApp, prompts: PromptSet, service: RunService, take: Take) -> AssistantPane:
    """The pane's listeners, as bolt middleware: assistant events never reach the app's own `message` listener.
    The Messages tab's opening is the Home listener's event (`app_home_opened`): it calls `messages_tab_opened`."""
    pane = AssistantPane(prompts, service, take, app.client)
    app.assistant(pane.middleware())
    return pane
