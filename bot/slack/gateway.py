"""The Slack gateway: every error of a call to Slack is mapped here, once, into `SlackFailure`.

slack_sdk raises `SlackApiError` when Slack answers `ok: false`, `SlackClientError` subclasses for what it
could not send or read, and lets aiohttp's errors, `OSError` and timeouts through from the connection. Parley's
code awaits `slack_call(client.chat_postMessage(…))` and catches one type; nothing of slack_sdk or aiohttp
leaks past this module (tested).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from agent import parse_retry_after

# What a call to Slack can raise besides an answer: its refusals, and every way the connection can fail.
FOREIGN_ERRORS = (SlackApiError, SlackClientError, aiohttp.ClientError, OSError, TimeoutError)

Answer = TypeVar("Answer")


class SlackFailure(Exception):
    """A call to Slack did not succeed: Slack refused it (`error` is its code, e.g. `channel_not_found`), or
    it could not be reached (`error` is None)."""

    def __init__(self, problem: str, *, error: str | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(problem)
        self.error = error
        self.retry_after_s = retry_after_s

    @property
    def refused(self) -> bool:
        """Slack answered, and said no (as opposed to: Slack could not be reached)."""
        return self.error is not None


def slack_failure(exc: BaseException) -> SlackFailure:
    """The one mapping of slack_sdk's, aiohttp's and the socket's errors."""
    if isinstance(exc, SlackApiError):
        response = exc.response
        data = response.data if isinstance(response.data, dict) else {}
        error = str(data.get("error") or f"HTTP {response.status_code}")
        return SlackFailure(f"Slack answered {error}", error=error, retry_after_s=_retry_after(response.headers))
    text = " ".join(str(exc).split())[:300]
    return SlackFailure(f"Slack could not be reached: {type(exc).__name__}" + (f": {text}" if text else ""))


async def slack_call(call: Awaitable[Answer]) -> Answer:
    """Await one call to Slack; its failure, whatever the library's type, raises `SlackFailure`."""
    try:
        return await call
    except FOREIGN_ERRORS as exc:
        raise slack_failure(exc) from exc


class KeptConnections:
    """One aiohttp session for every Web API call of `client`, so its connections are kept alive between calls.

    Given none, slack_sdk opens and closes a session — a new TCP (and TLS) connection — for each call: with three
    to eight calls a run, that was the bot's largest cost after the engine. Open it on the running event loop and
    close it at shutdown; once it is closed, slack_sdk goes back to a session per call.
    """

    def __init__(self, client: AsyncWebClient) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=client.timeout))
        client.session = self._session

    async def close(self) -> None:
        await self._session.close()


def _retry_after(headers: Any) -> float | None:
    """Slack's `Retry-After` on a 429 (aiohttp gives a case-insensitive mapping), else None."""
    if not isinstance(headers, Mapping):
        return None
    value = headers.get("Retry-After", headers.get("retry-after"))
    return parse_retry_after(value[0] if isinstance(value, list) and value else value)
