"""The web app of `parley serve` (Starlette): the application owns its routes and its lifespan.

- `GET /healthz`: the runtime's report (database, LLM, queue, and Slack's state); 503 when the database cannot
  be reached.
- `GET /metrics`: Prometheus's text format.
- `POST /slack/events`: bolt's adapter, mounted when Slack's events come over HTTP (not in Socket Mode, where
  they come over the WebSocket, and not when Slack is off).

The lifespan starts and stops the runtime (HTTP mode); in Socket Mode the caller does, around both the
WebSocket and this app. A future page is one more route here.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
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
SlackState = Callable[[], Awaitable[str]]


def web_app(
    runtime: Runtime, *, slack_events: bool = True, slack_state: SlackState | None = None, lifespan: bool = True
) -> Starlette:
    """The app: health and metrics always; Slack's events over HTTP when `slack_events` and Slack is on; the
    runtime started and stopped by the app's lifespan when `lifespan`."""

    async def health(_: Request) -> Response:
        status, report = await runtime.health()
        if slack_state is not None:
            report["slack"] = await slack_state()
        return JSONResponse(report, status_code=status)

    async def metrics(_: Request) -> Response:
        return Response(await runtime.metrics_page(), media_type=METRICS_CONTENT_TYPE.decode())

    routes = [Route(HEALTH_PATH, health, methods=["GET"]), Route(METRICS_PATH, metrics, methods=["GET"])]
    if slack_events and runtime.slack is not None:
        routes.append(Route(EVENTS_PATH, _slack_events(runtime), methods=["POST"]))

    @contextlib.asynccontextmanager
    async def started(_: Starlette) -> AsyncIterator[None]:
        await runtime.start()
        try:
            yield
        finally:
            await runtime.stop()

    return Starlette(routes=routes, lifespan=started if lifespan else None)


def _slack_events(runtime: Runtime) -> Callable[[Request], Awaitable[Response]]:
    """POST /slack/events through bolt's Starlette adapter, its acknowledgement timed for GET /metrics."""
    assert runtime.slack is not None
    handler = AsyncSlackRequestHandler(runtime.slack.app)

    async def events(request: Request) -> Response:
        started = time.perf_counter()
        try:
            return await handler.handle(request)
        except ValueError as exc:  # bolt parses the body before it verifies it: not UTF-8, not JSON, not a form
            log.warning("refused a request to %s whose body cannot be parsed: %s", EVENTS_PATH, exception_line(exc))
            return PlainTextResponse("the request body is not valid JSON or form data", status_code=400)
        finally:
            runtime.metrics.observe_ack(time.perf_counter() - started)

    return events
