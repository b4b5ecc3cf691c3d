"""Assembly: the one place where Parley's parts are built and wired.

Settings + configuration → an Agent with its brain, tools and shared HTTP client; the run service with the
notifier that fits (Slack, or the log); the Slack bot with its queue, reviewer board, desk and timed jobs.
Nothing is cross-wired after construction: each part is given what it needs when it is built.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from slack_sdk.web.async_client import AsyncWebClient

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
from bot.jobs import Jobs, Recovery
from bot.metrics import Metrics, Vocabulary
from bot.notifier import LogNotifier, Notifier
from bot.owner import RunOwner
from bot.review.config import ReviewConfig
from bot.runs import RunService
from bot.settings import Settings
from bot.slack.app import SlackBot, slack_app, slack_client
from bot.slack.review import ReviewBoard
from bot.slack.reviewers import Reviewers
from bot.slack.throttle import DEFAULT_MIN_INTERVAL_S
from bot.slack.workers import RunQueue
from bot.spans import SpanRecorder, Tracer
from bot.store import Database
from bot.suggested_prompts import AssistantConfig, prompt_set

log = logging.getLogger(__name__)

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
    tools: Sequence[BuiltinToolEntry | HttpToolEntry] | None = None,
) -> AsyncIterator[Agent]:
    """An Agent whose HTTP client and brain are closed when the block ends."""
    config = loaded.agent
    if tools is not None:
        config = config.model_copy(update={"tools": list(tools)})
    async with httpx.AsyncClient() as http:
        try:
            try:
                built = build_tools(
                    config.tools,
                    env=settings.environ(),
                    http=http,
                    data_dir=loaded.data_dir,
                    policies=config.policies,
                )
            except ConfigError as exc:
                raise ConfigError(f"{loaded.path}: {exc}") from None
            yield Agent(brain, built, config, config_hash=loaded.hash)
        finally:
            await brain.aclose()


def command_line_notifier(settings: Settings, loaded: LoadedConfig, db: Database) -> Notifier:
    """With Slack configured, what the command line decides shows there too (reviewer message, thread)."""
    if settings.slack_bot_token is None:
        return LogNotifier()
    channel = settings.review_channel or loaded.review.channel
    return ReviewBoard(db, slack_client(settings), loaded.review, channel=channel)


def build_slack_bot(
    settings: Settings,
    db: Database,
    agent: Agent,
    *,
    client: AsyncWebClient | None = None,
    llm_url: str | None = None,
    update_interval_s: float = DEFAULT_MIN_INTERVAL_S,
    review: ReviewConfig | None = None,
    run_jobs: bool = False,
    tracer: Tracer | None = None,
    assistant: AssistantConfig | None = None,
) -> SlackBot:
    """The Slack bot of `parley serve`: the run service tells people through the reviewer board, and every run
    is counted for GET /metrics (and traced as OpenTelemetry spans when a `tracer` is given). The assistant
    pane suggests the `assistant` prompts, or ones drawn from the agent's tools."""
    review = review or ReviewConfig()
    app = slack_app(settings, client)
    channel = settings.review_channel or review.channel
    if channel and not review.reviewers and not review.reviewer_group:
        log.warning(
            "the reviewer channel %s is set, but nobody may decide there: set review.reviewers or "
            "review.reviewer_group (until then, only `parley review` decides)",
            channel,
        )
    board = ReviewBoard(db, app.client, review, channel=channel)
    vocabulary = Vocabulary(agent.tool_names, agent.error_codes)
    metrics = Metrics(vocabulary, workers=settings.workers)
    watchers: list[Recorder] = [metrics]
    if tracer is not None:
        watchers.append(SpanRecorder(tracer, vocabulary))
    owner = RunOwner(db, heartbeat_s=review.heartbeat_s, stale_after_s=review.stale_after_s)
    runs = RunService(db, board, agent, owner=owner, watchers=watchers)
    queue = RunQueue(
        db,
        runs,
        app.client,
        size=settings.workers,
        min_interval_s=update_interval_s,
        streaming=settings.slack_streaming,
    )
    reviewers = Reviewers(review, app.client)
    jobs = Jobs(db, review, board, owner=owner.id) if run_jobs else None
    recovery = Recovery(db, owner, board, queue) if run_jobs else None
    prompts = prompt_set(assistant or AssistantConfig(), agent.tool_specs)
    return SlackBot(
        app,
        db,
        runs,
        queue,
        reviewers,
        board,
        metrics=metrics,
        jobs=jobs,
        recovery=recovery,
        llm_url=llm_url,
        prompts=prompts,
        escalate_on_feedback=review.escalate_on_feedback,
    )
