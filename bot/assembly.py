"""Assembly: settings + configuration → a ready Agent with its brain, tools and shared HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from agent import (
    Agent,
    AgentConfig,
    Brain,
    BuiltinToolEntry,
    ChatCompletionsClient,
    ConfigError,
    HttpToolEntry,
    JsonReactBrain,
    OpenAIBrain,
    Recorder,
    ReplayBrain,
    ReplayScript,
    build_tools,
)
from bot.config_file import LoadedConfig
from bot.settings import Settings

NO_LLM = (
    "no LLM is configured: set PARLEY_LLM_BASE_URL (e.g. http://localhost:11434/v1) and PARLEY_LLM_MODEL, "
    "plus PARLEY_LLM_API_KEY if the endpoint needs a key — or pass --replay FILE"
)


def build_brain(
    settings: Settings, config: AgentConfig, *, replay: Path | None = None, question: str | None = None
) -> Brain:
    """The replay brain for a script (which must record `question`, if it records one), else the LLM."""
    if replay is not None:
        script = ReplayScript.load(replay)
        if question is not None and not script.answers(question):
            raise ConfigError(
                f"the replay script {replay} records the answer to {script.question!r}, not this question"
            )
        return ReplayBrain(script, name=f"replay:{replay.name}")
    if not settings.llm_configured:
        raise ConfigError(NO_LLM)
    assert settings.llm_base_url and settings.llm_model
    client = ChatCompletionsClient(
        settings.llm_base_url,
        settings.llm_model,
        api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
        timeout_s=config.brain.timeout_s,
        max_retries=config.limits.llm_max_retries,
        backoff_base_s=config.limits.retry_backoff_base_s,
        backoff_max_s=config.limits.retry_backoff_max_s,
        temperature=config.brain.temperature,
        max_tokens=config.brain.max_tokens,
    )
    return JsonReactBrain(client) if config.brain.protocol == "json_react" else OpenAIBrain(client)


@asynccontextmanager
async def open_agent(
    settings: Settings,
    loaded: LoadedConfig,
    brain: Brain,
    *,
    recorder: Recorder | None = None,
    tools: Sequence[BuiltinToolEntry | HttpToolEntry] | None = None,
) -> AsyncIterator[Agent]:
    """An Agent whose HTTP client and brain are closed when the block ends."""
    config = loaded.agent
    if tools is not None:
        config = config.model_copy(update={"tools": list(tools)})
    async with httpx.AsyncClient() as http:
        try:
            try:
                built = build_tools(config.tools, env=settings.environ(), http=http, data_dir=loaded.data_dir)
            except ConfigError as exc:
                raise ConfigError(f"{loaded.path}: {exc}") from None
            yield Agent(brain, built, config, recorder=recorder, config_hash=loaded.hash)
        finally:
            await brain.aclose()
