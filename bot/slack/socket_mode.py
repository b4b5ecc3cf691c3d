"""Socket Mode: Slack's events over its WebSocket, so no public URL is needed.

`SocketModeLink` opens the WebSocket through bolt's handler, retrying a connection Slack refuses or cannot take
(logged, never fatal), and reports its state for GET /healthz. Serving it beside the application's web app, and
stopping both on a signal, is the application's (`bot.serving`).
"""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from agent import Backoff, exception_line
from bot.slack.gateway import FOREIGN_ERRORS, SlackFailure, slack_call

log = logging.getLogger(__name__)

FIRST_RETRY_S = 5.0  # the first wait after a failed connection, doubled up to MAX_RETRY_S
MAX_RETRY_S = 60.0  # apps.connections.open is rate-limited (tier 1): about once a minute at worst
CONNECT_TIMEOUT_S = 20.0  # for the WebSocket itself, once Slack gave its URL (slack_sdk retries within it)
# Slack refusing the app-level token: the log line and /healthz name SLACK_APP_TOKEN, the operator's to fix.
TOKEN_ERRORS = {"invalid_auth", "not_authed", "not_allowed_token_type", "token_revoked", "account_inactive"}


class SocketModeLink:
    """The WebSocket to Slack, through bolt's handler: opened with retries, then kept by slack_sdk (which
    reconnects by itself when Slack asks or the connection goes stale)."""

    def __init__(
        self, app: AsyncApp, app_token: str, *, first_retry_s: float = FIRST_RETRY_S, max_retry_s: float = MAX_RETRY_S
    ) -> None:
        self.handler = AsyncSocketModeHandler(app, app_token, logger=SDK_LOG)
        self._app_token = app_token
        # No jitter: one WebSocket per process, opened rarely; when Slack rate-limits it, its Retry-After sets the wait.
        self._backoff = Backoff(first_retry_s, max_retry_s, jitter=0.0)
        self.problem: str | None = None  # why the last attempt failed, until one succeeds

    async def run(self) -> None:
        await self.connect()
        await asyncio.Event().wait()  # slack_sdk's own tasks receive the events from here on

    async def connect(self) -> None:
        """Until connected: ask Slack for a WebSocket URL (apps.connections.open, with the app-level token), open
        it; on a failure, log one line and try again later (exponential back-off, or Slack's Retry-After)."""
        client = self.handler.client
        failures = 0
        while True:
            retry_after, level, step = None, logging.WARNING, "apps.connections.open"
            try:
                opened = await slack_call(client.web_client.apps_connections_open(app_token=self._app_token))
                client.wss_uri = opened["url"]
                step = "the WebSocket"
                # slack_sdk retries a WebSocket that does not open with the same URL, which may have expired.
                await slack_call(asyncio.wait_for(self.handler.connect_async(), CONNECT_TIMEOUT_S))
            except SlackFailure as failure:
                if failure.refused:
                    error = str(failure.error)
                    if error == "ratelimited":
                        retry_after = failure.retry_after_s
                    else:
                        level = logging.ERROR
                    if error in TOKEN_ERRORS:
                        error += ": check SLACK_APP_TOKEN (an app-level xapp- token with connections:write)"
                    self.problem = f"Slack answered {error}"
                elif step == "the WebSocket" and isinstance(failure.__cause__, TimeoutError):
                    # wait_for's (slack_sdk catches the rest, and logged each attempt)
                    self.problem = f"the WebSocket did not open within {CONNECT_TIMEOUT_S:g} s"
                else:
                    self.problem = f"{step} failed: {exception_line(failure.__cause__ or failure)}"
            else:
                if failures:
                    log.warning("Socket Mode: connected to Slack after %d failed attempts", failures)
                else:
                    log.info("Socket Mode: connected to Slack")
                self.problem = None
                return
            failures += 1
            wait = self._backoff.delay(failures, retry_after)
            log.log(
                level,
                "Socket Mode: cannot connect to Slack (%s); retrying in %g s; GET /healthz is still served",
                self.problem,
                wait,
            )
            await asyncio.sleep(wait)

    async def state(self) -> str:
        """The connection, as /healthz reports it."""
        if await self.handler.client.is_connected():
            return "connected (Socket Mode)"
        if self.problem:
            return f"not connected (Socket Mode), retrying: {self.problem}"
        return "connecting (Socket Mode)"

    async def close(self) -> None:
        await self.handler.close_async()
        await asyncio.sleep(0)  # let slack_sdk's cancelled tasks finish


class _NoTracebackForOutages(logging.Filter):
    """slack_sdk logs every failed (re)connection with its traceback; for a refusal, a network error or a
    timeout the traceback adds nothing to the line, which names the error. Other exceptions keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], FOREIGN_ERRORS):
            record.exc_info = None
            record.exc_text = None
        return True


# slack_sdk's Socket Mode client logs here (bolt would give it the app's logger).
SDK_LOG = log.getChild("slack_sdk")
SDK_LOG.addFilter(_NoTracebackForOutages())
