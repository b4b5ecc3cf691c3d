"""Grounding through the loop: how an accepted answer's figures are backed, what a failed draft leaves the
asker, and the narrow door for messages that ask for no facts."""

from __future__ import annotations

from agent import GroundingRule, PlanMade, RunStatus, TerminationReason
from tests.agent.toolbox import ScriptedTool, make_agent, replay

WEATHER = {"Shanghai": {"city": "上海", "temp_c": 28, "condition": "cloudy"}, "Beijing": {"temp_c": 16}}


def weather_tool() -> ScriptedTool:
    return ScriptedTool("get_weather", lambda args: WEATHER[args["city"]])


def both_cities() -> dict:
    return {
        "calls": [
            {"tool": "get_weather", "args": {"city": "Shanghai"}},
            {"tool": "get_weather", "args": {"city": "Beijing"}},
        ]
    }


async def test_loop_accepted_answer_says_how_each_figure_is_grounded():
    final = "Shanghai is at 28 °C [1] and Beijing at 16 °C [2]. So Shanghai is 12 degrees warmer."
    agent, _ = make_agent(replay([both_cities(), {"final": final}]), [weather_tool()])

    result = await agent.run("How much warmer is Shanghai than Beijing?")

    assert result.status is RunStatus.SOLVED and result.answer == final
    assert [(g.figure, g.rule, g.sources) for g in result.grounding] == [
        ("28 °C", GroundingRule.EXACT, ["[1]"]),
        ("16 °C", GroundingRule.EXACT, ["[2]"]),
        ("12 degrees", GroundingRule.DERIVED, ["[1]", "[2]"]),
    ]
    assert result.grounding[2].how == "12 = 28 °C − 16 °C from [1], [2]"


async def test_loop_partial_answer_keeps_verified_sentences_and_never_shows_the_failed_figure():
    wrong = "Shanghai is at 28 °C and cloudy [1]. Beijing is at 19 °C [2]."
    agent, _ = make_agent(replay([both_cities(), {"final": wrong}, {"final": wrong}]), [weather_tool()])

    result = await agent.run("What's the weather in Shanghai and Beijing?")

    assert result.termination_reason is TerminationReason.UNGROUNDED_ANSWER
    assert result.degraded is not None
    assert result.degraded.verified == ["Shanghai is at 28 °C and cloudy [1]."]
    assert result.degraded.unchecked == [
        "Beijing is at [not backed by any result] [2]. — a figure matches no tool result"
    ]
    assert "19" not in result.answer
    assert "Shanghai is at 28 °C and cloudy [1]." in result.answer
    assert result.degraded.explanation == (
        "one statement of my answer is not backed by any tool result, so it is not shown as fact"
    )
    # Beijing's own result is listed with its facts: the run confirmed them even though the draft misquoted them.
    assert result.degraded.known_facts == ["get_weather(city: Beijing): temp_c: 16 [2]"]
    assert "problem(s)" not in result.answer and "repair round" not in result.answer


async def test_loop_thanks_gets_a_plain_reply_without_tools_or_an_llm_plan():
    agent, recorder = make_agent(replay([{"final": "You're welcome — happy to help!"}]), [weather_tool()])

    result = await agent.run("Thanks, that's exactly what I needed!")

    assert result.status is RunStatus.SOLVED and result.answer == "You're welcome — happy to help!"
    assert result.tool_calls == 0 and result.llm_calls == 1
    [plan] = recorder.of(PlanMade)
    assert (plan.source, plan.items) == ("rules", [])


async def test_loop_factual_question_never_takes_the_small_talk_door():
    invented = "Hi! It's sunny in Paris today."
    agent, _ = make_agent(replay([{"final": invented}] * 4), [weather_tool()])

    result = await agent.run("hi, how's the weather in paris?")

    assert result.status is not RunStatus.SOLVED
    assert invented not in result.answer


async def test_loop_small_talk_reply_may_not_state_figures_either():
    agent, _ = make_agent(replay([{"final": "Hi! I answered 42 questions today."}] * 3), [weather_tool()])

    result = await agent.run("Hi there!")

    assert result.status is not RunStatus.SOLVED and "42" not in result.answer
