"""Slack's requests over HTTP (POST /slack/events), as bolt's Starlette adapter handles them: every request is
dispatched by bolt and answered with what bolt says. When `parley serve` runs over HTTP, the web front
(`bot.front`, a process of its own) has already answered Slack's signed event callbacks, and bolt's answer to
those goes no further than the front.
"""

from __future__ import annotations

from slack_bolt import BoltResponse
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request, to_starlette_response
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from starlette.requests import Request
from starlette.responses import Response


class SlackRequests:
    """bolt's app behind POST /slack/events."""

    def __init__(self, app: AsyncApp) -> None:
        self._app = app

    @staticmethod
    def bolt_request(request: Request, body: bytes) -> AsyncBoltRequest:
        """What bolt dispatches (built where the request was read). ValueError: the body is not UTF-8."""
        return to_async_bolt_request(request, body)

    async def dispatch(self, request: AsyncBoltRequest) -> BoltResponse:
        """bolt's listeners (on the application's loop): its answer to the request."""
        return await self._app.async_dispatch(request)

    @staticmethod
    def response(answer: BoltResponse) -> Response:
        return to_starlette_response(answer)
