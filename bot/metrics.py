"""Metrics: what `GET /metrics` shows operators, in Prometheus's text format (prometheus-client).

Counters and histograms are fed by the engine's trace events (`Metrics` is a `Recorder` the run service gives
every run) and by the Slack entry (the ack latency); the gauges — the queue, the workers, the escalations
waiting for people, people's 👍 / 👎 on answers — are read when Prometheus scrapes. Each `Metrics` has its
own registry, never the process-wide one, so several bots in one process (the tests) never share a counter.

Labels are closed vocabularies only (`Vocabulary`): a run's status and termination reason, a configured tool's
name, a known error code, an error level, what an LLM request was for. A question, a user, a tool's arguments
or a secret can never become a label; a tool name the model made up is counted as `other`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from agent import (
    ErrorCode,
    LLMCallFinished,
    LLMRetry,
    McpServerStatus,
    RetryScheduled,
    RunFinished,
    RunTakenOver,
    ServerState,
    ToolCallFinished,
    TraceEvent,
    exception_line,
)
from bot.store import Database, FeedbackVerdict
from bot.store.escalations import count_pending_escalations
from bot.store.feedback import Tally, count_feedback

log = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4.encode()
OK = "ok"  # the code and level of a tool call that succeeded; an LLM request that was answered
FAILED = "failed"
OTHER = "other"  # a tool name or error code outside the configured vocabulary
STORE_TIMEOUT_S = 1.0  # a scrape waits this long for the store's counts, then reports the store down

# Seconds. Slack wants its answer within 3 s (Parley's target: p99 < 0.1 s); an LLM request may take a minute.
ACK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 3.0, 5.0)
LLM_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
TOOL_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Vocabulary:
    """The closed sets metric labels (and span attributes) are drawn from: the configured tools and the error
    codes the grading table knows. Anything else — what a model or a back-end made up — is `other`."""

    def __init__(self, tools: Iterable[str], error_codes: Iterable[str] = ()) -> None:
        self._tools = frozenset(tools)
        self._codes = frozenset(code.upper() for code in error_codes) | frozenset(code.value for code in ErrorCode)

    def tool(self, name: str) -> str:
        return name if name in self._tools else OTHER

    def code(self, code: str | None) -> str:
        known = (code or "").upper()
        return known if known in self._codes else OTHER


class Metrics:
    """Parley's metrics in a registry of its own; `record` takes the trace events of every run."""

    def __init__(self, vocabulary: Vocabulary, *, workers: int) -> None:
        self._vocabulary = vocabulary
        self.registry = CollectorRegistry()
        registry = self.registry
        self._runs = Counter(
            "parley_runs_finished",
            "Runs the engine ended, by status and termination reason (a resumed run ends again)",
            ["status", "reason"],
            registry=registry,
        )
        self._tool_calls = Counter(
            "parley_tool_calls",
            "Tool calls by tool, error code and level (code and level are `ok` for a success)",
            ["tool", "code", "level"],
            registry=registry,
        )
        self._tool_seconds = Histogram(
            "parley_tool_call_duration_seconds",
            "How long a tool call took, its automatic retries included",
            ["tool"],
            buckets=TOOL_BUCKETS,
            registry=registry,
        )
        self._tool_retries = Counter(
            "parley_tool_retries",
            "Automatic retries of a failed tool call (L0 errors), by tool and the error code retried",
            ["tool", "code"],
            registry=registry,
        )
        self._llm_seconds = Histogram(
            "parley_llm_request_duration_seconds",
            "How long the run waited for an LLM request (its retries included), by purpose and outcome",
            ["purpose", "outcome"],
            buckets=LLM_BUCKETS,
            registry=registry,
        )
        self._llm_tokens = Counter(
            "parley_llm_tokens",
            "Tokens the LLM reported, by purpose and kind (prompt, completion)",
            ["purpose", "kind"],
            registry=registry,
        )
        self._llm_retries = Counter(
            "parley_llm_retries", "Retries of an LLM request (unreachable, 429, 5xx)", registry=registry
        )
        self._ack_seconds = Histogram(
            "parley_slack_ack_duration_seconds",
            "Time to answer a request to POST /slack/events (Slack wants it within 3 s)",
            buckets=ACK_BUCKETS,
            registry=registry,
        )
        self._workers = Gauge(
            "parley_workers", "Agent runs this process runs at once (PARLEY_WORKERS)", registry=registry
        )
        self._busy = Gauge("parley_workers_busy", "Workers running an agent run now", registry=registry)
        self._waiting = Gauge("parley_queue_waiting", "Runs waiting for a worker in this process", registry=registry)
        self._mcp_up = Gauge(
            "parley_mcp_server_up", "1 when the MCP server is connected, else 0", ["server"], registry=registry
        )
        self._mcp_changed = Gauge(
            "parley_mcp_tools_changed",
            "MCP tools whose definition changed since pinned (refused until `parley mcp trust`)",
            ["server"],
            registry=registry,
        )
        self._pending = Gauge(
            "parley_escalations_pending",
            "Escalations waiting for a person's decision (all replicas; NaN when the store did not answer)",
            registry=registry,
        )
        self._feedback = Gauge(
            "parley_feedback_verdicts",
            "People's current 👍 (up) and 👎 (down) on answers, one per person per run (all replicas; NaN when "
            "the store did not answer)",
            ["verdict"],
            registry=registry,
        )
        self._store_up = Gauge(
            "parley_store_up",
            f"1 when the store answered this scrape's query within {STORE_TIMEOUT_S:g} s, else 0",
            registry=registry,
        )
        self._taken_over = Counter(
            "parley_runs_resumed",
            "Runs this process went on with from their last step after their process stopped",
            registry=registry,
        )
        self._unknown = Counter(
            "parley_tool_calls_outcome_unknown",
            "Tool calls in flight when their process stopped, not made again (their tool is not idempotent)",
            registry=registry,
        )
        self._handed_over = Gauge(
            "parley_runs_handed_over",
            "Runs this process handed over to another replica while stopping (queued, or still running after "
            "the grace period)",
            registry=registry,
        )
        self.taken_over = 0  # the same, for /healthz
        self.unknown_outcomes = 0
        self._workers.set(workers)
        self._store_answered = True
        self._counting: set[asyncio.Task[StoreCounts]] = set()  # counts given up on, finishing on their own

    async def record(self, event: TraceEvent) -> None:
        """Count one trace event (the `Recorder` protocol); never raises, never waits."""
        words = self._vocabulary
        match event:
            case ToolCallFinished():
                tool = words.tool(event.tool)
                if event.ok:
                    self._tool_calls.labels(tool, OK, OK).inc()
                else:
                    level = event.level.name if event.level is not None else OTHER
                    self._tool_calls.labels(tool, words.code(event.code), level).inc()
                self._tool_seconds.labels(tool).observe(event.latency_ms / 1000)
            case RetryScheduled():
                self._tool_retries.labels(words.tool(event.tool), words.code(event.code)).inc()
            case LLMCallFinished():
                self._llm_seconds.labels(event.purpose, OK if event.ok else FAILED).observe(event.latency_ms / 1000)
                if event.prompt_tokens:
                    self._llm_tokens.labels(event.purpose, "prompt").inc(event.prompt_tokens)
                if event.completion_tokens:
                    self._llm_tokens.labels(event.purpose, "completion").inc(event.completion_tokens)
            case LLMRetry():
                self._llm_retries.inc()
            case RunFinished():
                result = event.result
                self._runs.labels(result.status.value, result.termination_reason.value).inc()
            case RunTakenOver():
                self.taken_over += 1
                self.unknown_outcomes += len(event.unknown)
                self._taken_over.inc()
                self._unknown.inc(len(event.unknown))

    def observe_ack(self, seconds: float) -> None:
        self._ack_seconds.observe(seconds)

    async def page(
        self,
        db: Database,
        *,
        busy: int,
        waiting: int,
        handed_over: int = 0,
        mcp: Sequence[McpServerStatus] = (),
    ) -> bytes:
        """The text Prometheus scrapes: counters so far, and the gauges as they are now. A store that does not
        answer in time shows as `parley_store_up 0` (pending escalations NaN), never as a failed scrape."""
        counts = await self._store_counts(db)
        self._busy.set(busy)
        self._waiting.set(waiting)
        self._handed_over.set(handed_over)
        self._pending.set(math.nan if counts is None else counts.pending)
        for verdict in FeedbackVerdict:
            shown = math.nan if counts is None else getattr(counts.feedback, verdict.value)
            self._feedback.labels(verdict.value).set(shown)
        self._store_up.set(0 if counts is None else 1)
        for server in mcp:
            self._mcp_up.labels(server.server).set(1 if server.state is ServerState.UP else 0)
            self._mcp_changed.labels(server.server).set(len(server.changed))
        return generate_latest(self.registry)

    async def _store_counts(self, db: Database) -> StoreCounts | None:
        # Not `asyncio.timeout`: cancelling a query to a hung server waits for the driver (seconds); the count
        # given up on finishes on its own, like the store recorder's writes.
        counting = asyncio.create_task(_count(db))
        done, _ = await asyncio.wait({counting}, timeout=STORE_TIMEOUT_S)
        problem = None
        if not done:
            counting.cancel()
            self._counting.add(counting)
            counting.add_done_callback(_forget(self._counting))
            problem = f"no answer within {STORE_TIMEOUT_S:g} s"
        elif (failure := counting.exception()) is not None:
            problem = exception_line(failure)
        if problem is None:
            if not self._store_answered:
                log.info("metrics: the store answers again")
            self._store_answered = True
            return counting.result()
        if self._store_answered:  # once per outage: Prometheus scrapes every few seconds
            log.warning("metrics: escalations and feedback not counted, the store is unavailable: %s", problem)
        self._store_answered = False
        return None


@dataclass(frozen=True)
class StoreCounts:
    """What a scrape reads from the store: escalations waiting for people, and the feedback on answers."""

    pending: int
    feedback: Tally


async def _count(db: Database) -> StoreCounts:
    return StoreCounts(pending=await count_pending_escalations(db), feedback=await count_feedback(db))


def _forget(tasks: set[asyncio.Task[StoreCounts]]) -> Callable[[asyncio.Task[StoreCounts]], None]:
    def done(task: asyncio.Task[StoreCounts]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the failure was reported when the scrape gave up

    return done
