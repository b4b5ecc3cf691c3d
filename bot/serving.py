"""Serving `parley serve`: the application's web app through uvicorn — with Slack's events over HTTP behind the
web front, or, in Socket Mode, beside the WebSocket that brings them.

Both modes answer GET /healthz and GET /metrics on the same host and port, so one health check (the image's
HEALTHCHECK, an orchestrator's probe) and one Prometheus scrape work in both.

Over HTTP the public port belongs to the web front (`bot.front`), a child process that acknowledges Slack's
signed events at once and passes every request on to the application, which serves its web app on a Unix socket
in a private directory, on the event loop of its runtime. An acknowledgement thus never waits for the runs' work
(the engine, the fact-checker, the store's writes, Slack's updates), which keeps this interpreter busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Awaitable, Iterator
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from bot.assembly import Runtime
from bot.front import SIGNING_SECRET_ENV
from bot.slack.socket_mode import FIRST_RETRY_S, MAX_RETRY_S, SocketModeLink
from bot.web import web_app

log = logging.getLogger(__name__)

FRONT_STOP_TIMEOUT_S = 15.0  # the front finishes passing on what it acknowledged (bot.front.DRAIN_TIMEOUT_S: 10)
APP_SOCKET = "app.sock"


class FrontExited(Exception):
    """The web front ended without being told to (it could not listen, or was killed): the application stops."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the web front exited with status {status}")
        self.status = status


async def serve_http(runtime: Runtime, *, host: str, port: int) -> None:
    """Until SIGTERM, SIGINT or cancellation: the web front on `host:port` (POST /slack/events for events,
    interactivity and commands, GET /healthz, GET /metrics), the application behind it. The runtime is started
    here, before either serves, and stopped after both have stopped; the front stops first. SIGINT ends with
    KeyboardInterrupt once everything is stopped; a front that ends by itself (a port in use: it logged why) ends
    the application with its status."""
    await runtime.start()
    try:
        with tempfile.TemporaryDirectory(prefix="parley-") as private:
            socket_path = os.path.join(private, APP_SOCKET)
            server = application_server(runtime, socket_path)
            secret = runtime.slack.signing_secret if runtime.slack is not None else None
            front = _front(server, host=host, port=port, upstream=socket_path, signing_secret=secret)
            try:
                interrupted = await _serve_until_stopped(server, _serve_site(server), front)
            except FrontExited as exc:
                log.error("%s; stopping", exc)
                raise SystemExit(exc.status if exc.status > 0 else 1) from None  # < 0: killed by a signal
    finally:
        await runtime.stop()
    if interrupted:
        raise KeyboardInterrupt


def application_server(runtime: Runtime, socket_path: str) -> uvicorn.Server:
    """uvicorn serving the web app on the Unix socket `socket_path`, for the web front; the runtime lives on the
    loop it runs on, which starts and stops it."""
    # Its start and stop are not news to operators: the front's uvicorn reports those of the public port.
    return _uvicorn(web_app(runtime, lifespan=False), uds=socket_path, log_level="warning")


async def _front(server: uvicorn.Server, *, host: str, port: int, upstream: str, signing_secret: str | None) -> None:
    """The web front as a child process, once `server` listens, until it exits (FrontExited) or this is cancelled
    (then it is stopped and waited for). Its standard input is a pipe from here: if this process dies, the front
    sees it end and stops too. In a session of its own, a terminal's Ctrl-C reaches only this process, which stops
    it in order."""
    while not server.started:  # noqa: ASYNC110 (uvicorn sets a flag, it has no event to wait for)
        await asyncio.sleep(0.01)
    env = {name: value for name, value in os.environ.items() if name != SIGNING_SECRET_ENV}
    if signing_secret:
        env[SIGNING_SECRET_ENV] = signing_secret
    command = ["-m", "bot.front", "--host", host, "--port", str(port), "--upstream", upstream]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *command, stdin=asyncio.subprocess.PIPE, env=env, start_new_session=True
    )
    try:
        status = await process.wait()
    except asyncio.CancelledError:
        await _stop_front(process)
        raise
    raise FrontExited(status)


async def _stop_front(process: asyncio.subprocess.Process) -> None:
    """SIGTERM, then up to FRONT_STOP_TIMEOUT_S for the front to finish what it acknowledged; SIGKILL after."""
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), FRONT_STOP_TIMEOUT_S)
    except TimeoutError:
        log.warning("the web front did not stop within %gs; killing it", FRONT_STOP_TIMEOUT_S)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


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
            server = _uvicorn(site, host=host, port=port, ws="none")
            interrupted = await _serve_until_stopped(server, _serve_site(server), link.run())
        finally:
            await link.close()
    finally:
        await runtime.stop()
    if interrupted:
        raise KeyboardInterrupt


class _Server(uvicorn.Server):
    """uvicorn, leaving SIGTERM and SIGINT to `_serve_until_stopped`: on the main thread uvicorn would catch them
    itself and stop serving at once, before what brings it requests (the front, the WebSocket) has stopped."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _uvicorn(app: ASGIApp, **options: Any) -> uvicorn.Server:
    config = uvicorn.Config(app, **({"lifespan": "off", "log_level": "info"} | options))
    config.access_log = False
    return _Server(config)


async def _serve_until_stopped(
    server: uvicorn.Server, serving_site: Awaitable[int | str | None], link: Awaitable[None] | None = None
) -> bool:
    """The web app, and what brings it requests (`link`: the web front, or Socket Mode's WebSocket), until a
    signal or cancellation, or until either ends or fails; whether SIGINT came."""
    stop = asyncio.Event()
    received: list[int] = []
    handled = _handle_signals(stop, received)
    serving = asyncio.ensure_future(serving_site)
    connection = asyncio.ensure_future(link) if link is not None else None
    stopping = asyncio.create_task(stop.wait(), name="parley-stop-signal")
    running = {serving, stopping} | ({connection} if connection is not None else set())
    try:
        await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if connection is not None:  # what brings requests stops first (the web front, or Slack's WebSocket)
            connection.cancel()
            await asyncio.wait({connection})
        server.should_exit = True
        await asyncio.wait(running)
        for sig in handled:
            asyncio.get_running_loop().remove_signal_handler(sig)
    failure = None if connection is None or connection.cancelled() else connection.exception()
    if failure is not None:  # the front's exit, or a bug (a WebSocket's failures are retried): shown in full
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
