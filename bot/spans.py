"""Spans: OpenTelemetry traces of runs — run → step → LLM call / tool call — built from the engine's trace events.

Only when OTEL_EXPORTER_OTLP_ENDPOINT is set (`Settings.otel_endpoint`): `parley serve` then exports the spans
over OTLP/HTTP, in batches, from the SDK's own thread (`exported_spans`). Unset, no tracer provider is built,
the SDK is not even imported, and nothing leaves the process.

The spans are built after the fact from each event's time and latency, so the engine knows nothing of them.
Their attributes are the metrics' closed vocabularies — run id, status, termination reason, a configured tool's
name, error code and level, an LLM request's purpose and tokens — never a question, an answer, a tool's
arguments or a secret.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.util.types import AttributeValue

from agent import (
    LLMCallFinished,
    RunFinished,
    RunResumed,
    RunStarted,
    RunStatus,
    StepDecided,
    ToolCallFinished,
    TraceEvent,
)
from bot.metrics import Vocabulary

log = logging.getLogger(__name__)

SERVICE_NAME = "parley"
TRACES_PATH = "v1/traces"  # OTLP/HTTP: the signal's path under OTEL_EXPORTER_OTLP_ENDPOINT
_NS_PER_MS = 1_000_000
# A batch, its retries included, gets this long: a collector that is down never holds up a shutdown for long.
EXPORT_TIMEOUT_S = 5.0


def traces_url(endpoint: str) -> str:
    """Where OTLP/HTTP spans go, for the base URL OTEL_EXPORTER_OTLP_ENDPOINT gives (as the OTel spec reads it)."""
    return endpoint.rstrip("/") + "/" + TRACES_PATH


@asynccontextmanager
async def exported_spans(endpoint: str | None) -> AsyncIterator[Tracer | None]:
    """A tracer whose spans go to the OTLP/HTTP collector at `endpoint`, flushed when the block ends; without
    an endpoint, None, and nothing is built."""
    if endpoint is None:
        yield None
        return
    # Imported here: a process that exports nothing never loads the SDK and its exporter.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(endpoint), timeout=EXPORT_TIMEOUT_S))
    )
    log.info("OpenTelemetry: spans of every run are exported to %s", urlsplit(endpoint).hostname)
    try:
        yield provider.get_tracer(SERVICE_NAME)
    finally:
        await asyncio.to_thread(provider.shutdown)  # flushes what is left: a blocking HTTP request


@dataclass
class _OpenRun:
    span: Span
    step: Span | None = None
    step_number: int = 0


class SpanRecorder:
    """A `Recorder` that turns each run's events into spans: the run; each step under it; each LLM request and
    tool call under its step (the plan's request, made before the first step, under the run)."""

    def __init__(self, tracer: Tracer, vocabulary: Vocabulary) -> None:
        self._tracer = tracer
        self._words = vocabulary
        self._runs: dict[str, _OpenRun] = {}

    async def record(self, event: TraceEvent) -> None:
        match event:
            case RunStarted():
                self._open(event.run_id, event.at, {"parley.brain": event.brain, "parley.replayed": event.replayed})
            case RunResumed():
                self._open(event.run_id, event.at, {"parley.resumed": True, "parley.step": event.step})
            case LLMCallFinished():
                self._llm_call(event)
            case ToolCallFinished():
                self._tool_call(event)
            case StepDecided():
                if (run := self._runs.get(event.run_id)) is not None:
                    self._step(run, event.step, _ns(event.at)).set_attribute("parley.decision", event.decision.value)
            case RunFinished():
                self._close(event)

    def _open(self, run_id: str, at: datetime, attributes: Mapping[str, AttributeValue]) -> None:
        attributes = {"parley.run_id": run_id, **attributes}
        span = self._tracer.start_span("run", context=Context(), start_time=_ns(at), attributes=attributes)  # a root
        self._runs[run_id] = _OpenRun(span)

    def _step(self, run: _OpenRun, number: int, start: int) -> Span:
        """The step's span, opened at its first request or call; the step before it ends there."""
        if run.step is not None and run.step_number == number:
            return run.step
        if run.step is not None:
            run.step.end(end_time=start)
        run.step = self._tracer.start_span(
            f"step {number}",
            context=set_span_in_context(run.span),
            start_time=start,
            attributes={"parley.step": number},
        )
        run.step_number = number
        return run.step

    def _child(self, run_id: str, step: int, name: str, at: datetime, latency_ms: int) -> tuple[Span, int] | None:
        run = self._runs.get(run_id)
        if run is None:
            return None
        end = _ns(at)
        start = end - latency_ms * _NS_PER_MS
        parent = run.span if step == 0 else self._step(run, step, start)
        return self._tracer.start_span(name, context=set_span_in_context(parent), start_time=start), end

    def _llm_call(self, event: LLMCallFinished) -> None:
        opened = self._child(event.run_id, event.step, f"llm {event.purpose}", event.at, event.latency_ms)
        if opened is None:
            return
        span, end = opened
        span.set_attributes(
            {
                "parley.llm.purpose": event.purpose,
                "parley.llm.retries": event.retries,
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": event.prompt_tokens,
                "gen_ai.usage.output_tokens": event.completion_tokens,
            }
        )
        if not event.ok:
            span.set_attribute("error.type", "llm_unavailable")
            span.set_status(Status(StatusCode.ERROR, "the LLM stayed unreachable or refused the request"))
        span.end(end_time=end)

    def _tool_call(self, event: ToolCallFinished) -> None:
        tool = self._words.tool(event.tool)
        opened = self._child(event.run_id, event.step, f"tool {tool}", event.at, event.latency_ms)
        if opened is None:
            return
        span, end = opened
        span.set_attributes({"parley.tool": tool, "parley.ok": event.ok, "parley.retries": event.retries})
        if not event.ok:
            code = self._words.code(event.code)
            level = event.level.name if event.level is not None else "other"
            span.set_attributes({"parley.error.code": code, "parley.error.level": level, "error.type": code})
            span.set_status(Status(StatusCode.ERROR, f"{code} ({level})"))
        span.end(end_time=end)

    def _close(self, event: RunFinished) -> None:
        run = self._runs.pop(event.run_id, None)
        if run is None:
            return
        end = _ns(event.at)
        if run.step is not None:
            run.step.end(end_time=end)
        result = event.result
        run.span.set_attributes(
            {
                "parley.status": result.status.value,
                "parley.termination_reason": result.termination_reason.value,
                "parley.outcome": result.outcome.value,
                "parley.steps": result.steps,
                "parley.llm_calls": result.llm_calls,
                "parley.tool_calls": result.tool_calls,
                "parley.retries": result.retries,
                "parley.tokens": result.tokens,
            }
        )
        if result.status is RunStatus.DEGRADED:
            run.span.set_status(Status(StatusCode.ERROR, result.termination_reason.value))
        elif result.status is RunStatus.SOLVED:
            run.span.set_status(Status(StatusCode.OK))
        run.span.end(end_time=end)


def _ns(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000_000)
