"""Which of Slack's requests a 200 answers in full, before bolt has seen them: an event callback Slack signed.

bolt answers every event with an empty 200 and runs its listeners afterwards, so the web front (`bot.front`)
answers a signed event callback at once and passes it on. Interactivity, slash commands and URL verification
need bolt's answer; a request whose signature does not hold is left to bolt, which refuses it. This module
imports only slack_sdk's signature check: the front loads nothing of the application.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from slack_sdk.signature import SignatureVerifier

EVENTS_PATH = "/slack/events"  # where Slack sends events, interactivity and commands
EVENT_CALLBACK = "event_callback"


class EventAcks:
    """Slack's signing secret, applied to a request's body and headers."""

    def __init__(self, signing_secret: str) -> None:
        self._verifier = SignatureVerifier(signing_secret)

    def owed_at_once(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """Whether this request is an event callback Slack signed: a 200 is its whole answer."""
        if not body.startswith(b"{"):  # interactivity and commands come as forms
            return False
        try:
            kind = json.loads(body).get("type")
        except (ValueError, AttributeError):  # not JSON, or not an object: bolt refuses it
            return False
        return kind == EVENT_CALLBACK and self._verifier.is_valid_request(body, dict(headers))
