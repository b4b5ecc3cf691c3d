"""Slack's requests over HTTP (POST /slack/events), as bolt's Starlette adapter handles them, in two halves: what
the web front may answer by itself, and what only the application can.

An event callback that Slack signed needs nothing but a 200 (bolt answers every event with an empty 200 and
runs its listener afterwards): the front answers it at once, from its own thread, and hands the request to bolt
on the application's loop. Everything else (interactivity, slash commands, URL verification, a request whose
signature bolt must refuse) is dispatched by bolt, and answered with what bolt says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from slack_bolt import BoltResponse
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request, to_starlette_response
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request
from starlette.responses import Response

EVENT_CALLBACK = "event_callback"


class SlackRequests:
    """bolt's app behind POST /slack/events; `signing_secret` None: no request is answered before bolt has seen
    it (Socket Mode, where bolt does not verify)."""

    def __init__(self, app: AsyncApp, signing_secret: str | None) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None

    def acknowledged_before_dispatch(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """Whether this request is an event callback Slack signed: a 200 is its whole answer, owed at once."""
        if self._verifier is None or not body.startswith(b"{"):  # interactivity and commands come as forms
            return False
        try:
            kind = json.loads(body).get("type")
        except (ValueError, AttributeError):  # not JSON, or not an object: bolt refuses it
            return False
        return kind == EVENT_CALLBACK and self._verifier.is_valid_request(body, dict(headers))

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
