"""Assembly: the one place where Parley's parts are built and wired, and the `Runtime` that starts and stops them.

Settings + configuration → an Agent with its brain, tools and shared HTTP client; the run service with the
notifier and replies that fit (Slack's, or the log's); the Slack bot's listeners; the timed jobs and recovery.
Nothing is cross-wired after construction: each part is given what it needs when it is built. Tests build Parley
through here too, as production does.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from agent import (
    Agent,
    AgentConfig,
    Brain,
    ChatCompletionsClient,
    ConfigError,
    JsonReactBrain,
    McpServers,
    McpServerStatus,
    MemoryPins,
    OpenAIBrain,
    PinStore,
    Recorder,
    ReplayBrain,
    ReplayScript,
    ServerState,
    Tool,
    Toolbox,
    ToolEntry,
    build_tools,
    exception_line,
    mcp_status,
)
from bot.config_file import LoadedConfig
from bot.core import (
    History,
    JobsConfig,
    LogNotifier,
    Notifier,
    OwnershipConfig,
    ReviewConfig,
    RunOwner,
    RunPool,
    RunService,
    StoreUnavailable,
)
from bot.settings import Settings
from bot.slack.reply.throttle import DEFAULT_MIN_INTERVAL_S
from bot.store import Database, check_reachable
from bot.suggested_prompts import AssistantConfig, prompt_set

# What only `parley serve` (or the command line with Slack configured) uses is imported where it is built, so that
# `parley ask`, `review` and `demo` start without loading Slack's SDKs, aiohttp, the scheduler and the exporters.
if TYPE_CHECKING:
    from bot.jobs import Jobs, RecoveryLoop
    from bot.metrics import Metrics
    from bot.slack.app import SlackBot
    from bot.spans import Tracer

log = logging.getLogger(__name__)

FILL_POOL_TIMEOUT_S = 2.0  # opening the database's connections at start; a slow database is met later
NO_LLM = (
    "no LLM is configured: set PARLEY_LLM_BASE_URL (e.g. http://localhost:11434/v1) and PARLEY_LLM_MODEL, "
    "plus PARLEY_LLM_API_KEY if the endpoint needs a key — or pass --replay FILE"
)
SLACK_OFF = (
    "Slack is off: none of SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET and SLACK_APP_TOKEN is set, so only GET /healthz "
    "and GET /metrics are served (and the timed jobs run); set them to answer in Slack"
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
    tools: Sequence[ToolEntry] | None = None,
    pins: PinStore | None = None,
) -> AsyncIterator[Agent]:
    """An Agent whose HTTP client, MCP servers and brain are closed when the block ends. MCP tools' definitions
    are pinned in `pins` (the store; memory when there is none). A server down at start is reported (the log,
    hence stderr for the command line) and reconnected in the background."""
    config = loaded.agent
    if tools is not None:
        config = config.model_copy(update={"tools": list(tools)})
    try:
        async with open_tools(settings, loaded, config, pins=pins) as (built, servers):
            yield Agent(brain, Toolbox(built, servers.servers), config, config_hash=loaded.hash)
    finally:
        await brain.aclose()


@asynccontextmanager
async def open_tools(
    settings: Settings, loaded: LoadedConfig, config: AgentConfig, *, pins: PinStore | None = None
) -> AsyncIterator[tuple[list[Tool], McpServers]]:
    """The configuration's fixed tools and its MCP servers, connected; closed (stdio servers stopped) at the end.
    A ConfigError names the file: an unknown built-in, a missing `${VAR}`, two tools with one name."""
    async with httpx.AsyncClient() as http:
        try:
            built = build_tools(
                config.tools,
                env=settings.environ(),
                http=http,
                data_dir=loaded.data_dir,
                policies=config.policies,
            )
            servers = McpServers.from_config(
                config.tools,
                env=settings.environ(),
                pins=pins or MemoryPins(),
                fixed_names=[tool.spec.name for tool in built],
            )
            await servers.start()
        except ConfigError as exc:
            raise ConfigError(f"{loaded.path}: {exc}") from None
        try:
            for down in servers.down():
                log.warning(
                    "MCP server %s is not connected (%s); retrying in the background", down.server, down.problem
                )
            yield built, servers
        finally:
            await servers.stop()


def command_line_notifier(settings: Settings, loaded: LoadedConfig) -> Notifier:
    """With Slack configured, what the command line decides shows there too (reviewer message, thread)."""
    if settings.slack_bot_token is None:
        return LogNotifier()
    from bot.slack.client import slack_client
    from bot.slack.gateway import SlackGateway
    from bot.slack.review.notifier import SlackNotifier

    channel = settings.review_channel or loaded.review.channel
    return SlackNotifier(SlackGateway(slack_client(settings)), loaded.review, channel=channel)


@dataclass
class Runtime:
    """The running application: its service (with the worker pool when Slack is on), the Slack bot's listeners,
    the timed jobs and recovery, and what operators read (`health`, `metrics_page`). `start` and `stop` bring
    them up and down in order, once, whichever way it is served (`bot.web`, Socket Mode)."""

    db: Database
    service: RunService
    history: History
    metrics: Metrics
    slack: SlackBot | None = None
    jobs: Jobs | None = None
    recovery: RecoveryLoop | None = None
    llm_url: str | None = None
    mcp_status: Callable[[], list[McpServerStatus]] = field(default=list)  # each MCP server's state, now
    _started: bool = field(default=False, repr=False)

    @property
    def notifier(self) -> Notifier:
        return self.service.notifier

    @property
    def pool(self) -> RunPool | None:
        return self.service.pool

    async def start(self) -> None:
        """First-use costs paid; the hold on runs, the workers, Slack's connections, the timed jobs, recovery;
        then start-up's objects are frozen for the collector."""
        if self._started:
            return
        self._started = True
        # First-use costs before anyone is served: in the middle of a first burst, each would stall the event
        # loop that acknowledges Slack's events (the checker's language data: ~0.1 s; the pool's connections).
        self.service.warm_up()
        try:
            async with asyncio.timeout(FILL_POOL_TIMEOUT_S):
                await self.db.fill_pool()
        except (StoreUnavailable, TimeoutError) as exc:  # the database may come later: the pool fills as used
            log.warning("could not open the database's connections at start: %s", exception_line(exc))
        await self.service.owner.start()
        if self.pool is not None:
            self.pool.start()
        if self.slack is not None:
            await self.slack.start()
        else:
            log.warning(SLACK_OFF)
        if self.jobs is not None:
            self.jobs.start()
        if self.recovery is not None:
            self.recovery.start()
        # The ~200k objects of start-up (bolt, SQLAlchemy, pydantic) never die; frozen, the collector stops
        # re-walking them on every full pass (70-120 ms each, which stalled Slack's acks).
        gc.collect()
        gc.freeze()

    async def stop(self) -> None:
        """Nothing new is recovered or run; unfinished runs are handed over (released); then the hold on runs ends."""
        if not self._started:
            return
        self._started = False
        if self.recovery is not None:
            await self.recovery.stop()
        if self.jobs is not None:
            await self.jobs.shutdown()
        if self.pool is not None:
            await self.pool.stop()
        await self.service.owner.stop()
        if self.slack is not None:
            await self.slack.stop()

    async def health(self) -> tuple[int, dict[str, str]]:
        """Database and LLM reachability, the queue, Slack; 503 when the database cannot be reached."""
        report: dict[str, str] = {}
        try:
            await check_reachable(self.db)
            report["database"] = "ok"
        except StoreUnavailable as exc:
            report["database"] = f"unreachable: {exc}"
        report["llm"] = await _llm_reachability(self.llm_url)
        pool = self.pool
        report["queue"] = f"{pool.busy} running, {pool.waiting} waiting" if pool else "no workers (Slack is off)"
        report["pending_ends"] = str(len(self.service.owner.pending))  # ends the database has not taken yet
        report["resumed"] = str(self.metrics.taken_over)  # runs of stopped processes this one went on with
        report["outcome_unknown"] = str(self.metrics.unknown_outcomes)  # of their calls, not made again
        report["handed_over"] = str(pool.handed_over if pool else 0)  # while stopping
        if self.slack is None:
            report["slack"] = "off"
        for server in self.mcp_status():  # a server that is down degrades its tools, not Parley: still 200
            report[f"mcp {server.server}"] = _mcp_health(server)
        return (200 if report["database"] == "ok" else 503), report

    async def metrics_page(self) -> bytes:
        """GET /metrics: Prometheus's text format; answered even when the store is down (it says so)."""
        pool = self.pool
        return await self.metrics.page(
            self.db,
            busy=pool.busy if pool else 0,
            waiting=pool.waiting if pool else 0,
            handed_over=pool.handed_over if pool else 0,
            mcp=self.mcp_status(),
        )


def build_runtime(
    settings: Settings,
    db: Database,
    agent: Agent,
    *,
    llm_url: str | None = None,
    update_interval_s: float = DEFAULT_MIN_INTERVAL_S,
    review: ReviewConfig | None = None,
    jobs: JobsConfig | None = None,
    ownership: OwnershipConfig | None = None,
    run_jobs: bool = False,
    tracer: Tracer | None = None,
    assistant: AssistantConfig | None = None,
) -> Runtime:
    """`parley serve`'s application: the run service tells people through Slack's notifier and answers in its
    threads (or, with Slack off, tells the log and answers nowhere), every run is counted for GET /metrics (and
    traced as OpenTelemetry spans when a `tracer` is given). The assistant pane suggests the `assistant`
    prompts, or ones drawn from the agent's tools. `run_jobs`: the timed jobs and recovery run here too."""
    from bot.jobs import Jobs, RecoveryLoop
    from bot.metrics import Metrics, Vocabulary
    from bot.slack.app import SlackBot
    from bot.slack.client import slack_app
    from bot.slack.gateway import SlackGateway
    from bot.slack.reply.thread import SlackReplies
    from bot.slack.review.notifier import SlackNotifier
    from bot.spans import SpanRecorder

    review = review or ReviewConfig()
    ownership = ownership or OwnershipConfig()
    vocabulary = Vocabulary(agent.tool_names, agent.error_codes)
    metrics = Metrics(vocabulary, workers=settings.workers)
    watchers: list[Recorder] = [metrics]
    if tracer is not None:
        watchers.append(SpanRecorder(tracer, vocabulary))
    owner = RunOwner.configured(db, ownership)
    app = slack_app(settings) if settings.slack_configured else None
    notifier: Notifier = LogNotifier()
    replies: SlackReplies | None = None
    if app is not None:
        channel = settings.review_channel or review.channel
        if channel and not review.reviewers and not review.reviewer_group:
            log.warning(
                "the reviewer channel %s is set, but nobody may decide there: set review.reviewers or "
                "review.reviewer_group (until then, only `parley review` decides)",
                channel,
            )
        gateway = SlackGateway(app.client)
        replies = SlackReplies(gateway, min_interval_s=update_interval_s, streaming=settings.slack_streaming)
        notifier = SlackNotifier(gateway, review, channel=channel, sessions=replies.sessions)
    service = RunService(
        db,
        notifier,
        agent,
        owner=owner,
        watchers=watchers,
        review=review,
        jobs=jobs,
        replies=replies,
        workers=settings.workers,
        shutdown_grace_s=ownership.shutdown_grace_s,
    )
    history = History(db)
    slack = None
    if app is not None:
        prompts = prompt_set(assistant or AssistantConfig(), agent.tool_specs)
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
        slack = SlackBot(
            app,
            service,
            history,
            review=review,
            prompts=prompts,
            signing_secret=secret,
            tool_servers=lambda: mcp_status(agent.toolbox),
        )
    return Runtime(
        db,
        service,
        history,
        metrics,
        slack=slack,
        jobs=Jobs(db, service, jobs) if run_jobs else None,
        recovery=RecoveryLoop(service, every_s=ownership.heartbeat_s) if run_jobs else None,
        llm_url=llm_url,
        mcp_status=lambda: mcp_status(agent.toolbox),
    )


def _mcp_health(server: McpServerStatus) -> str:
    offered = sum(1 for tool in server.tools if tool.offered)
    shown = f"{server.state.value}, {offered} tools offered"
    if server.state is not ServerState.UP and server.problem:
        shown += f": {server.problem}"
    if server.changed:
        shown += f"; changed, refused until `parley mcp trust {server.server}`: {', '.join(server.changed)}"
    return shown


async def _llm_reachability(base_url: str | None) -> str:
    if not base_url:
        return "not configured (replay or none)"
    try:
        async with httpx.AsyncClient(timeout=2.0) as http:
            response = await http.get(base_url.rstrip("/") + "/models")
    except httpx.HTTPError as exc:
        return f"unreachable: {type(exc).__name__}"
    return "ok" if response.status_code < 500 else f"answering HTTP {response.status_code}"
