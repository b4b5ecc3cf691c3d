"""The web app of `parley serve` (Starlette): the application owns its routes and its lifespan.

- `GET /healthz`: the runtime's report (database, LLM, queue, and Slack's state); 503 when the database cannot
  be reached.
- `GET /metrics`: Prometheus's text format.
- `POST /slack/events`: bolt's adapter, mounted when Slack's events come over HTTP (not in Socket Mode, where
  they come over the WebSocket, and not when Slack is off).

The runtime (its database pool, workers and Slack client) lives on the event loop that serves this app. Over
HTTP, `parley serve` serves it on a private Unix socket behind its web front (`bot.front`, a process of its own),
which has answered Slack's signed event callbacks before they get here and says how long that took
(`ACK_SECONDS_HEADER`): that is the acknowledgement /metrics reports. The lifespan, when asked for, starts and
stops the runtime. A future page is one more route here.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agent import exception_line
from bot.assembly import Runtime
from bot.front import ACK_SECONDS_HEADER
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import METRICS_PATH
from bot.slack.acks import EVENTS_PATH

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"

# What /healthz adds about Slack: the Socket Mode link's state, when there is one.
SlackState = Callable[[], Coroutine[Any, Any, str]]


def web_app(
    runtime: Runtime,
    *,
    slack_events: bool = True,
    slack_state: SlackState | None = None,
    lifespan: bool = True,
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
    """POST /slack/events: bolt's answer. The acknowledgement is timed for GET /metrics: by the web front when it
    answered Slack first, here otherwise."""
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
            return slack.response(await slack.dispatch(bolt_request))
        finally:
            front = _seconds(request.headers.get(ACK_SECONDS_HEADER))
            runtime.metrics.observe_ack(front if front is not None else time.perf_counter() - started)

    return events


def _seconds(header: str | None) -> float | None:
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None
