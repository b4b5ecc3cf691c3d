"""One real run for each kind of end (`OutcomeKind`): the engine with a replay brain and scripted tools."""

from __future__ import annotations

from collections.abc import Callable

from agent import Agent, OutcomeKind, ToolError
from tests.agent.toolbox import ScriptedTool, make_agent, replay, weather_lookup

TRANSFER = {"amount": 1500, "recipient": "ops@vendor.example", "memo": "invoice 42"}


def answered() -> tuple[Agent, str]:
    brain = replay(
        [{"tool": "get_weather", "args": {"city": "上海"}}, {"final": "上海今天 28°C，多云 [1]。"}],
    )
    agent, _ = make_agent(brain, [ScriptedTool("get_weather", weather_lookup)])
    return agent, "上海今天天气怎么样？"


def held() -> tuple[Agent, str]:
    brain = replay([{"tool": "transfer_funds", "args": TRANSFER}, {"final": "The transfer was sent [1]."}])
    tool = ScriptedTool("transfer_funds", [{"transfer_id": "T-77", "sent": True}])
    policies = [{"tool": "transfer_funds", "hold_when": [{"argument": "amount", "above": 1000}]}]
    agent, _ = make_agent(brain, [tool], config={"policies": policies})
    return agent, "please send 1500 eur to the vendor for invoice 42"


def refused() -> tuple[Agent, str]:
    refusal = ToolError("POLICY_VIOLATION", "transfers above 1000 need a second approver")
    brain = replay([{"tool": "transfer", "args": {"amount": 5000, "to": "bob"}}, {"final": "unused"}])
    agent, _ = make_agent(brain, [ScriptedTool("transfer", [refusal])])
    return agent, "Send 5000 to bob"


def escalated() -> tuple[Agent, str]:
    # The weather is read, then the model is gone (the script runs out): llm_unavailable, which goes to people.
    brain = replay([{"tool": "get_weather", "args": {"city": "上海"}}])
    agent, _ = make_agent(brain, [ScriptedTool("get_weather", weather_lookup)])
    return agent, "上海和北京今天哪个更热？"


def partial() -> tuple[Agent, str]:
    down = ToolError("UPSTREAM_DOWN", "503 from search")
    brain = replay(
        [
            {"tool": "web_search", "args": {"query": "Zephyr Labs market share"}},
            {"give_up": "The search back-end kept failing (HTTP 503)."},
        ]
    )
    agent, _ = make_agent(brain, [ScriptedTool("web_search", [down])])
    return agent, "What is Zephyr Labs' current market share?"


RUNS: dict[OutcomeKind, Callable[[], tuple[Agent, str]]] = {
    OutcomeKind.ANSWERED: answered,
    OutcomeKind.HELD: held,
    OutcomeKind.REFUSED: refused,
    OutcomeKind.ESCALATED: escalated,
    OutcomeKind.PARTIAL: partial,
}
