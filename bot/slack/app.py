"""SlackBot: bolt's app and Parley's listeners on it — nothing else.

Each listener reads what Slack sent (`events`, `interactions`) and makes one call of the run service or the
history; the answers reach Slack through the service's notifier and the pool's replies. Serving (the web app's
route, or Socket Mode) and the process's lifecycle (workers, jobs, recovery) belong to the application
(`bot.web`, `bot.assembly.Runtime`); what is Slack's own to start and stop — its kept connections, the reviewer
group read ahead of the first click — is started and stopped here.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.core import History, ReviewConfig, RunService
from bot.slack.assistant_pane import register_assistant_pane
from bot.slack.commands import register_commands
from bot.slack.events import Candidate, Ignored, read
from bot.slack.feedback import FeedbackDesk
from bot.slack.gateway import KeptConnections, SlackGateway
from bot.slack.home import ToolServers, register_home
from bot.slack.http import SlackRequests
from bot.slack.review.desk import ReviewDesk
from bot.slack.review.reviewers import Reviewers
from bot.slack.stop import StopDesk
from bot.suggested_prompts import AssistantConfig, PromptSet, prompt_set

log = logging.getLogger(__name__)


class SlackBot:
    """One Slack app: intake in the listeners (fast), everything after it in the run service."""

    def __init__(
        self,
        app: AsyncApp,
        service: RunService,
        history: History,
        *,
        review: ReviewConfig | None = None,
        prompts: PromptSet | None = None,
        signing_secret: str | None = None,
        tool_servers: ToolServers = list,
    ) -> None:
        self.app = app
        self.requests = SlackRequests(app)  # POST /slack/events, as the web app serves it
        self.signing_secret = signing_secret  # what the web front verifies events with (`bot.front`)
        self.client = app.client
        self.gateway = SlackGateway(app.client)
        self.service = service
        self.reviewers = Reviewers(review or ReviewConfig(), app.client)
        self._connections: KeptConnections | None = None
        self._warming: asyncio.Future[None] | None = None
        # Middleware: questions in Slack's assistant pane are taken there, before any listener below.
        prompts = prompts or prompt_set(AssistantConfig(), [])
        self.assistant_pane = register_assistant_pane(app, prompts, service, self.take)
        app.event("app_mention")(self._on_message)
        app.event("message")(self._on_message)
        # Before the catch-all (bolt runs the first match); the Messages tab's opening offers the pane's prompts.
        register_home(
            app,
            history,
            self.reviewers,
            self.gateway,
            self.assistant_pane.messages_tab_opened,
            tool_servers,
        )
        self.stop_desk = StopDesk(service, history, self.reviewers, self.gateway)
        app.event("agent_session_stopped")(self.stop_desk.on_session_stopped)
        register_commands(app, history, self.reviewers, self.stop_desk.by_command)
        self.review_desk = ReviewDesk(app, service, self.reviewers, self.gateway)
        self.feedback_desk = FeedbackDesk(app, service, self.gateway)
        app.event(re.compile(".*"))(self._on_other_event)  # acknowledged, nothing to do

    async def start(self) -> None:
        """Slack's own resources: one kept connection pool for the Web API (on the running loop, as aiohttp
        wants), and the reviewer group read ahead, so that no click waits for it."""
        self._connections = KeptConnections(self.client)
        self._warming = asyncio.ensure_future(self.reviewers.warm())  # in the background: start-up never waits

    async def stop(self) -> None:
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
            self._warming = None
        if self._connections is not None:
            await self._connections.close()
            self._connections = None

    async def take(self, candidate: Candidate) -> str | None:
        """A message that may ask Parley something, handed to the run service's intake."""
        return await self.service.take(candidate.ask, follow_up=candidate.follow_up)

    async def _on_message(self, body: dict[str, Any], context: Any) -> None:
        """The listener: decide, record, hand over. Nothing slow happens here (Slack's 3-second rule)."""
        found = read(body, context.get("bot_user_id"))
        if isinstance(found, Ignored):
            log.debug("ignored event %s: %s", body.get("event_id"), found.reason)
            return
        await self.take(found)

    async def _on_other_event(self, body: dict[str, Any]) -> None:
        event = body.get("event") if isinstance(body, dict) else None
        log.debug("acknowledged an event Parley does not use: %s", (event or {}).get("type"))
