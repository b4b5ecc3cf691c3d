"""An Agent wired as in production — shipped config, real tools, an LLM brain over HTTP — with fast limits."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx

from agent import (
    Agent,
    AgentConfig,
    BuiltinToolEntry,
    HttpToolEntry,
    JsonReactBrain,
    MemoryRecorder,
    OpenAIBrain,
    ToolCallFinished,
    build_tools,
)
from agent.brains.chat import ChatCompletionsClient
from bot.cli.demo import Demo
from bot.config_file import defaults_dir, load_config

FAST_LIMITS = {"retry_backoff_base_s": 0.01, "retry_backoff_max_s": 0.05}


def demo(name: str) -> Demo:
    """One of the shipped demos (`config/demos/<name>.yaml`): question, tool entries and replay script."""
    return Demo.load(defaults_dir() / "demos" / f"{name}.yaml")


def demo_path(name: str) -> Path:
    return defaults_dir() / "demos" / f"{name}.yaml"


def shipped_config(tools: Sequence[BuiltinToolEntry | HttpToolEntry], **overrides: Any) -> AgentConfig:
    """`config/parley.yaml` (with its error table) and these tools; `overrides` replace whole sections,
    except `limits`, which is merged over the fast retry delays."""
    raw = load_config(defaults_dir() / "parley.yaml").agent.model_dump(by_alias=True)
    limits = {**raw["limits"], **FAST_LIMITS, **overrides.pop("limits", {})}
    raw.update(overrides, limits=limits, tools=[entry.model_dump(by_alias=True) for entry in tools])
    return AgentConfig.model_validate(raw)


@asynccontextmanager
async def llm_agent(
    base_url: str,
    tools: Sequence[BuiltinToolEntry | HttpToolEntry],
    http: httpx.AsyncClient,
    *,
    protocol: Literal["tools", "json_react"] = "tools",
    env: Mapping[str, str] | None = None,
    max_retries: int = 1,
    backoff_max_s: float = 0.05,
    **config: Any,
) -> AsyncIterator[tuple[Agent, MemoryRecorder]]:
    """An Agent whose brain talks to `base_url`; the brain's client is closed when the block ends."""
    client = ChatCompletionsClient(
        base_url, "test-model", timeout_s=5.0, max_retries=max_retries, backoff_base_s=0.01, backoff_max_s=backoff_max_s
    )
    brain = JsonReactBrain(client) if protocol == "json_react" else OpenAIBrain(client)
    agent_config = shipped_config(tools, **config)
    built = build_tools(
        agent_config.tools, env=env or {}, http=http, data_dir=defaults_dir(), policies=agent_config.policies
    )
    recorder = MemoryRecorder()
    try:
        yield Agent(brain, built, agent_config, recorder=recorder), recorder
    finally:
        await brain.aclose()


def builtins(*names: str) -> list[BuiltinToolEntry]:
    return [BuiltinToolEntry(builtin=name) for name in names]


def tool_messages(request: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (tool_call_id, parsed observation) pairs a chat request carried back to the model, in order."""
    return [(m["tool_call_id"], json.loads(m["content"])) for m in request["messages"] if m["role"] == "tool"]


def finished(recorder: MemoryRecorder) -> list[ToolCallFinished]:
    return recorder.of(ToolCallFinished)
