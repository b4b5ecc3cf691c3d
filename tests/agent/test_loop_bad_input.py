"""Bad input of every kind gets a clear, bounded outcome — never an exception out of the engine."""

from __future__ import annotations

import json

import pytest

from agent import ErrorLevel, InvalidQuestion, RunStatus, TerminationReason, ToolCallFinished
from tests.agent.toolbox import Hang, ScriptedTool, make_agent, replay, weather_lookup


async def test_bad_input_empty_question_is_refused_before_anything_runs():
    tool = ScriptedTool("get_weather", weather_lookup)
    agent, recorder = make_agent(replay([{"final": "x"}]), [tool])

    with pytest.raises(InvalidQuestion, match="empty"):
        await agent.run("   \n ")
    assert recorder.events == []


async def test_bad_input_100kb_question_is_refused_with_the_limit():
    agent, recorder = make_agent(replay([{"final": "x"}]), [])

    with pytest.raises(InvalidQuestion, match="102400 characters long; the limit is 20000"):
        await agent.run("问" * 102_400)
    assert recorder.events == []


async def test_bad_input_question_with_invalid_utf8_runs_with_replacements():
    broken = b"weather in Shanghai \xff\xfe?".decode("utf-8", "surrogateescape")
    agent, _ = make_agent(replay([{"final": "I cannot tell."}]), [])

    result = await agent.run(broken)

    assert "\udcff" not in result.question
    result.model_dump_json()  # the whole result encodes as UTF-8


async def test_bad_input_tool_returning_invalid_utf8_bytes_is_bad_response():
    tool = ScriptedTool("fetch", [b"\xff\xfe\x00garbage"])
    agent, recorder = make_agent(replay([{"tool": "fetch", "args": {}}, {"give_up": "broken"}]), [tool])

    await agent.run("Fetch the report please")

    body = json.loads(recorder.of(ToolCallFinished)[0].observation)
    assert body["error"]["code"] == "BAD_RESPONSE"


async def test_bad_input_nan_and_infinity_become_valid_json():
    tool = ScriptedTool("stats", [{"mean": float("nan"), "max": float("inf"), "min": float("-inf")}])
    agent, recorder = make_agent(replay([{"tool": "stats", "args": {}}, {"give_up": "no stats"}]), [tool])

    await agent.run("Give me the stats please")

    body = json.loads(recorder.of(ToolCallFinished)[0].observation)  # strict JSON: no bare NaN
    assert body["data"] == {"mean": "NaN", "max": "Infinity", "min": "-Infinity"}


@pytest.mark.parametrize("exc", [ValueError("bad"), KeyError("k"), RuntimeError("boom"), ZeroDivisionError()])
async def test_bad_input_tool_raising_anything_is_a_graded_failure(exc):
    tool = ScriptedTool("flaky", [exc])
    agent, recorder = make_agent(replay([{"tool": "flaky", "args": {}}, {"give_up": "tool broken"}]), [tool])

    result = await agent.run("Use the flaky tool please")

    finished = recorder.of(ToolCallFinished)[0]
    assert finished.code == "TOOL_CRASHED" and finished.level is ErrorLevel.L2
    assert type(exc).__name__ in json.loads(finished.observation)["error"]["message"]
    assert result.status is RunStatus.DEGRADED


async def test_bad_input_tool_that_hangs_times_out_per_call():
    tool = ScriptedTool("slow", [Hang(60)], timeout_s=0.05)
    agent, recorder = make_agent(replay([{"tool": "slow", "args": {}}, {"give_up": "too slow"}]), [tool])

    result = await agent.run("Use the slow tool please")

    finished = recorder.of(ToolCallFinished)[0]
    assert finished.code == "TIMEOUT"
    assert len(tool.calls) == 3  # the call and two automatic retries (the default)
    assert result.termination_reason is TerminationReason.GAVE_UP


async def test_bad_input_arguments_that_are_not_an_object_are_invalid_args():
    tool = ScriptedTool("get_weather", weather_lookup)
    agent, recorder = make_agent(replay([{"tool": "get_weather", "args": "上海"}, {"give_up": "x"}]), [tool])

    await agent.run("上海天气怎么样？")

    finished = recorder.of(ToolCallFinished)[0]
    assert finished.code == "INVALID_ARGS" and tool.calls == []


async def test_bad_input_unknown_tool_is_l3_and_lists_the_real_ones():
    agent, recorder = make_agent(
        replay([{"tool": "get_wether", "args": {"city": "上海"}}, {"give_up": "x"}]),
        [ScriptedTool("get_weather", weather_lookup)],
    )

    await agent.run("上海天气怎么样？")

    body = json.loads(recorder.of(ToolCallFinished)[0].observation)
    assert body["error"]["code"] == "UNKNOWN_TOOL" and body["error"]["level"] == "L3"
    assert "get_weather" in body["error"]["message"]


class ExplodingRecorder:
    async def record(self, event) -> None:
        raise ConnectionError("database went away")


async def test_bad_input_failing_recorder_never_costs_the_user_the_answer(caplog):
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"final": "上海 28°C [1]"}])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run("上海天气怎么样？", recorder=ExplodingRecorder())

    assert result.status is RunStatus.SOLVED
    assert "recording run_started of run" in caplog.text
