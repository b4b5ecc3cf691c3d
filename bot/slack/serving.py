"""Serving the Slack bot: HTTP through uvicorn (bolt's ASGI adapter), or Socket Mode (no public URL needed).

Socket Mode takes events over Slack's WebSocket, and still answers GET /healthz and GET /metrics over HTTP on the
same host and port as HTTP mode, so one health check (the image's HEALTHCHECK, an orchestrator's probe) and one
Prometheus scrape work in both modes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal

import uvicorn
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from agent import Backoff, exception_line
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import METRICS_PATH
from bot.slack.app import HEALTH_PATH, Receive, Scope, Send, SlackBot
from bot.slack.gateway import FOREIGN_ERRORS, SlackFailure, slack_call

log = logging.getLogger(__name__)

FIRST_RETRY_S = 5.0  # Socket Mode: the first wait after a failed connection, doubled up to MAX_RETRY_S
MAX_RETRY_S = 60.0  # apps.connections.open is rate-limited (tier 1): about once a minute at worst
CONNECT_TIMEOUT_S = 20.0  # for the WebSocket itself, once Slack gave its URL (slack_sdk retries within it)
NOT_SERVED_IN_SOCKET_MODE = (
    b"Socket Mode: only GET /healthz and GET /metrics are served here; Slack's events come over the WebSocket"
)
# Slack refusing the app-level token: the log line and /healthz name SLACK_APP_TOKEN, the operator's to fix.
TOKEN_ERRORS = {"invalid_auth", "not_authed", "not_allowed_token_type", "token_revoked", "account_inactive"}


async def serve_http(bot: SlackBot, *, host: str, port: int) -> None:
    """Until interrupted: POST /slack/events for events, interactivity and commands; GET /healthz, GET /metrics."""
    config = uvicorn.Config(bot, host=host, port=port, lifespan="on", log_level="info", access_log=False)
    await uvicorn.Server(config).serve()


async def serve_socket_mode(
    bot: SlackBot,
    app_token: str,
    *,
    host: str,
    port: int,
    first_retry_s: float = FIRST_RETRY_S,
    max_retry_s: float = MAX_RETRY_S,
) -> None:
    """Until SIGTERM, SIGINT or cancellation: events over Slack's WebSocket (no public URL needed), and GET
    /healthz and GET /metrics on `host:port` (every other request: 404, as the events do not come over HTTP in
    this mode).

    The workers and timed jobs are started here, once (the health server runs without ASGI lifespan). A
    connection Slack refuses or cannot take is logged and retried, never fatal: health keeps being answered,
    reporting the connection under "slack". The WebSocket and the health server stop together: when either
    ends or fails, the other is stopped, then the workers (runs in progress cancelled, their threads told).
    SIGINT ends with KeyboardInterrupt once everything is stopped, as in HTTP mode.
    """
    await bot.start()
    try:
        link = SocketModeLink(bot, app_token, first_retry_s=first_retry_s, max_retry_s=max_retry_s)
        try:
            interrupted = await _serve_with_health(link, HealthSite(bot, link), host=host, port=port)
        finally:
            await link.close()
    finally:
        await bot.stop()
    if interrupted:
        raise KeyboardInterrupt


async def _serve_with_health(link: SocketModeLink, site: HealthSite, *, host: str, port: int) -> bool:
    """The WebSocket and the health server until a signal, or until either ends or fails; whether SIGINT came."""
    config = uvicorn.Config(site, host=host, port=port, lifespan="off", ws="none", log_level="info", access_log=False)
    server = uvicorn.Server(config)
    stop = asyncio.Event()
    received: list[int] = []
    # Before uvicorn starts: it catches SIGTERM/SIGINT itself while it serves, then raises them again to the
    # handlers it found (these), which stop the WebSocket too instead of killing the process mid-shutdown.
    handled = _handle_signals(stop, received)
    serving = asyncio.create_task(_serve_site(server), name="parley-health-site")
    connection = asyncio.create_task(link.run(), name="parley-socket-mode")
    stopping = asyncio.create_task(stop.wait(), name="parley-stop-signal")
    try:
        await asyncio.wait({serving, connection, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        server.should_exit = True
        connection.cancel()
        stopping.cancel()
        await asyncio.wait({serving, connection, stopping})
        for sig in handled:
            asyncio.get_running_loop().remove_signal_handler(sig)
    failure = None if connection.cancelled() else connection.exception()
    if failure is not None:  # a bug, not a connection failure (those are retried): shown in full
        raise failure
    exit_status = serving.result()  # uvicorn's own failures propagate from here
    if exit_status is not None:  # uvicorn could not listen (it logged why): exit as it would have
        raise SystemExit(exit_status)
    return signal.SIGINT in received


class SocketModeLink:
    """The WebSocket to Slack, through bolt's handler: opened with retries, then kept by slack_sdk (which
    reconnects by itself when Slack asks or the connection goes stale)."""

    def __init__(self, bot: SlackBot, app_token: str, *, first_retry_s: float, max_retry_s: float) -> None:
        self.handler = AsyncSocketModeHandler(bot.app, app_token, logger=SDK_LOG)
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


class HealthSite:
    """ASGI, the HTTP side of Socket Mode: GET /healthz (the bot's report, plus the Slack connection), GET /metrics.

    Nothing else: in Socket Mode SLACK_SIGNING_SECRET is optional, so a POST /slack/events here could not be
    verified; the events arrive over the WebSocket, and every other request is answered 404.
    """

    def __init__(self, bot: SlackBot, link: SocketModeLink) -> None:
        self._bot = bot
        self._link = link

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off and WebSockets are not served: nothing else arrives
            return
        if scope["path"] == HEALTH_PATH and scope["method"] == "GET":
            status, report = await self._bot.health()
            report["slack"] = await self._link.state()
            await _respond(send, status, json.dumps(report).encode(), b"application/json")
            return
        if scope["path"] == METRICS_PATH and scope["method"] == "GET":
            await _respond(send, 200, await self._bot.metrics_page(), METRICS_CONTENT_TYPE)
            return
        await _respond(send, 404, NOT_SERVED_IN_SOCKET_MODE)


async def _serve_site(server: uvicorn.Server) -> int | str | None:
    """uvicorn until told to exit; the status it exits with when it cannot start (a port in use: it logged why)."""
    try:
        await server.serve()
    except SystemExit as exc:  # raised in a task, it would skip the clean-up: returned instead
        return exc.code if exc.code is not None else 1
    return None


def _handle_signals(stop: asyncio.Event, received: list[int]) -> list[int]:
    loop = asyncio.get_running_loop()

    def on_signal(sig: int) -> None:
        if not stop.is_set():
            log.info("Socket Mode: stopping (signal %s)", signal.Signals(sig).name)
        received.append(sig)
        stop.set()

    handled: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, on_signal, sig)
        except (ValueError, NotImplementedError, RuntimeError):  # not the main thread, or not a Unix loop
            continue
        handled.append(sig)
    return handled


async def _respond(send: Send, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8") -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type)]})
    await send({"type": "http.response.body", "body": body})


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
