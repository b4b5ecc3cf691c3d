"""A person's stop: the run ends at once with `stopped_by_user`, the call in flight abandoned, and its answer is
what was found so far, cited."""

from __future__ import annotations

import asyncio

from agent import OutcomeKind, RunFinished, RunStatus, StopRequest, TerminationReason
from tests.agent.toolbox import Hang, ScriptedTool, eventually, make_agent, replay

QUESTION = "查上海和北京天气，对比并给穿衣建议。"


async def test_a_stop_mid_tool_call_ends_the_run_with_what_was_found():
    shanghai = {"city": "上海", "temp_c": 28}
    tool = ScriptedTool("get_weather", [shanghai, Hang(60, {"city": "北京", "temp_c": 20})], timeout_s=120)
    brain = replay(
        [{"tool": "get_weather", "args": {"city": "上海"}}, {"tool": "get_weather", "args": {"city": "北京"}}]
    )
    agent, recorder = make_agent(brain, [tool])
    stop = StopRequest()

    running = asyncio.ensure_future(agent.run(QUESTION, stop=stop))
    await eventually(lambda: len(tool.calls) == 2)  # the second call hangs: the run is in it
    stop.stop("<@U0ASKER>")
    result = await asyncio.wait_for(running, timeout=5)

    assert result.termination_reason is TerminationReason.STOPPED_BY_USER
    assert result.status is RunStatus.DEGRADED and result.outcome is not OutcomeKind.REFUSED
    assert "stopped by <@U0ASKER>" in result.answer
    assert "28" in result.answer and "[1]" in result.answer  # Shanghai's result, cited
    assert [c.tool for c in result.citations] == ["get_weather"]
    [finished] = recorder.of(RunFinished)  # exactly one end, recorded
    assert finished.result.termination_reason is TerminationReason.STOPPED_BY_USER


async def test_a_run_that_ends_before_any_stop_keeps_its_own_end():
    tool = ScriptedTool("get_weather", [{"city": "上海", "temp_c": 28}])
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"final": "上海 28°C [1]"}])
    agent, _ = make_agent(brain, [tool])
    stop = StopRequest()

    result = await agent.run("上海天气?", stop=stop)
    stop.stop("<@U0ASKER>")  # too late: nothing changes

    assert result.termination_reason is TerminationReason.ANSWERED


async def test_a_stop_before_the_run_starts_stops_it_at_its_first_step():
    tool = ScriptedTool("get_weather", [{"city": "上海", "temp_c": 28}])
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"final": "上海 28°C [1]"}])
    agent, _ = make_agent(brain, [tool])
    stop = StopRequest()
    stop.stop("ops")
    stop.stop("someone else")  # the first stop names who stopped it

    result = await agent.run("上海天气?", stop=stop)

    assert result.termination_reason is TerminationReason.STOPPED_BY_USER
    assert "stopped by ops" in result.answer and tool.calls == []
