"""The Slack gateway: whatever a call to Slack raises becomes one `SlackFailure`, and only there.

Real slack_sdk clients against the fake Web API (a refusal, a rate limit) and against a closed port (no
Slack at all); then a check of the source that no other module of bot/ names slack_sdk's or aiohttp's errors.
"""

from __future__ import annotations

import ast
import socket
from pathlib import Path

import pytest
from slack_sdk.web.async_client import AsyncWebClient

import bot
from bot.slack.gateway import SlackFailure, slack_call
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_workspace import BOT_TOKEN

GATEWAY = Path(bot.__file__).parent / "slack" / "gateway.py"
FOREIGN_ERROR_MODULES = ("slack_sdk.errors", "aiohttp")


def client_of(url: str) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=url if url.endswith("/") else url + "/")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_refusal_names_slacks_error_code(slack_api: FakeSlackApi) -> None:
    slack_api.fail_next("chat.postMessage", error="channel_not_found")

    with pytest.raises(SlackFailure) as failed:
        await slack_call(client_of(slack_api.base_url).chat_postMessage(channel="C0NOPE", text="hello"))

    assert failed.value.refused and failed.value.error == "channel_not_found"
    assert str(failed.value) == "Slack answered channel_not_found"


async def test_a_rate_limit_carries_slacks_retry_after(slack_api: FakeSlackApi) -> None:
    slack_api.fail_next("chat.postMessage", retry_after=7)

    with pytest.raises(SlackFailure) as failed:
        await slack_call(client_of(slack_api.base_url).chat_postMessage(channel="C0NOPE", text="hello"))

    assert (failed.value.error, failed.value.retry_after_s) == ("ratelimited", 7.0)


async def test_slack_out_of_reach_is_a_failure_without_an_error_code() -> None:
    client = client_of(f"http://127.0.0.1:{closed_port()}/api")

    with pytest.raises(SlackFailure) as failed:
        await slack_call(client.chat_postMessage(channel="C0NOPE", text="hello"))

    assert not failed.value.refused and str(failed.value).startswith("Slack could not be reached: ")


async def test_a_call_that_succeeds_gives_slacks_answer(slack_api: FakeSlackApi) -> None:
    answer = await slack_call(client_of(slack_api.base_url).auth_test())

    assert answer["ok"] is True


def test_no_module_of_bot_but_the_gateway_names_slack_sdks_or_aiohttps_errors() -> None:
    offenders = []
    for path in sorted(Path(bot.__file__).parent.rglob("*.py")):
        if path == GATEWAY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {name}" for name in names if name.startswith(FOREIGN_ERROR_MODULES)]
    assert offenders == []
