"""SlackBot: bolt's async app, our listeners, and the ASGI entry (`/slack/events`, `/healthz`, `/metrics`)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from slack_bolt.adapter.asgi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from agent import InvalidQuestion, exception_line
from bot.jobs import Jobs, Recovery
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import METRICS_PATH, Metrics
from bot.runs import RunService
from bot.settings import Settings
from bot.slack.assistant_pane import register_assistant_pane
from bot.slack.commands import register_commands
from bot.slack.events import Candidate, Ignored, read
from bot.slack.feedback import FeedbackDesk
from bot.slack.gateway import KeptConnections
from bot.slack.home import register_home
from bot.slack.review import ReviewBoard, ReviewDesk
from bot.slack.reviewers import Reviewers
from bot.slack.workers import RunQueue
from bot.store import Database, StoreUnavailable, check_reachable
from bot.store.conversations import SlackAsk, enqueue, thread_is_ours
from bot.store.database import patiently
from bot.suggested_prompts import AssistantConfig, PromptSet, prompt_set
from bot.wording import NOT_TAKEN_DATABASE_UNAVAILABLE

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
SLACK_RETRIES = 3

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def slack_client(settings: Settings) -> AsyncWebClient:
    """The Web API client: 429s wait for Retry-After, brief outages are retried (slack_sdk's handlers)."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    return configure_client(AsyncWebClient(token=token), settings)


def configure_client(client: AsyncWebClient, settings: Settings) -> AsyncWebClient:
    client.base_url = _api_url(settings.slack_api_url)
    client.retry_handlers.extend(
        [
            AsyncRateLimitErrorRetryHandler(max_retry_count=SLACK_RETRIES),
            AsyncServerErrorRetryHandler(max_retry_count=SLACK_RETRIES),
        ]
    )
    if not any(isinstance(h, AsyncConnectionErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(AsyncConnectionErrorRetryHandler(max_retry_count=SLACK_RETRIES))
    return client


def _api_url(url: str | None) -> str:
    if not url:
        return AsyncWebClient.BASE_URL
    return url if url.endswith("/") else url + "/"


def slack_app(settings: Settings, client: AsyncWebClient | None = None) -> AsyncApp:
    """bolt's app: requests verified with the signing secret; its Web API client configured once."""
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    options: dict[str, Any] = {
        "signing_secret": secret,
        "request_verification_enabled": secret is not None,
        "raise_error_for_unhandled_request": False,
    }
    if client is not None:
        return AsyncApp(client=client, **options)
    # bolt builds the client from the token (given both, it warns that the token is unused)
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    app = AsyncApp(token=token, **options)
    configure_client(app.client, settings)
    return app


class SlackBot:
    """One Slack app: intake in the listeners (fast), the agent in Parley's own worker pool.

    Built by `bot.assembly.build_slack_bot`; here the parts are only connected to bolt's listeners.
    """

    def __init__(
        self,
        app: AsyncApp,
        db: Database,
        runs: RunService,
        queue: RunQueue,
        reviewers: Reviewers,
        review_board: ReviewBoard,
        *,
        metrics: Metrics,
        jobs: Jobs | None = None,
        recovery: Recovery | None = None,
        llm_url: str | None = None,
        prompts: PromptSet | None = None,
        escalate_on_feedback: bool = False,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.client = app.client
        self._db = db
        self._runs = runs
        self.queue = queue
        self.reviewers = reviewers
        self.review_board = review_board
        self.jobs = jobs
        self.recovery = recovery
        self._llm_url = llm_url
        self._handler = AsyncSlackRequestHandler(app, path=EVENTS_PATH)
        self._background: set[asyncio.Task[None]] = set()
        self._connections: KeptConnections | None = None
        # Middleware: questions in Slack's assistant pane are taken there, before any listener below.
        self.assistant_pane = register_assistant_pane(app, prompts or prompt_set(AssistantConfig(), []), db, self.take)
        app.event("app_mention")(self._on_message)
        app.event("message")(self._on_message)
        register_home(app, db, reviewers)  # before the catch-all: bolt runs the first match
        register_commands(app, db, reviewers)
        self.review_desk = ReviewDesk(app, runs, reviewers, queue, self.client)
        self.feedback_desk = FeedbackDesk(app, db, runs, review_board, self.client, escalate=escalate_on_feedback)
        app.event(re.compile(".*"))(self._on_other_event)  # acknowledged, nothing to do

    async def start(self) -> None:
        """The hold on runs, workers, reviewer group, timed jobs, recovery; then start-up's objects are frozen
        for the collector."""
        self._connections = KeptConnections(self.client)  # on the running loop: aiohttp wants one
        await self._runs.owner.start()
        self.queue.start()
        self._in_background(self.reviewers.warm())
        if self.jobs is not None:
            self.jobs.start()
        if self.recovery is not None:
            self.recovery.start()
        # The ~200k objects of start-up (bolt, SQLAlchemy, pydantic) never die; frozen, the collector
        # stops re-walking them on every full pass (70-120 ms each, which stalled Slack's acks).
        gc.collect()
        gc.freeze()

    async def stop(self) -> None:
        """Nothing new is recovered or run; unfinished threads are told; then the hold on runs ends."""
        if self.recovery is not None:
            await self.recovery.stop()
        if self.jobs is not None:
            await self.jobs.shutdown()
        await self.queue.stop()
        await self._runs.owner.stop()
        if self._connections is not None:
            await self._connections.close()

    async def _on_message(self, body: dict[str, Any], context: Any) -> None:
        """The listener: decide, record, hand over. Nothing slow happens here (Slack's 3-second rule)."""
        found = read(body, context.get("bot_user_id"))
        if isinstance(found, Ignored):
            log.debug("ignored event %s: %s", body.get("event_id"), found.reason)
            return
        await self.take(found)

    async def take(self, candidate: Candidate) -> str | None:
        ask = candidate.ask
        if candidate.kind == "thread_reply":
            try:
                ours = await thread_is_ours(self._db, ask.workspace_id, ask.channel_id, ask.thread_ts)
            except StoreUnavailable as exc:
                # Nobody addressed Parley for certain: say nothing in a thread that may not be ours.
                log.error("intake of a thread reply failed, the store is unavailable: %s", exception_line(exc))
                return None
            if not ours:
                return None
        try:
            self._runs.check_question(ask.question)
            run_id = await self._enqueue(ask)
        except InvalidQuestion as exc:
            self._in_background(self.queue.tell(ask, f"I can't take this question: {exc}."))
            return None
        except StoreUnavailable as exc:
            log.error("intake failed, the store is unavailable: %s", exception_line(exc))
            self._in_background(self.queue.tell(ask, NOT_TAKEN_DATABASE_UNAVAILABLE))
            return None
        if run_id is None:
            log.info("message %s in %s already has a run (a redelivery)", ask.trigger_ts, ask.channel_id)
            return None
        self.queue.submit(run_id, ask)
        return run_id

    async def _enqueue(self, ask: SlackAsk) -> str | None:
        """Record the question; a pool with every connection busy (a burst) is waited for, not an outage.

        Slack was already answered (bolt acks before the listener runs), so waiting here costs nobody the
        3-second rule; only a database that cannot be reached is reported as down.
        """
        return await patiently(lambda: enqueue(self._db, ask, owner=self._runs.owner.id))

    async def _on_other_event(self, body: dict[str, Any]) -> None:
        event = body.get("event") if isinstance(body, dict) else None
        log.debug("acknowledged an event Parley does not use: %s", (event or {}).get("type"))

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def health(self) -> tuple[int, dict[str, str]]:
        """Database and LLM reachability; 503 when the database cannot be reached."""
        report: dict[str, str] = {}
        try:
            await check_reachable(self._db)
            report["database"] = "ok"
        except StoreUnavailable as exc:
            report["database"] = f"unreachable: {exc}"
        report["llm"] = await _llm_reachability(self._llm_url)
        report["queue"] = f"{self.queue.busy} running, {self.queue.waiting} waiting"
        report["pending_ends"] = str(len(self._runs.owner.pending))  # finished runs the database has not taken yet
        return (200 if report["database"] == "ok" else 503), report

    async def metrics_page(self) -> bytes:
        """GET /metrics: Prometheus's text format; answered even when the store is down (it says so)."""
        return await self.metrics.page(self._db, busy=self.queue.busy, waiting=self.queue.waiting)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI: health and metrics here, everything else to bolt; lifespan starts and stops the workers."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] == "http" and scope["method"] == "GET":
            if scope["path"] == HEALTH_PATH:
                status, report = await self.health()
                await _respond(send, status, json.dumps(report).encode(), b"application/json")
                return
            if scope["path"] == METRICS_PATH:
                await _respond(send, 200, await self.metrics_page(), METRICS_CONTENT_TYPE)
                return
        if scope["path"] != EVENTS_PATH:
            await self._to_bolt(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await self._to_bolt(scope, receive, send)
        finally:
            self.metrics.observe_ack(time.perf_counter() - started)

    async def _to_bolt(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._handler(scope, receive, send)
        except ValueError as exc:  # bolt parses the body before it verifies it: not JSON, not a form
            log.warning(
                "refused a request to %s whose body cannot be parsed: %s", scope.get("path"), exception_line(exc)
            )
            await _respond(send, 400, b"the request body is not valid JSON or form data")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _respond(send: Send, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8") -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type)]})
    await send({"type": "http.response.body", "body": body})


async def _llm_reachability(base_url: str | None) -> str:
    if not base_url:
        return "not configured (replay or none)"
    try:
        async with httpx.AsyncClient(timeout=2.0) as http:
            response = await http.get(base_url.rstrip("/") + "/models")
    except httpx.HTTPError as exc:
        return f"unreachable: {type(exc).__name__}"
    return "ok" if response.status_code < 500 else f"answering HTTP {response.status_code}"
