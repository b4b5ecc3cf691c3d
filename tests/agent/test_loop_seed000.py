"""Seed 000's 'Problem Scenario', each as a run through the real loop (replay brain, real tools)."""

from __future__ import annotations

import json

from agent import ErrorLevel, FinalRejected, OutcomeKind, RunStatus, TerminationReason, ToolCallFinished, ToolError
from tests.agent.toolbox import Hang, ScriptedTool, make_agent, replay, weather_lookup

TWO_CITIES = "查上海和北京天气，对比并给穿衣建议。"
GOOD_FINAL = "上海 28°C，多云 [1]；北京 22°C，晴 [2]。上海比北京更热。建议：上海穿短袖，北京带一件薄外套。"


def observations(recorder) -> list[dict]:
    return [json.loads(e.observation) for e in recorder.of(ToolCallFinished)]


async def test_loop_html_page_is_a_failure_not_data():
    page = "<!DOCTYPE html><html><body>" + "<p>Weather portal</p>" * 20_000 + "</body></html>"
    tool = ScriptedTool("get_weather", [page])
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"give_up": "the weather service is broken"}])
    agent, recorder = make_agent(brain, [tool])

    result = await agent.run("上海天气怎么样？")

    first = observations(recorder)[0]
    assert first["ok"] is False
    assert first["error"]["code"] == "BAD_RESPONSE"
    assert result.status is RunStatus.DEGRADED
    assert "28" not in result.answer


async def test_loop_ok_false_body_is_a_failure():
    tool = ScriptedTool("get_weather", [{"ok": False, "error": {"code": "CITY_NOT_FOUND", "message": "no such city"}}])
    brain = replay([{"tool": "get_weather", "args": {"city": "上嗨"}}, {"give_up": "city unknown"}])
    agent, recorder = make_agent(brain, [tool])

    await agent.run("上嗨天气怎么样？")

    first = observations(recorder)[0]
    assert first == {
        "ok": False,
        "error": {"code": "CITY_NOT_FOUND", "message": "no such city", "retryable": False, "level": "L1"},
        "suggested_action": "retry_with_pinyin",
    }


async def test_loop_timeout_is_retried_then_city_not_found_is_not():
    not_found = ToolError("CITY_NOT_FOUND", "unknown city", details={"did_you_mean": "上海"})
    tool = ScriptedTool("get_weather", [Hang(5), not_found], timeout_s=0.1)
    brain = replay([{"tool": "get_weather", "args": {"city": "上嗨"}}, {"give_up": "unknown city"}])
    agent, recorder = make_agent(brain, [tool])

    result = await agent.run("上嗨天气怎么样？")

    assert len(tool.calls) == 2  # one timeout, one automatic retry, and no retry of CITY_NOT_FOUND
    finished = recorder.of(ToolCallFinished)[0]
    assert [a.code for a in finished.attempts] == ["TIMEOUT", "CITY_NOT_FOUND"]
    assert finished.code == "CITY_NOT_FOUND" and finished.retries == 1
    assert result.retries == 1


async def test_loop_five_identical_misspelled_calls_stop_at_the_threshold():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay([{"tool": "get_weather", "args": {"city": "上嗨"}}] * 5 + [{"final": "unused"}])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run("上嗨天气怎么样？")

    assert result.termination_reason is TerminationReason.REPEAT_SAME_ERROR
    assert len(tool.calls) == 2  # repeat_error_threshold, not five and not max_steps
    assert result.outcome is OutcomeKind.ESCALATED
    assert "CITY_NOT_FOUND" in result.answer


async def test_loop_shanghai_only_final_is_rejected_and_the_run_continues():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay(
        [
            {"tool": "get_weather", "args": {"city": "上海"}},
            {"final": "上海 28°C [1]，适合穿短袖。"},
            {"tool": "get_weather", "args": {"city": "北京"}},
            {"final": GOOD_FINAL},
        ]
    )
    agent, recorder = make_agent(brain, [tool])

    result = await agent.run(TWO_CITIES)

    rejected = recorder.of(FinalRejected)
    assert len(rejected) == 1 and rejected[0].by == "done"
    assert any("北京" in gap for gap in rejected[0].gaps)
    assert result.status is RunStatus.SOLVED
    assert [c.arguments["city"] for c in result.citations] == ["上海", "北京"]
    assert result.missing == []


async def test_loop_final_without_citations_is_cited_by_parley_not_sent_back():
    tool = ScriptedTool("get_weather", weather_lookup)
    uncited = GOOD_FINAL.replace(" [1]", "").replace(" [2]", "")
    brain = replay(
        [
            {
                "calls": [
                    {"tool": "get_weather", "args": {"city": "上海"}},
                    {"tool": "get_weather", "args": {"city": "北京"}},
                ]
            },
            {"final": uncited},
        ]
    )
    agent, recorder = make_agent(brain, [tool])

    result = await agent.run(TWO_CITIES)

    assert recorder.of(FinalRejected) == []
    assert result.status is RunStatus.SOLVED and result.llm_calls == 2
    assert (
        result.answer == "上海 28°C [1]，多云；北京 22°C [2]，晴。上海比北京更热。建议：上海穿短袖，北京带一件薄外套。"
    )
    assert {c.marker for c in result.citations} == {"[1]", "[2]"}
    assert [(g.figure, g.cited_by) for g in result.grounding] == [("28°C", "parley"), ("22°C", "parley")]


async def test_loop_final_citing_nothing_parley_can_attribute_is_repaired():
    tool = ScriptedTool("get_weather", weather_lookup)
    brain = replay(
        [
            {
                "calls": [
                    {"tool": "get_weather", "args": {"city": "上海"}},
                    {"tool": "get_weather", "args": {"city": "北京"}},
                ]
            },
            {"final": "上海比北京更热。建议：上海穿短袖，北京带一件薄外套。"},
            {"final": GOOD_FINAL},
        ]
    )
    agent, recorder = make_agent(brain, [tool])

    result = await agent.run(TWO_CITIES)

    rejected = recorder.of(FinalRejected)
    assert [r.by for r in rejected] == ["grounding"]
    assert "the answer cites no tool result" in rejected[0].gaps
    assert result.status is RunStatus.SOLVED
    assert {c.marker for c in result.citations} == {"[1]", "[2]"}


async def test_loop_invented_number_gets_one_repair_then_degrades():
    tool = ScriptedTool("get_weather", weather_lookup)
    invented = "上海 31°C [1]，北京 22°C [2]。上海比北京更热，建议穿短袖。"
    brain = replay(
        [
            {
                "calls": [
                    {"tool": "get_weather", "args": {"city": "上海"}},
                    {"tool": "get_weather", "args": {"city": "北京"}},
                ]
            },
            {"final": invented},
            {"final": invented},
        ]
    )
    agent, _ = make_agent(brain, [tool])

    result = await agent.run(TWO_CITIES)

    assert result.termination_reason is TerminationReason.UNGROUNDED_ANSWER
    assert "31" not in result.answer  # the degraded final repeats only what the tools established
    assert "28" in result.answer and "[1]" in result.answer


async def test_loop_three_parallel_calls_with_one_timeout_write_back_each():
    fast = ScriptedTool("get_weather", weather_lookup)
    slow = ScriptedTool("get_air_quality", [Hang(5)], timeout_s=0.1)
    brain = replay(
        [
            {
                "calls": [
                    {"tool": "get_weather", "args": {"city": "上海"}},
                    {"tool": "get_air_quality", "args": {"city": "上海"}},
                    {"tool": "get_weather", "args": {"city": "北京"}},
                ]
            },
            {"give_up": "air quality unavailable"},
        ]
    )
    agent, recorder = make_agent(brain, [fast, slow], config={"limits": {"max_auto_retries": 1}})

    await agent.run(TWO_CITIES)

    finished = recorder.of(ToolCallFinished)
    assert [f.tool_call_id for f in finished] == ["replay_1_1", "replay_1_2", "replay_1_3"]
    assert [f.ok for f in finished] == [True, False, True]
    assert finished[1].code == "TIMEOUT" and finished[1].level is ErrorLevel.L2  # retries exhausted → L2
    tool_messages = [m for m in agent_transcript(recorder)]
    assert tool_messages == ["replay_1_1", "replay_1_2", "replay_1_3"]


def agent_transcript(recorder) -> list[str]:
    return [e.tool_call_id for e in recorder.of(ToolCallFinished)]


async def test_loop_figure_written_straight_after_chinese_text_is_checked():
    tool = ScriptedTool("get_weather", weather_lookup)
    invented = "上海今天31°C，多云[1]。"
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}, {"final": invented}, {"final": invented}])
    agent, _ = make_agent(brain, [tool])

    result = await agent.run("上海天气怎么样？")

    assert result.termination_reason is TerminationReason.UNGROUNDED_ANSWER
    assert "31" not in result.answer
