"""The web app of `parley serve` (Starlette): the application owns its routes and its lifespan.

- `GET /healthz`: the runtime's report (database, LLM, queue, and Slack's state); 503 when the database cannot
  be reached.
- `GET /metrics`: Prometheus's text format.
- `POST /slack/events`: bolt's adapter, mounted when Slack's events come over HTTP (not in Socket Mode, where
  they come over the WebSocket, and not when Slack is off).

The runtime (its database pool, workers and Slack client) lives on the application's event loop. `parley serve`
over HTTP serves this app from a thread and a loop of its own (`AppLoop`), so that an acknowledgement never waits
behind a run's work: the routes reach the runtime through the `AppLoop`, and an event callback Slack signed is
answered at once, before bolt dispatches it on the application's loop. Without an `AppLoop` (tests, Socket
Mode) everything runs on the one loop that serves. The lifespan, when asked for, starts and stops the runtime.
A future page is one more route here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agent import exception_line
from bot.assembly import Runtime
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import METRICS_PATH

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
EVENTS_PATH = "/slack/events"

# What /healthz adds about Slack: the Socket Mode link's state, when there is one.
SlackState = Callable[[], Coroutine[Any, Any, str]]

T = TypeVar("T")


class AppLoop:
    """The application's event loop, reached from the web front's; `loop` None: the front's loop is the
    application's (work is awaited where it is asked for)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._sent: set[asyncio.Task[Any]] = set()

    def _elsewhere(self) -> asyncio.AbstractEventLoop | None:
        loop = self._loop
        return loop if loop is not None and loop is not asyncio.get_running_loop() else None

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """`work` run on the application's loop; its outcome, here."""
        loop = self._elsewhere()
        if loop is None:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))

    def send(self, work: Coroutine[Any, Any, Any], what: str) -> None:
        """`work` started on the application's loop, not waited for; a failure is logged with its traceback."""

        def done(outcome: concurrent.futures.Future[Any] | asyncio.Future[Any]) -> None:
            if not outcome.cancelled() and (failure := outcome.exception()) is not None:
                log.error("%s failed", what, exc_info=failure)

        loop = self._elsewhere()
        if loop is None:
            task = asyncio.get_running_loop().create_task(work)
            self._sent.add(task)  # a strong reference until it ends
            task.add_done_callback(self._sent.discard)
            task.add_done_callback(done)
        else:
            asyncio.run_coroutine_threadsafe(work, loop).add_done_callback(done)


def web_app(
    runtime: Runtime,
    *,
    slack_events: bool = True,
    slack_state: SlackState | None = None,
    lifespan: bool = True,
    app_loop: AppLoop | None = None,
) -> Starlette:
    """The app: health and metrics always; Slack's events over HTTP when `slack_events` and Slack is on; the
    runtime started and stopped by the app's lifespan when `lifespan`; the runtime reached through `app_loop`
    when the app is served from another loop."""
    on_app = app_loop or AppLoop()

    async def health(_: Request) -> Response:
        status, report = await on_app.call(runtime.health())
        if slack_state is not None:
            report["slack"] = await on_app.call(slack_state())
        return JSONResponse(report, status_code=status)

    async def metrics(_: Request) -> Response:
        return Response(await on_app.call(runtime.metrics_page()), media_type=METRICS_CONTENT_TYPE.decode())

    routes = [Route(HEALTH_PATH, health, methods=["GET"]), Route(METRICS_PATH, metrics, methods=["GET"])]
    if slack_events and runtime.slack is not None:
        routes.append(Route(EVENTS_PATH, _slack_events(runtime, on_app), methods=["POST"]))

    @contextlib.asynccontextmanager
    async def started(_: Starlette) -> AsyncIterator[None]:
        await runtime.start()
        try:
            yield
        finally:
            await runtime.stop()

    return Starlette(routes=routes, lifespan=started if lifespan else None)


def _slack_events(runtime: Runtime, on_app: AppLoop) -> Callable[[Request], Awaitable[Response]]:
    """POST /slack/events: an event callback Slack signed is acknowledged at once and dispatched by bolt on the
    application's loop; any other request is dispatched first and answered with bolt's response. The
    acknowledgement is timed for GET /metrics."""
    assert runtime.slack is not None
    slack = runtime.slack.requests

    async def events(request: Request) -> Response:
        started = time.perf_counter()
        try:
            body = await request.body()
            try:
                bolt_request = slack.bolt_request(request, body)  # bolt parses the body before it verifies it
            except ValueError as exc:  # not UTF-8, not JSON, not a form
                log.warning("refused a request to %s whose body cannot be parsed: %s", EVENTS_PATH, exception_line(exc))
                return PlainTextResponse("the request body is not valid JSON or form data", status_code=400)
            if slack.acknowledged_before_dispatch(body, request.headers):
                on_app.send(slack.dispatch(bolt_request), f"dispatching an event to {EVENTS_PATH}")
                return Response(status_code=200)
            return slack.response(await on_app.call(slack.dispatch(bolt_request)))
        finally:
            runtime.metrics.observe_ack(time.perf_counter() - started)

    return events
