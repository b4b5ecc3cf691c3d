"""Serving `parley serve`: the application's web app through uvicorn — with Slack's events over HTTP, or, in
Socket Mode, beside the WebSocket that brings them.

Both modes answer GET /healthz and GET /metrics on the same host and port, so one health check (the image's
HEALTHCHECK, an orchestrator's probe) and one Prometheus scrape work in both.

Over HTTP, uvicorn serves from a thread and an event loop of its own: the runs' work (the engine, the
fact-checker, the store's writes, Slack's updates) keeps the application's loop busy, and an acknowledgement that
queued behind it on one loop waited tens of milliseconds in a burst. The front reads, verifies and acknowledges;
the application's loop dispatches (`bot.web.AppLoop`).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable

import uvicorn

from bot.assembly import Runtime
from bot.slack.socket_mode import FIRST_RETRY_S, MAX_RETRY_S, SocketModeLink
from bot.web import AppLoop, web_app

log = logging.getLogger(__name__)

FRONT_SWITCH_INTERVAL_S = 0.001  # how long a thread waiting for the interpreter waits at most (Python: 5 ms)


async def serve_http(runtime: Runtime, *, host: str, port: int) -> None:
    """Until SIGTERM, SIGINT or cancellation: POST /slack/events (events, interactivity, commands), GET /healthz,
    GET /metrics, served from a thread of their own; the runtime is started here, on this loop, before the front
    listens, and stopped after it has stopped. SIGINT ends with KeyboardInterrupt once everything is stopped."""
    await runtime.start()
    try:
        server = http_front(runtime, host=host, port=port)
        interrupted = await _serve_until_stopped(server, serve_front(server))
    finally:
        await runtime.stop()
    if interrupted:
        raise KeyboardInterrupt


def http_front(runtime: Runtime, *, host: str, port: int) -> uvicorn.Server:
    """uvicorn, to serve the web app from a thread of its own (`serve_front`); the runtime it reaches lives on
    the running loop, which starts and stops it."""
    site = web_app(runtime, lifespan=False, app_loop=AppLoop(asyncio.get_running_loop()))
    config = uvicorn.Config(site, host=host, port=port, lifespan="off", log_level="info")
    config.access_log = False
    return uvicorn.Server(config)


async def serve_front(server: uvicorn.Server) -> int | str | None:
    """`server` on a thread and an event loop of its own until told to exit (`should_exit`); the status it exits
    with when it cannot start.

    While it serves, a thread waiting for the interpreter gets it within 1 ms instead of 5: the front waits for
    it after every read and write of a request while the application's thread computes (at 5 ms, a burst of
    mentions saw a p99 acknowledgement of 60–80 ms; at 1 ms, 25–45 ms; bench/ack_burst.py). A thread that
    computes alone is never interrupted, so the runs lose nothing when no request is waiting."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(FRONT_SWITCH_INTERVAL_S)
    try:
        return await asyncio.to_thread(asyncio.run, _serve_site(server))
    finally:
        sys.setswitchinterval(interval)


async def serve_socket_mode(
    runtime: Runtime,
    app_token: str,
    *,
    host: str,
    port: int,
    first_retry_s: float = FIRST_RETRY_S,
    max_retry_s: float = MAX_RETRY_S,
) -> None:
    """Until SIGTERM, SIGINT or cancellation: events over Slack's WebSocket, and GET /healthz (with the
    connection's state under "slack") and GET /metrics on `host:port` (every other request: 404, as the events
    do not come over HTTP in this mode).

    The runtime is started here, once (the web app runs without its lifespan). A connection Slack refuses or
    cannot take is logged and retried, never fatal. The WebSocket and the web app stop together: when either
    ends or fails, the other is stopped, then the runtime (runs in progress cancelled, their threads told).
    SIGINT ends with KeyboardInterrupt once everything is stopped, as in HTTP mode.
    """
    assert runtime.slack is not None, "Socket Mode needs Slack"
    await runtime.start()
    try:
        link = SocketModeLink(runtime.slack.app, app_token, first_retry_s=first_retry_s, max_retry_s=max_retry_s)
        try:
            site = web_app(runtime, slack_events=False, slack_state=link.state, lifespan=False)
            config = uvicorn.Config(site, host=host, port=port, lifespan="off", ws="none", log_level="info")
            config.access_log = False
            server = uvicorn.Server(config)
            interrupted = await _serve_until_stopped(server, _serve_site(server), link.run())
        finally:
            await link.close()
    finally:
        await runtime.stop()
    if interrupted:
        raise KeyboardInterrupt


async def _serve_until_stopped(
    server: uvicorn.Server, serving_site: Awaitable[int | str | None], link: Awaitable[None] | None = None
) -> bool:
    """The web app (and Socket Mode's WebSocket, `link`) until a signal or cancellation, or until either ends or
    fails; whether SIGINT came."""
    stop = asyncio.Event()
    received: list[int] = []
    # Before uvicorn starts: on this (the main) thread it catches SIGTERM/SIGINT itself while it serves, then
    # raises them again to the handlers it found (these), which stop the WebSocket too instead of killing the
    # process mid-shutdown; on a thread of its own it catches none, and these stop it.
    handled = _handle_signals(stop, received)
    serving = asyncio.ensure_future(serving_site)
    connection = asyncio.ensure_future(link) if link is not None else None
    stopping = asyncio.create_task(stop.wait(), name="parley-stop-signal")
    running = {serving, stopping} | ({connection} if connection is not None else set())
    try:
        await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
    finally:
        server.should_exit = True  # a front on its own thread cannot be cancelled: told to exit, and waited for
        stopping.cancel()
        if connection is not None:
            connection.cancel()
        await asyncio.wait(running)
        for sig in handled:
            asyncio.get_running_loop().remove_signal_handler(sig)
    failure = None if connection is None or connection.cancelled() else connection.exception()
    if failure is not None:  # a bug, not a connection failure (those are retried): shown in full
        raise failure
    exit_status = serving.result()  # uvicorn's own failures propagate from here
    if exit_status is not None:  # uvicorn could not listen (it logged why): exit as it would have
        raise SystemExit(exit_status)
    return signal.SIGINT in received


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
            log.info("stopping (signal %s)", signal.Signals(sig).name)
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
