"""OpenTelemetry spans of a run — run → step → LLM call / tool call, the error code and level on a failed call —
when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it nothing is built, nothing exported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import ValidationError

from bot.metrics import Vocabulary
from bot.settings import Settings
from bot.spans import SpanRecorder, exported_spans, traces_url
from tests.agent.llm_agent import builtins, llm_agent
from tests.bot.slack.harness import calculation, mentioned_and_answered, running_bot, scripted
from tests.bot.slack.seen import runs
from tests.bot.slack.test_serve_process import environment
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer

QUESTION = "How warm is it in 上嗨 today?"


def in_memory() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan | None:
    return next((s for s in spans if span.parent is not None and s.context.span_id == span.parent.span_id), None)


def within(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.start_time is not None and child.end_time is not None
    assert parent.start_time is not None and parent.end_time is not None
    return parent.start_time <= child.start_time <= child.end_time <= parent.end_time


async def test_spans_of_a_slack_run_nest_run_step_llm_and_tool_calls_with_error_code_and_level(
    db, slack_api, llm_server
):
    llm_server.respond_with(
        scripted(
            {"tool": "get_weather", "args": {"city": "上嗨"}},
            {"tool": "get_weather", "args": {"city": "上海"}},
            {"final": "It is 28 °C in 上海 [1]."},
        )
    )
    provider, exporter = in_memory()
    tracer = provider.get_tracer("test")
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=("get_weather",), tracer=tracer, done={"planner": "llm"}
    ) as bot:
        await mentioned_and_answered(bot, QUESTION)
        [run] = await runs(db)
    spans = list(exporter.get_finished_spans())

    [root] = [s for s in spans if s.name == "run"]
    assert root.parent is None and {s.context.trace_id for s in spans} == {root.context.trace_id}
    assert root.attributes is not None
    assert root.attributes["parley.run_id"] == run.id
    assert (root.attributes["parley.status"], root.attributes["parley.termination_reason"]) == (
        run.status,
        run.termination_reason,
    )
    steps = sorted((s for s in spans if s.name.startswith("step ")), key=lambda s: s.start_time or 0)
    assert [s.name for s in steps] == [f"step {n}" for n in range(1, run.steps + 1)]
    assert all(parent_of(step, spans) is root and within(step, root) for step in steps)

    [plan] = [s for s in spans if s.name == "llm plan"]
    assert parent_of(plan, spans) is root and within(plan, root)
    decisions = [s for s in spans if s.name == "llm decide"]
    assert [parent_of(d, spans) for d in decisions] == steps
    assert all(d.attributes and d.attributes["gen_ai.usage.input_tokens"] == 10 for d in decisions)
    failed, found = sorted((s for s in spans if s.name == "tool get_weather"), key=lambda s: s.start_time or 0)
    assert parent_of(failed, spans) is steps[0] and parent_of(found, spans) is steps[1]
    assert within(failed, steps[0]) and within(found, steps[1])
    assert failed.attributes is not None and found.attributes is not None
    assert (failed.attributes["parley.error.code"], failed.attributes["parley.error.level"]) == ("CITY_NOT_FOUND", "L1")
    assert failed.status.status_code is StatusCode.ERROR and found.status.status_code is not StatusCode.ERROR
    assert "parley.error.code" not in found.attributes
    for span in spans:  # nothing the asker wrote, nothing a tool was given
        assert not any("嗨" in str(value) or "上海" in str(value) for value in (span.attributes or {}).values())


async def test_spans_go_to_the_otlp_endpoint_over_http_and_are_flushed_at_the_end(
    http_api: FakeHttpApi, llm_server: FakeLLMServer, http_client: httpx.AsyncClient, monkeypatch
):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the SDK's HTTP client reads the proxy settings
    http_api.route("/v1/traces", ApiReply.with_bytes(b"", content_type="application/x-protobuf"))
    llm_server.respond_with(calculation("47 * 12", "564"))

    async with exported_spans(http_api.base_url) as tracer:
        assert tracer is not None
        recorder = SpanRecorder(tracer, Vocabulary(["calculator"]))
        async with llm_agent(llm_server.base_url, builtins("calculator"), http_client) as (agent, _):
            result = await agent.run("What is 47 times 12?", recorder=recorder)

    posted = [request for request in http_api.requests if request.path == "/v1/traces"]
    assert posted and all(r.method == "POST" and r.headers["content-type"] == "application/x-protobuf" for r in posted)
    exported = [ExportTraceServiceRequest.FromString(request.body) for request in posted]
    resources = [rs for export in exported for rs in export.resource_spans]
    names = sorted(span.name for rs in resources for scope in rs.scope_spans for span in scope.spans)
    assert names == sorted(["run", "step 1", "step 2", "llm decide", "llm decide", "tool calculator"])
    service = {a.value.string_value for rs in resources for a in rs.resource.attributes if a.key == "service.name"}
    assert service == {"parley"} and result.status == "solved"


def test_spans_without_an_endpoint_nothing_is_configured_nor_loaded(tmp_path: Path):
    script = """
import asyncio, sys
from opentelemetry import trace
import bot.cli.serve  # everything `parley serve` loads
from bot.settings import Settings
from bot.spans import exported_spans

async def main():
    async with exported_spans(Settings().otel_endpoint) as tracer:
        assert tracer is None

asyncio.run(main())
loaded = sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter")))
assert loaded == [], loaded
assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"  # the API's no-op default
print("nothing")
"""
    env = {name: value for name, value in environment(tmp_path).items() if not name.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "nothing"), done.stderr


def test_spans_endpoint_is_read_once_by_the_settings(monkeypatch):
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    assert Settings().otel_endpoint is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")
    assert Settings().otel_endpoint is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert traces_url(Settings().otel_endpoint or "") == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")
    with pytest.raises(ValidationError, match="OTEL_EXPORTER_OTLP_ENDPOINT must start with http"):
        Settings()
