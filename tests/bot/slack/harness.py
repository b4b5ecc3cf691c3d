"""Parley's Slack bot as Slack sees it: `SlackBot` served by uvicorn on 127.0.0.1:0, talking to the fake
Slack Web API and the fake LLM, recording into a real PostgreSQL database."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from agent import Agent
from bot.settings import Settings
from bot.slack.app import SlackBot, slack_client
from bot.store import Database
from tests.agent.llm_agent import builtins, llm_agent
from tests.fakes.scripted_llm import ScriptedLLM, Unrecorded
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import SIGNING_SECRET, post_event_async
from tests.fakes.slack_workspace import BOT_TOKEN

UPDATE_INTERVAL_S = 0.05  # the real bot waits 2 s between updates; tests need not


@dataclass
class RunningBot:
    url: str
    bot: SlackBot
    slack: FakeSlackApi

    async def post(self, body: Mapping[str, Any] | bytes, **options: Any) -> httpx.Response:
        return await post_event_async(f"{self.url}/slack/events", body, SIGNING_SECRET, **options)


def settings_for(slack: FakeSlackApi, *, workers: int = 4) -> Settings:
    return Settings(
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=slack.base_url,
        workers=workers,
    )


@contextlib.asynccontextmanager
async def serve(bot: SlackBot) -> AsyncIterator[str]:
    """uvicorn on a free loopback port in this event loop; stopped (and the workers with it) at the end."""
    server = uvicorn.Server(uvicorn.Config(bot, host="127.0.0.1", port=0, lifespan="on", log_level="warning"))
    task = asyncio.create_task(server.serve())
    deadline = asyncio.get_running_loop().time() + 10
    while not server.started:
        if task.done():
            task.result()
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("uvicorn did not start within 10 s")
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@contextlib.asynccontextmanager
async def running_bot(
    db: Database,
    slack: FakeSlackApi,
    llm_base_url: str,
    *,
    workers: int = 4,
    tools: tuple[str, ...] = ("calculator", "knowledge_lookup", "get_weather"),
    **config: Any,
) -> AsyncIterator[RunningBot]:
    settings = settings_for(slack, workers=workers)
    async with (
        httpx.AsyncClient(trust_env=False) as http,
        llm_agent(llm_base_url, builtins(*tools), http, **config) as (agent, _),
    ):
        bot = SlackBot(
            settings,
            db,
            agent,
            client=slack_client(settings),
            llm_url=llm_base_url,
            update_interval_s=UPDATE_INTERVAL_S,
        )
        async with serve(bot) as url:
            yield RunningBot(url, bot, slack)


def scripted(*decisions: dict[str, Any]) -> ScriptedLLM:
    """An LLM that plays these decisions; the planner falls back to the rules (prose plan)."""
    return ScriptedLLM({"decisions": list(decisions)}, unrecorded=Unrecorded.PROSE)


__all__ = ["Agent", "RunningBot", "running_bot", "scripted", "serve", "settings_for"]
