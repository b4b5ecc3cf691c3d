"""Every bound of a run is reached at least once, and each ends in its own honest outcome."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent import (
    CritiqueVerdictMade,
    ErrorLevel,
    OutcomeKind,
    RetryScheduled,
    RunStatus,
    TerminationReason,
    ToolCallFinished,
    ToolError,
)
from tests.agent.toolbox import Hang, ScriptedTool, eventually, make_agent, replay, weather_lookup

QUESTION = "查上海和北京天气，对比并给穿衣建议。"


async def test_bound_max_steps_ends_degraded_with_completed_and_missing():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay(
        [{"tool": "get_weather", "args": {"city": "上海"}}, {"tool": "get_weather", "args": {"city": "北京"}}]
    )
    agent, _ = make_agent(brain, [tool], config={"limits": {"max_steps": 2}})

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.MAX_STEPS
    assert result.steps == 2
    assert result.outcome is OutcomeKind.ESCALATED  # recovery ran out with Done items open: people look
    assert result.degraded is not None
    assert len(result.completed) == 2 and result.missing  # both cities fetched, comparison and advice missing
    assert "28" in result.answer and "[1]" in result.answer


async def test_bound_run_timeout_stops_a_run_whose_tool_is_slow():
    tool = ScriptedTool("get_weather", [Hang(0.3, {"city": "上海", "temp_c": 28})], timeout_s=5)
    brain = replay([{"tool": "get_weather", "args": {"city": f"c{i}"}} for i in range(6)])
    agent, _ = make_agent(brain, [tool], config={"limits": {"run_timeout_s": 0.5}})

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.RUN_TIMEOUT
    assert len(tool.calls) <= 2
    assert "0.5 seconds" in result.answer


async def test_bound_auto_retries_per_call():
    tool = ScriptedTool("get_weather", [ToolError("RATE_LIMIT", "slow down", retry_after_s=0.01)])
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"give_up": "rate limited"}])
    agent, recorder = make_agent(brain, [tool], config={"limits": {"max_auto_retries": 3}})

    result = await agent.run(QUESTION)

    assert len(tool.calls) == 4  # one call plus three automatic retries
    assert [e.attempt for e in recorder.of(RetryScheduled)] == [1, 2, 3]
    assert all(e.delay_s >= 0.01 for e in recorder.of(RetryScheduled))  # Retry-After is a floor
    assert result.retries == 3
    finished = recorder.of(ToolCallFinished)[0]
    assert finished.level is ErrorLevel.L2  # L0 exhausted becomes L2: switch path


async def test_bound_iron_rule_retryable_false_is_never_retried():
    tool = ScriptedTool("get_weather", [ToolError("TIMEOUT", "gave up upstream", retryable=False)])
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"give_up": "timeout"}])
    agent, recorder = make_agent(brain, [tool], config={"limits": {"max_auto_retries": 5}})

    await agent.run(QUESTION)

    assert len(tool.calls) == 1
    assert recorder.of(RetryScheduled) == []
    body = json.loads(recorder.of(ToolCallFinished)[0].observation)
    assert body["error"]["retryable"] is False


async def test_bound_critique_rounds_are_capped():
    failing = ScriptedTool("lookup", lambda args: ToolError("NOT_FOUND", f"no {args['key']}"))
    brain = replay([{"tool": "lookup", "args": {"key": f"k{i}"}} for i in range(5)] + [{"give_up": "nothing found"}])
    agent, recorder = make_agent(brain, [failing], config={"limits": {"max_critique_rounds": 2, "max_steps": 6}})

    result = await agent.run("What are k0 to k4?")

    assert result.critique_rounds == 2
    assert len(recorder.of(CritiqueVerdictMade)) == 2  # five failed steps, two critiques


async def test_bound_observation_size_is_cut_for_the_model_and_whole_in_the_trace():
    big = {"rows": [{"i": i, "text": "x" * 100} for i in range(50_000)]}  # about 5 MB
    tool = ScriptedTool("export", [big])
    brain = replay([{"tool": "export", "args": {}}, {"give_up": "too much data"}])
    agent, recorder = make_agent(brain, [tool], config={"limits": {"max_observation_chars": 1000}})

    await agent.run("Export everything please")

    finished = recorder.of(ToolCallFinished)[0]
    assert len(finished.observation) <= 1000
    body = json.loads(finished.observation)
    assert body["ok"] is True and "50000 items" in body["_truncated"]
    assert len(finished.raw["rows"]) == 50_000


async def test_bound_repeat_same_call_stops_identical_successful_calls():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay([{"tool": "get_weather", "args": {"city": c}} for c in ["上海", " 上海", "上海 ", "北京"]])
    agent, _ = make_agent(brain, [tool], config={"limits": {"no_progress_steps": 10}})

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.REPEAT_SAME_CALL  # " 上海" is "上海"
    assert len(tool.calls) == 3


async def test_bound_alternation_between_two_calls():
    tool = ScriptedTool("get_weather", weather_lookup)
    cities = ["上海", "北京", "上海", "北京", "上海"]
    brain = replay([{"tool": "get_weather", "args": {"city": c}} for c in cities])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.REPEAT_ALTERNATION
    assert result.steps == 4


async def test_bound_no_progress_when_nothing_is_ticked():
    tool = ScriptedTool("search", lambda args: {"results": [f"nothing about {args['q']}"]})
    brain = replay([{"tool": "search", "args": {"q": f"rockets {i}"}} for i in range(6)])
    agent, _ = make_agent(brain, [tool], config={"limits": {"no_progress_steps": 3}, "done": {"planner": "rules"}})

    result = await agent.run("What are the market shares of Acme Rockets and Zephyr Labs?")

    assert result.termination_reason is TerminationReason.NO_PROGRESS
    assert result.steps == 3


async def test_bound_critique_spin_when_the_same_gaps_come_back():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay(
        [
            {"tool": "get_weather", "args": {"city": "上海"}},
            {"final": "上海 28°C [1]"},
            {"final": "上海 28°C [1]。"},
            {"final": "unused"},
        ]
    )
    agent, _ = make_agent(brain, [tool])

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.CRITIQUE_SPIN
    assert "北京" in " ".join(result.missing)


async def test_bound_all_tools_failed():
    down = ScriptedTool("search", [ToolError("UPSTREAM_DOWN", "503 from search")])
    broken = ScriptedTool("lookup", ["<html><body>Service unavailable</body></html>"])
    brain = replay(
        [{"tool": "search", "args": {"q": "a"}}, {"tool": "lookup", "args": {"key": "a"}}, {"give_up": "unused"}]
    )
    agent, _ = make_agent(brain, [down, broken])

    result = await agent.run("What is the market share of Acme Rockets?")

    assert result.termination_reason is TerminationReason.ALL_TOOLS_FAILED
    assert "cannot answer without guessing" in result.answer


async def test_bound_forbidden_stops_the_path_and_degrades_when_nothing_remains():
    tool = ScriptedTool("payroll", [ToolError("FORBIDDEN", "no access to payroll")])
    brain = replay([{"tool": "payroll", "args": {}}, {"tool": "payroll", "args": {}}])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run("What is Alice's salary?")

    assert result.termination_reason is TerminationReason.IRRECOVERABLE_ERROR
    assert len(tool.calls) == 1


async def test_bound_forbidden_tool_is_withheld_while_others_remain():
    forbidden = ScriptedTool("payroll", [ToolError("FORBIDDEN", "no access")])
    weather = ScriptedTool("get_weather", weather_lookup)
    brain = replay(
        [
            {"tool": "payroll", "args": {}},
            {"tool": "payroll", "args": {"again": True}},
            {"give_up": "no access"},
        ]
    )
    agent, recorder = make_agent(brain, [forbidden, weather])

    await agent.run("What is Alice's salary?")

    assert len(forbidden.calls) == 1
    second = json.loads(recorder.of(ToolCallFinished)[1].observation)
    assert second["error"]["code"] == "TOOL_DISABLED"
    assert second["suggested_action"] == "use_a_listed_tool"  # the grading table's; payroll declares no fallbacks
    assert "fallback_tools" not in second


async def test_bound_policy_violation_refuses_with_an_escalation():
    tool = ScriptedTool("transfer", [ToolError("POLICY_VIOLATION", "transfers above 1000 need approval")])
    brain = replay([{"tool": "transfer", "args": {"amount": 5000, "to": "bob"}}, {"final": "unused"}])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run("Send 5000 to bob")

    assert (result.status, result.outcome) == (RunStatus.AWAITING_REVIEW, OutcomeKind.REFUSED)
    assert result.termination_reason is TerminationReason.POLICY_VIOLATION
    assert result.escalation is not None
    assert result.escalation.reason == "policy_violation" and result.escalation.level is ErrorLevel.L4
    assert result.escalation.arguments == {"amount": 5000, "to": "bob"}


async def test_bound_garbage_every_time_ends_bounded():
    brain = replay([{"invalid": "¯\\_(ツ)_/¯"}] * 10)
    agent, _ = make_agent(brain, [ScriptedTool("get_weather", weather_lookup)])

    result = await agent.run(QUESTION)

    assert result.outcome is OutcomeKind.ESCALATED
    assert result.termination_reason is TerminationReason.REPEAT_SAME_ERROR
    assert result.steps == 2


async def test_bound_replay_script_running_out_is_llm_unavailable():
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}])
    agent, _ = make_agent(brain, [ScriptedTool("get_weather", weather_lookup)])

    result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.LLM_UNAVAILABLE
    assert "try again in a few minutes" in result.answer


async def test_bound_cancellation_is_recorded_and_reraised():
    tool = ScriptedTool("get_weather", [Hang(10)], timeout_s=20)
    agent, recorder = make_agent(replay([{"tool": "get_weather", "args": {"city": "上海"}}]), [tool])

    task = asyncio.create_task(agent.run(QUESTION))
    await eventually(lambda: bool(tool.calls))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    finished = recorder.events[-1]
    assert finished.kind == "run_finished"
    assert finished.result.termination_reason is TerminationReason.CANCELLED
