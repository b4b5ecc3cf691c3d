"""The Slack gateway: every error of a call to Slack is mapped here, once, into `SlackFailure`; and the calls
whose failure only costs one message (`SlackGateway`) are logged here, once, with what they were for.

slack_sdk raises `SlackApiError` when Slack answers `ok: false`, `SlackClientError` subclasses for what it
could not send or read, and lets aiohttp's errors, `OSError` and timeouts through from the connection. Code that
must act on Slack's answer awaits `slack_call(client.chat_postMessage(…))` and catches one type; everything else
sends through a `SlackGateway`, which never raises. Nothing of slack_sdk or aiohttp leaks past this module
(tested).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from agent import parse_retry_after
from bot.slack.blocks import SlackMessage

log = logging.getLogger(__name__)

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


async def attempt(call: Awaitable[Answer], *, what: str, level: int = logging.WARNING) -> Answer | None:
    """A call whose failure costs one message: its answer, or None (logged once: "could not {what}: …")."""
    try:
        return await slack_call(call)
    except SlackFailure as exc:
        log.log(level, "could not %s: %s", what, exc)
        return None


class SlackGateway:
    """Calls to Slack whose failure costs one message and nothing else: each returns Slack's answer (or True),
    or, when Slack refused or could not be reached, logs one line saying what could not be done and returns
    None (or False). A lost message never undoes what the store already holds."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def post(
        self,
        channel: str,
        message: SlackMessage,
        *,
        what: str,
        thread_ts: str | None = None,
        level: int = logging.WARNING,
    ) -> Any:
        """Post `message` in `channel` (in the thread `thread_ts`); Slack's answer (its `ts`, its `channel`)."""
        call = self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=message.text, blocks=message.blocks, metadata=message.metadata
        )
        return await attempt(call, what=what, level=level)

    async def update(
        self, channel: str, ts: str, message: SlackMessage, *, what: str, level: int = logging.WARNING
    ) -> bool:
        """Replace message `ts` of `channel` with `message`."""
        call = self.client.chat_update(
            channel=channel, ts=ts, text=message.text, blocks=message.blocks, metadata=message.metadata
        )
        return await attempt(call, what=what, level=level) is not None

    async def ephemeral(self, channel: str, user: str, text: str, *, what: str) -> bool:
        """A message in `channel` that only `user` sees."""
        call = self.client.chat_postEphemeral(channel=channel, user=user, text=text)
        return await attempt(call, what=what) is not None

    async def open_form(self, trigger_id: str, view: dict[str, Any], *, what: str) -> bool:
        """Open a modal for the person whose click gave `trigger_id` (it expires within seconds)."""
        return await attempt(self.client.views_open(trigger_id=trigger_id, view=view), what=what) is not None

    async def permalink(self, channel: str, ts: str, *, what: str) -> str | None:
        """A link to message `ts` of `channel`."""
        response = await attempt(self.client.chat_getPermalink(channel=channel, message_ts=ts), what=what)
        return response.get("permalink") if response is not None else None


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
