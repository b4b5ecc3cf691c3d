"""ConsoleProgress shows a run from the trace events' typed fields: the calls asked for, each outcome with its
citation marker or its error code, level and message — as the model was shown them."""

from __future__ import annotations

import io

from agent import ToolError
from bot.cli.progress import ConsoleProgress
from tests.agent.toolbox import WEATHER, Hang, ScriptedTool, make_agent, replay

NOT_FOUND = ToolError("CITY_NOT_FOUND", "unknown city 上嗨", details={"did_you_mean": "上海"})


async def test_console_progress_shows_each_decision_and_outcome_from_the_events() -> None:
    tool = ScriptedTool("get_weather", [Hang(5), WEATHER["上海"], NOT_FOUND], timeout_s=0.1)
    brain = replay(
        [
            {"thought": "先查上海", "tool": "get_weather", "args": {"city": "上海"}},
            {"tool": "get_weather", "args": {"city": "上嗨"}},
            {"give_up": "北京 could not be looked up"},
        ]
    )
    agent, _ = make_agent(brain, [tool])
    shown = io.StringIO()

    await agent.run("上海和北京的天气", recorder=ConsoleProgress(shown))

    lines = [line.strip() for line in shown.getvalue().splitlines()]
    assert 'step 1: → get_weather(city="上海")  — 先查上海' in lines
    assert any(line.startswith("↻ get_weather TIMEOUT: retry 1 in 0.0") for line in lines)
    assert '✓ get_weather [1] {"city": "上海", "temp_c": 28, "condition": "多云"}' in lines
    assert 'step 2: → get_weather(city="上嗨")' in lines
    assert "✗ get_weather CITY_NOT_FOUND (L1): unknown city 上嗨" in lines
    assert "step 3: gives up: 北京 could not be looked up" in lines
