"""Runs recorded through the real engine (replay brain, scripted tools, StoreRecorder) and read back: the store
keeps what the caller got and what the model saw, on PostgreSQL and on SQLite alike."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from agent import (
    Agent,
    AgentConfig,
    OpenAIBrain,
    OutcomeKind,
    PlanMade,
    RunFinished,
    RunStarted,
    RunStatus,
    StepDecided,
    TerminationReason,
    ToolCallFinished,
    ToolError,
)
from agent.brains.chat import ChatCompletionsClient
from bot.store import Database
from bot.store.queries import load_trace
from bot.store.recorder import DEFAULT_RAW_CAP_BYTES
from tests.agent.toolbox import WEATHER, Hang, ScriptedTool, make_agent, replay
from tests.bot.store.recording import SLACK, fetch, record, recording_failures, stored_result
from tests.fakes.llm_server import FakeLLMServer, FakeReply
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded

TWO_CITIES = "查上海和北京天气，对比并给穿衣建议。"
SHANGHAI_ONLY = "上海 28°C [1]，适合穿短袖。"
GOOD_FINAL = "上海 28°C，多云 [1]；北京 22°C，晴 [2]。上海比北京更热。建议：上海穿短袖，北京带一件薄外套。"
NOT_FOUND = ToolError("CITY_NOT_FOUND", "unknown city", details={"did_you_mean": "上海"})


def weather_agent() -> Agent:
    """Seed 000's two cities with a wrong turn of each kind: a timeout retried, a final rejected by the Done
    check (with a closing critique), a misspelled city (with an in-step critique), then the right answer."""
    tool = ScriptedTool("get_weather", [Hang(5), WEATHER["上海"], NOT_FOUND, WEATHER["北京"]], timeout_s=0.1)
    brain = replay(
        [
            {"thought": "先查上海", "tool": "get_weather", "args": {"city": "上海"}},
            {"final": SHANGHAI_ONLY},
            {"thought": "再查北京", "tool": "get_weather", "args": {"city": "上嗨"}},
            {"tool": "get_weather", "args": {"city": "北京"}},
            {"final": GOOD_FINAL},
        ]
    )
    agent, _ = make_agent(brain, [tool])
    return agent


async def test_recorder_stores_the_run_exactly_as_its_result(db: Database, caplog: pytest.LogCaptureFixture) -> None:
    result, memory = await record(weather_agent(), db, TWO_CITIES, origin=SLACK)

    trace = await load_trace(db, result.run_id)
    run = SimpleNamespace(**trace.columns)  # the row as it is, column by column
    assert (result.status, result.retries, result.critique_rounds) == (RunStatus.SOLVED, 1, 2)  # the scenario
    assert stored_result(trace.columns) == result
    assert (run.source, run.workspace_id, run.channel_id, run.thread_ts, run.asker) == (
        "slack",
        "T0TEAM",
        "C0CHAN",
        "1700000000.000100",
        "U0TESTER",
    )
    [started], [planned], [finished] = memory.of(RunStarted), memory.of(PlanMade), memory.of(RunFinished)
    assert (run.created_at, run.started_at, run.finished_at) == (started.at, started.at, finished.at)
    assert run.limits == started.limits.model_dump() and run.done_plan == [i.model_dump() for i in planned.items]
    assert recording_failures(caplog) == []


async def test_recorder_stores_one_row_per_step_and_per_tool_call(db: Database) -> None:
    result, memory = await record(weather_agent(), db, TWO_CITIES)

    trace = await load_trace(db, result.run_id)
    decided = memory.of(StepDecided)
    assert len(trace.steps) == result.steps == len(decided) == 5
    assert [(s.step, s.decision, s.thought, s.text, s.requested_calls) for s in trace.steps] == [
        (
            e.step,
            e.decision.value,
            e.thought,
            e.text,
            [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in e.tool_calls],
        )
        for e in decided
    ]
    first = trace.steps[0]  # the stored shape, as `parley runs show/export` and older rows have it
    assert (first.decision, first.requested_calls) == (
        "tool_calls",
        [{"id": "replay_1_1", "name": "get_weather", "arguments": {"city": "上海"}}],
    )
    finished = memory.of(ToolCallFinished)
    assert len(trace.tool_calls) == result.tool_calls == len(finished) == 3
    for row, event in zip(trace.tool_calls, finished, strict=True):
        assert (row.step, row.tool_call_id, row.tool, row.arguments) == (
            event.step,
            event.tool_call_id,
            event.tool,
            event.arguments,
        )
        assert (row.ok, row.error_code, row.error_level, row.retryable) == (
            event.ok,
            event.code,
            event.level.name if event.level is not None else None,
            event.retryable,
        )
        assert (row.retries, row.latency_ms, row.observation, row.raw) == (
            event.retries,
            event.latency_ms,
            event.observation,
            event.raw,
        )
        assert row.attempts == [a.model_dump() for a in event.attempts]
        assert (row.raw_truncated, row.raw_purged_at) == (False, None)
    timed_out, misspelled, _ = trace.tool_calls
    assert (timed_out.retries, [a["code"] for a in timed_out.attempts]) == (1, ["TIMEOUT", None])
    assert (misspelled.ok, misspelled.error_code, misspelled.error_level, misspelled.retryable) == (
        False,
        "CITY_NOT_FOUND",
        "L1",
        False,
    )
    assert json.loads(misspelled.observation)["error"]["details"] == {"did_you_mean": "上海"}  # as the model saw it


async def test_recorder_stores_verdicts_and_the_audit_trail(db: Database) -> None:
    result, _ = await record(weather_agent(), db, TWO_CITIES)

    trace = await load_trace(db, result.run_id)
    assert [(v.kind, v.step, v.stage, v.satisfied, v.tool_call_id) for v in trace.verdicts] == [
        ("plan", None, None, None, None),
        ("done_tick", 1, None, True, "replay_1_1"),
        ("critique", 2, "closing", False, None),
        ("final_rejected", 2, "done", False, None),
        ("critique", 3, "in_step", False, None),
        ("done_tick", 4, None, True, "replay_4_1"),
    ]
    rejected = trace.verdicts[3]
    assert rejected.reason == SHANGHAI_ONLY and any("北京" in gap for gap in rejected.gaps)
    assert trace.verdicts[4].gaps[0] == "get_weather failed with CITY_NOT_FOUND (L1): correct the arguments"
    assert [(a.actor, a.action, a.from_status, a.to_status) for a in trace.audit] == [
        ("engine", "run_started", None, "running"),
        ("engine", "run_finished", "running", "solved"),
    ]
    assert trace.audit[1].detail == {"termination_reason": "answered"}


async def test_recorder_escalates_a_policy_violation_with_the_held_action(db: Database) -> None:
    held = {"amount_eur": 25_000, "to": "DE89 3704 0044 0532 0130 00", "memo": "Q4 invoice"}
    refusal = ToolError("POLICY_VIOLATION", "transfers above 10,000 EUR need a second approver")
    agent, _ = make_agent(
        replay([{"tool": "wire_transfer", "args": held}, {"final": "done"}]),
        [ScriptedTool("wire_transfer", [refusal])],
    )

    result, _ = await record(agent, db, "Pay the Q4 invoice of 25,000 EUR to ACME")

    # The engine decides it: the refused run waits for a reviewer, and the store records exactly that.
    assert (result.status, result.termination_reason) == (RunStatus.AWAITING_REVIEW, TerminationReason.POLICY_VIOLATION)
    assert result.outcome is OutcomeKind.REFUSED
    trace = await load_trace(db, result.run_id)
    [escalation] = trace.escalations
    assert (escalation.status, escalation.reason, escalation.level) == ("pending", "policy_violation", "L4")
    assert (escalation.tool, escalation.arguments, escalation.tool_call_id) == ("wire_transfer", held, "replay_1_1")
    assert escalation.message == "transfers above 10,000 EUR need a second approver"
    assert (escalation.decided_at, escalation.decided_by) == (None, None)
    assert escalation.kind == "policy" and escalation.draft_answer == result.answer
    assert stored_result(trace.columns) == result
    assert (trace.tool_calls[0].error_code, trace.tool_calls[0].error_level) == ("POLICY_VIOLATION", "L4")
    assert [a.to_status for a in trace.audit] == ["running", "awaiting_review"]


async def test_recorder_caps_a_huge_raw_result_and_keeps_what_the_model_saw(db: Database) -> None:
    blob = {"rows": "数" * 1_750_000}  # 5 MB of UTF-8, three bytes a character: the cap cuts inside one
    agent, _ = make_agent(
        replay([{"tool": "export_rows", "args": {"table": "orders"}}, {"give_up": "too much data"}]),
        [ScriptedTool("export_rows", [blob])],
    )

    result, memory = await record(agent, db, "Export every order")

    [row] = (await load_trace(db, result.run_id)).tool_calls
    whole = json.dumps(blob, ensure_ascii=False)
    assert len(whole.encode()) > 5_000_000
    assert (row.raw_truncated, row.raw_bytes) == (True, len(whole.encode()))
    assert (row.raw["truncated"], row.raw["bytes"]) == (True, len(whole.encode()))
    head = row.raw["head"]
    assert whole.startswith(head) and DEFAULT_RAW_CAP_BYTES - 3 < len(head.encode()) <= DEFAULT_RAW_CAP_BYTES
    [seen] = memory.of(ToolCallFinished)
    assert row.observation == seen.observation  # what the model saw, exactly
    assert len(row.observation) <= AgentConfig().limits.max_observation_chars
    assert "kept in the trace" in json.loads(row.observation)["_truncated"]


async def test_recorder_stores_nan_infinity_and_nul_without_error(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    nan, inf = float("nan"), float("inf")
    output = {"mean": nan, "max": inf, "min": -inf, "label": "a\x00b", "k\x00ey": [nan, "\x00"]}
    agent, _ = make_agent(
        replay(
            [
                {"thought": "think\x00ing", "tool": "stats", "args": {"column": "x\x00y", "cutoff": nan}},
                {"give_up": "the data is\x00 garbage"},
            ]
        ),
        [ScriptedTool("stats", [output])],
    )

    result, memory = await record(agent, db, "Summarise column x\x00y")

    assert recording_failures(caplog) == []
    trace = await load_trace(db, result.run_id)
    assert trace.run.status == "degraded" and len(trace.steps) == 2 and len(trace.audit) == 2
    [row] = trace.tool_calls
    assert row.raw == {
        "mean": "NaN",
        "max": "Infinity",
        "min": "-Infinity",
        "label": "a\ufffdb",
        "k\ufffdey": ["NaN", "\ufffd"],
    }
    assert row.arguments == {"column": "x\ufffdy", "cutoff": "NaN"}
    assert row.observation == memory.of(ToolCallFinished)[0].observation  # JSON text: its NULs are escapes
    assert trace.run.question == result.question.replace("\x00", "\ufffd")
    assert trace.run.answer == result.answer.replace("\x00", "\ufffd")
    assert trace.steps[0].thought == "think\ufffding"
    text_columns = await fetch(db, "SELECT question, answer FROM runs")
    assert "\x00" not in json.dumps(text_columns, ensure_ascii=False)


async def test_recorder_keeps_the_llm_retry_count(db: Database, llm_server: FakeLLMServer) -> None:
    llm = ScriptedLLM({"decisions": [{"give_up": "nothing to look up"}]}, unrecorded=Unrecorded.PROSE)
    llm.inject(RequestKind.DECIDE, FakeReply.with_status(503, "overloaded"))
    llm_server.respond_with(llm)
    client = ChatCompletionsClient(llm_server.base_url, "test-model", max_retries=1, backoff_max_s=0.01)
    agent, _ = make_agent(OpenAIBrain(client), [ScriptedTool("calculator", [1])], config={"done": {"planner": "rules"}})
    try:
        result, _ = await record(agent, db, "What is 1 + 0?")
    finally:
        await client.aclose()

    assert result.llm_retries == 1
    assert stored_result((await load_trace(db, result.run_id)).columns) == result
