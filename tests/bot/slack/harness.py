"""Parley's Slack bot as Slack sees it: the runtime `parley serve` builds (`bot.assembly`), its web app served by
uvicorn on 127.0.0.1:0, talking to the fake Slack Web API and the fake LLM, recording into a real PostgreSQL
database."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from agent import Agent, BuiltinToolEntry, HttpToolEntry, OpenAIBrain, Tool, Toolbox, ToolSource, build_tools
from agent.brains.chat import ChatCompletionsClient
from bot.assembly import Runtime, build_runtime
from bot.config_file import defaults_dir
from bot.core import ReviewConfig
from bot.core.config import OwnershipConfig
from bot.front import Front, front_server, upstream_client
from bot.serving import APP_SOCKET, application_server
from bot.settings import Settings
from bot.slack.acks import EventAcks
from bot.slack.reply.medium import StreamingMode
from bot.spans import Tracer
from bot.store import Database
from bot.suggested_prompts import AssistantConfig
from tests.agent.llm_agent import shipped_config
from tests.bot.slack.seen import answer_in
from tests.fakes.llm_server import FakeReply
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded, classify
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import (
    CHANNEL,
    DEFAULT_POST_TIMEOUT_S,
    SIGNING_SECRET,
    _signed_request,
    app_mention,
    post_event_async,
)
from tests.fakes.slack_workspace import BOT_TOKEN, Message
from tests.serving import until_started

UPDATE_INTERVAL_S = 0.05  # the real bot waits 2 s between updates; tests need not
# For tests that read every progress state: each is sent as it happens, none folded into a later one.
EVERY_STATE = 0.0
GATE_TIMEOUT_S = 4.0  # below the brain's 5 s HTTP timeout: a gate that never opens answers 400 (see Gated)

# A tool of a test bot: a built-in's name, a YAML tool entry, or a `Tool` object (e.g. tests.agent.toolbox's).
ToolChoice = str | BuiltinToolEntry | HttpToolEntry | Tool


@dataclass
class RunningBot:
    url: str
    bot: Runtime
    slack: FakeSlackApi
    http: httpx.AsyncClient | None = None  # Slack's side of the connection, reused (a new client costs ~20 ms)

    async def post(self, body: Mapping[str, Any] | bytes, **options: Any) -> httpx.Response:
        """POST a signed body as `post_event_async` does (same options), on the shared client when there is one."""
        if self.http is None:
            return await post_event_async(f"{self.url}/slack/events", body, SIGNING_SECRET, **options)
        content, headers = _signed_request(
            body,
            SIGNING_SECRET,
            options.pop("retry_num", None),
            options.pop("retry_reason", "http_timeout"),
            options.pop("timestamp", None),
            options.pop("signature", None),
        )
        assert not options, f"unknown post options {sorted(options)}"
        return await self.http.post(f"{self.url}/slack/events", content=content, headers=headers)

    async def get(self, path: str) -> httpx.Response:
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            return await http.get(self.url + path)


def settings_for(slack: FakeSlackApi, *, workers: int = 4, streaming: StreamingMode = "auto") -> Settings:
    return Settings(
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=slack.base_url,
        workers=workers,
        slack_streaming=streaming,
    )


@contextlib.asynccontextmanager
async def serve(runtime: Runtime) -> AsyncIterator[str]:
    """As `parley serve` serves it: the runtime started on this event loop and its web app served by uvicorn on a
    Unix socket, behind the web front (`bot.front`) on a free loopback port. The front runs on a thread and a loop
    of its own here (in a process of its own in `parley serve`: the same code, a cheaper start); all stopped at
    the end."""
    await runtime.start()
    try:
        with tempfile.TemporaryDirectory(prefix="parley-test-") as private:
            socket_path = os.path.join(private, APP_SOCKET)
            server = application_server(runtime, socket_path)
            server.config.log_level = "warning"
            app = asyncio.ensure_future(server.serve())
            try:
                await until_started(server, app)
                front = Front(upstream_client(socket_path), EventAcks(SIGNING_SECRET))
                front_site = front_server(front, host="127.0.0.1", port=0, log_level="warning")
                serving = asyncio.ensure_future(asyncio.to_thread(asyncio.run, front.serve(front_site)))
                try:
                    await until_started(front_site, serving)
                    yield f"http://127.0.0.1:{front_site.servers[0].sockets[0].getsockname()[1]}"
                finally:
                    front_site.should_exit = True
                    await asyncio.wait_for(serving, 10)
            finally:
                server.should_exit = True
                await asyncio.wait_for(app, 10)
    finally:
        await runtime.stop()


@contextlib.asynccontextmanager
async def agent_for(
    llm_base_url: str,
    tools: Sequence[ToolChoice],
    http: httpx.AsyncClient,
    *,
    sources: Sequence[ToolSource] = (),
    **config: Any,
) -> AsyncIterator[Agent]:
    """An Agent as `tests.agent.llm_agent` builds it (shipped config, fast retries), whose tools may also be
    `Tool` objects; the brain's client is closed at the end."""
    entries = [BuiltinToolEntry(builtin=t) if isinstance(t, str) else t for t in tools if not isinstance(t, Tool)]
    objects = [t for t in tools if isinstance(t, Tool)]
    client = ChatCompletionsClient(
        llm_base_url, "test-model", timeout_s=5.0, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.05
    )
    brain = OpenAIBrain(client)
    agent_config = shipped_config(entries, **config)
    built = build_tools(agent_config.tools, env={}, http=http, data_dir=defaults_dir())
    try:
        yield Agent(brain, Toolbox([*built, *objects], sources), agent_config)
    finally:
        await brain.aclose()


@contextlib.asynccontextmanager
async def running_bot(
    db: Database,
    slack: FakeSlackApi,
    llm_base_url: str,
    *,
    workers: int = 4,
    tools: Sequence[ToolChoice] = ("calculator", "knowledge_lookup", "get_weather"),
    update_interval_s: float = UPDATE_INTERVAL_S,
    review: ReviewConfig | None = None,
    tracer: Tracer | None = None,
    assistant: AssistantConfig | None = None,
    streaming: StreamingMode = "auto",
    ownership: OwnershipConfig | None = None,
    sources: Sequence[ToolSource] = (),
    **config: Any,
) -> AsyncIterator[RunningBot]:
    settings = settings_for(slack, workers=workers, streaming=streaming)
    async with (
        httpx.AsyncClient(trust_env=False) as http,
        agent_for(llm_base_url, tools, http, sources=sources, **config) as agent,
    ):
        bot = build_runtime(
            settings,
            db,
            agent,
            llm_url=llm_base_url,
            update_interval_s=update_interval_s,
            review=review,
            tracer=tracer,
            assistant=assistant,
            ownership=ownership,
        )
        async with serve(bot) as url, httpx.AsyncClient(trust_env=False, timeout=DEFAULT_POST_TIMEOUT_S) as slack_side:
            yield RunningBot(url, bot, slack, slack_side)


def scripted(*decisions: dict[str, Any]) -> ScriptedLLM:
    """An LLM that plays these decisions; the planner falls back to the rules (prose plan)."""
    return ScriptedLLM({"decisions": list(decisions)}, unrecorded=Unrecorded.PROSE)


def question_of(body: Any) -> str:
    """The question a chat request is about: its last user message before any tool traffic."""
    messages = body.get("messages") if isinstance(body, dict) else None
    users = [m.get("content") or "" for m in messages or [] if m.get("role") == "user"]
    return users[-1] if users else ""


class ByQuestion:
    """An LLM handler that sends each request to the script of the question it is about (several runs at once)."""

    def __init__(self, scripts: Mapping[str, Callable[[Any], FakeReply]]) -> None:
        self._scripts = dict(scripts)

    def __call__(self, body: Any) -> FakeReply:
        asked = question_of(body)
        for phrase, script in self._scripts.items():
            if phrase in asked:
                return script(body)
        return FakeReply.with_status(400, f"no script for the question {asked[:80]!r}")


class Gated:
    """Holds the LLM's answer to the n-th decision request until `waits[n]()` is true (polled by the fake's
    thread with a deadline): a run stops where the test wants to look at it, without any sleep. A gate that
    does not open in time answers 400, which the brain does not retry: the run ends degraded, the test fails."""

    def __init__(
        self,
        inner: Callable[[Any], FakeReply],
        waits: Mapping[int, Callable[[], Any]],
        *,
        timeout_s: float = GATE_TIMEOUT_S,
    ) -> None:
        self._inner = inner
        self._waits = dict(waits)
        self._timeout_s = timeout_s
        self._decisions = 0

    def __call__(self, body: Any) -> FakeReply:
        if classify(body) is RequestKind.DECIDE:
            self._decisions += 1
            wait = self._waits.get(self._decisions)
            if wait is not None and not _opens(wait, self._timeout_s):
                return FakeReply.with_status(400, f"gate {self._decisions} did not open in {self._timeout_s}s")
        return self._inner(body)


def _opens(predicate: Callable[[], Any], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not _holds(predicate):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _holds(predicate: Callable[[], Any]) -> bool:
    try:
        return bool(predicate())
    except (AssertionError, LookupError):
        return False


def calculation(expression: str, result: str) -> ScriptedLLM:
    """One run's script: the calculator, then a cited final answer."""
    return scripted(
        {"tool": "calculator", "args": {"expression": expression}}, {"final": f"{expression} = {result} [1]"}
    )


async def mentioned_and_answered(bot: RunningBot, question: str) -> list[Message]:
    """A fresh mention of Parley in the channel, and the bot's finished answer in its thread."""
    body = app_mention(question)
    response = await bot.post(body)
    assert response.status_code == 200, response.text
    return await answer_in(bot.slack, CHANNEL, body["event"]["ts"])


__all__ = [
    "EVERY_STATE",
    "Agent",
    "ByQuestion",
    "Gated",
    "RunningBot",
    "agent_for",
    "calculation",
    "mentioned_and_answered",
    "running_bot",
    "scripted",
    "serve",
    "settings_for",
]
