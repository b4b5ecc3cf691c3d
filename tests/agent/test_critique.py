"""Self-critique through the loop: the LLM critic can hold a final back; a broken critic leaves the rules."""

from agent import CritiqueVerdictMade, FinalRejected, RunStatus
from agent.critique import parse_verdict
from tests.agent.toolbox import ScriptedTool, make_agent, replay, weather_lookup

QUESTION = "上海天气怎么样？"
FETCH = {"tool": "get_weather", "args": {"city": "上海"}}


async def test_critique_llm_critic_can_reject_a_final_the_rules_accept():
    brain = replay(
        [FETCH, {"final": "上海 28°C [1]"}, {"final": "上海 28°C，多云 [1]"}],
        critiques=[
            {"satisfied": False, "gaps": ["say whether it is cloudy"], "next_action": "continue_react"},
            {"satisfied": True, "gaps": [], "next_action": "finalize"},
        ],
    )
    agent, recorder = make_agent(
        brain, [ScriptedTool("get_weather", weather_lookup)], config={"critique": {"llm": "always"}}
    )

    result = await agent.run(QUESTION)

    rejected = recorder.of(FinalRejected)
    assert [(r.by, r.gaps) for r in rejected] == [("critique", ["say whether it is cloudy"])]
    assert result.status is RunStatus.SOLVED and result.critique_rounds == 2


async def test_critique_llm_critic_is_asked_only_where_it_pays():
    satisfied = {"satisfied": True, "gaps": [], "next_action": "finalize"}
    simple = replay([FETCH, {"final": "上海 28°C [1]"}], critiques=[satisfied])
    agent, recorder = make_agent(simple, [ScriptedTool("get_weather", weather_lookup)])
    await agent.run(QUESTION)  # one city, nothing failed: the rules suffice, no LLM call is spent
    assert [v.source for v in recorder.of(CritiqueVerdictMade)] == ["rules"]

    misspelled = {"tool": "get_weather", "args": {"city": "上嗨"}}
    after_failure = replay([misspelled, FETCH, {"final": "上海 28°C [1]"}], critiques=[satisfied, satisfied])
    agent, recorder = make_agent(after_failure, [ScriptedTool("get_weather", weather_lookup)])
    await agent.run(QUESTION)  # a call failed on the way: the closing critic is asked too
    assert [(v.stage, v.source) for v in recorder.of(CritiqueVerdictMade)] == [
        ("in_step", "rules+llm"),
        ("closing", "rules+llm"),
    ]


async def test_critique_without_a_recorded_critic_uses_the_rules_alone():
    agent, recorder = make_agent(
        replay([FETCH, {"final": "上海 28°C [1]"}]), [ScriptedTool("get_weather", weather_lookup)]
    )

    result = await agent.run(QUESTION)

    assert result.status is RunStatus.SOLVED
    assert [v.source for v in recorder.of(CritiqueVerdictMade)] == ["rules"]


async def test_critique_can_be_switched_off():
    brain = replay([FETCH, {"final": "上海 28°C [1]"}], critiques=[{"satisfied": False, "gaps": ["never asked"]}])
    agent, recorder = make_agent(
        brain,
        [ScriptedTool("get_weather", weather_lookup)],
        config={"critique": {"closing": False, "in_step": "never"}},
    )

    result = await agent.run(QUESTION)

    assert result.status is RunStatus.SOLVED and result.critique_rounds == 0
    assert recorder.of(CritiqueVerdictMade) == []


def test_critique_verdict_parsing_is_tolerant_and_strict_about_shape():
    assert parse_verdict('Sure! {"satisfied": true, "gaps": []} hope that helps').satisfied is True
    assert parse_verdict('{"gaps": ["x"]}') is None  # `satisfied` is required
    assert parse_verdict("no json here") is None
