"""Fallbacks through the loop: when a tool's path is down, the model is pointed only to that tool's declared
`fallbacks:` that it may try on its own — never to a tool that acts or that a policy holds.

The user's scenario: six tools, `transfer_funds` held by a policy, `create_ticket` marked `acting: true`,
and `get_weather` timing out on every try (L0 retries exhausted → L2)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent import CritiqueVerdictMade, ErrorLevel, ToolCallFinished, ToolError
from tests.agent.toolbox import ScriptedTool, make_agent, replay

QUESTION = "What's the weather in Paris right now?"
WEATHER_CALL = {"tool": "get_weather", "args": {"city": "Paris"}}
GIVE_UP = {"give_up": "the weather service does not answer"}
TIMED_OUT = {
    "ok": False,
    "error": {
        "code": "TIMEOUT",
        "message": "get_weather gave no answer within 1s (tried 3 times; automatic retries exhausted)",
        "retryable": True,
        "level": "L2",
    },
}
NO_FALLBACK_ADVICE = "no fallback is offered; try another way or give up"
POLICIES = [
    {"tool": "transfer_funds", "requires_approval": True},
    {"tool": "knowledge_lookup", "hold_when": [{"argument": "key", "matches": "salary"}]},  # holds some calls
]


def entry(name: str, **keys: Any) -> dict[str, Any]:
    """The `tools:` entry the loop reads `fallbacks` and `acting` from (the tool itself is a ScriptedTool)."""
    return {"name": name, "description": f"the team's {name}", "http": {"url": f"http://tools.internal/{name}"}, **keys}


def team(*, weather_fallbacks: Sequence[str] = (), web_search: Sequence[Any] = ("results",)) -> tuple[Any, ...]:
    """The six tools of the user's report, `get_weather` timing out every time, and their configuration."""
    weather = ScriptedTool("get_weather", [TimeoutError()])
    others = [ScriptedTool(name, ["done"]) for name in ("calculator", "knowledge_lookup", "create_ticket")]
    others += [ScriptedTool("transfer_funds", ["sent"]), ScriptedTool("web_search", list(web_search))]
    config = {
        "tools": [
            entry("get_weather", fallbacks=list(weather_fallbacks)),
            entry("calculator"),
            entry("knowledge_lookup"),
            entry("create_ticket", acting=True),
            entry("transfer_funds"),
            entry("web_search"),
        ],
        "policies": POLICIES,
    }
    return [weather, *others], config


def weather_observation(recorder: Any) -> dict[str, Any]:
    [finished] = [event for event in recorder.of(ToolCallFinished) if event.tool == "get_weather"]
    assert (finished.code, finished.level, finished.retries) == ("TIMEOUT", ErrorLevel.L2, 2)
    return dict(json.loads(finished.observation))


def weather_gap(recorder: Any) -> str:
    verdict = recorder.of(CritiqueVerdictMade)[-1]
    return next(gap for gap in verdict.gaps if gap.startswith("get_weather failed"))


async def test_fallbacks_none_declared_offers_no_tool_after_timeouts():
    tools, config = team()
    agent, recorder = make_agent(replay([WEATHER_CALL, GIVE_UP]), tools, config=config)

    await agent.run(QUESTION)

    assert weather_observation(recorder) == TIMED_OUT  # no suggested_action, no fallback_tools
    assert weather_gap(recorder) == "get_weather failed with TIMEOUT (L2): " + NO_FALLBACK_ADVICE
    assert recorder.of(CritiqueVerdictMade)[-1].next_action == "continue_react"
    assert all(not tool.calls for tool in tools[1:])


async def test_fallbacks_declared_are_offered_after_timeouts():
    tools, config = team(weather_fallbacks=["web_search", "calculator"])
    agent, recorder = make_agent(replay([WEATHER_CALL, GIVE_UP]), tools, config=config)

    await agent.run(QUESTION)

    assert weather_observation(recorder) == {
        **TIMED_OUT,
        "suggested_action": "switch_tool",
        "fallback_tools": ["web_search", "calculator"],
    }
    assert weather_gap(recorder) == "get_weather failed with TIMEOUT (L2): switch to web_search, calculator"
    assert recorder.of(CritiqueVerdictMade)[-1].next_action == "switch_tool"


async def test_fallbacks_acting_held_and_unknown_tools_are_never_offered():
    # build_tools refuses this configuration at start; an Agent given it anyway still never offers them.
    declared = ["transfer_funds", "create_ticket", "knowledge_lookup", "search_v2", "get_weather"]
    tools, config = team(weather_fallbacks=declared)
    agent, recorder = make_agent(replay([WEATHER_CALL, GIVE_UP]), tools, config=config)

    await agent.run(QUESTION)

    assert weather_observation(recorder) == TIMED_OUT
    assert weather_gap(recorder).endswith(NO_FALLBACK_ADVICE)


async def test_fallbacks_disabled_in_this_run_are_not_offered():
    tools, config = team(weather_fallbacks=["web_search", "calculator"], web_search=[ToolError("FORBIDDEN", "no")])
    search = {"tool": "web_search", "args": {"query": "Paris weather"}}
    agent, recorder = make_agent(replay([search, WEATHER_CALL, GIVE_UP]), tools, config=config)

    await agent.run(QUESTION)

    assert weather_observation(recorder) == {
        **TIMED_OUT,
        "suggested_action": "switch_tool",
        "fallback_tools": ["calculator"],
    }
