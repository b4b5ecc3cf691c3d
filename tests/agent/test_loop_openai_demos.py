"""The seeds' demos through the OpenAI-compatible brains: the same scripts as `config/demos/*.yaml`, but every
decision, plan and critique goes over HTTP to a fake `/v1/chat/completions` and the real tools answer."""

from __future__ import annotations

import json

import httpx
import pytest

from agent import (
    CritiqueVerdictMade,
    ErrorLevel,
    FinalRejected,
    PlanMade,
    RunStatus,
    TerminationReason,
)
from agent.grounding.figures import read_figures
from tests.agent.llm_agent import builtins, demo, demo_path, finished, llm_agent, tool_messages
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded


async def test_openai_loop_demo_a_recovers_from_the_spurious_unit_lookup(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    demo_a = demo("demo_a")
    llm = ScriptedLLM(demo_a.script, unrecorded=Unrecorded.SERVER_ERROR)  # everything it needs is recorded
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, demo_a.tools, http_client) as (agent, recorder):
        result = await agent.run(demo_a.question)

    assert result.status is RunStatus.SOLVED
    assert "564" in result.answer
    assert {c.tool for c in result.citations} == {"knowledge_lookup", "calculator"}
    assert result.brain == "openai:test-model" and result.replayed is False
    calls = finished(recorder)
    assert [c.tool_call_id for c in calls] == ["call_1", "call_2", "call_3", "call_4"]
    spurious = calls[3]
    assert spurious.arguments == {"key": "cost_per_satellite_musd_unit"}
    assert (spurious.ok, spurious.code, spurious.level) == (False, "NOT_FOUND", ErrorLevel.L1)
    in_step = [v for v in recorder.of(CritiqueVerdictMade) if v.stage == "in_step"]
    assert [(v.step, v.satisfied, v.source) for v in in_step] == [(4, False, "rules+llm")]
    # The model saw the failure (and the critic's gap) before it answered.
    last = llm.requests_of(RequestKind.DECIDE)[-1]
    assert tool_messages(last)[3] == ("call_4", json.loads(spurious.observation))
    assert any("spurious unit lookup" in m["content"] for m in last["messages"] if m["role"] == "system")
    # One company, one question: the rules plan it (no LLM call); the failed lookup makes the critic pay.
    assert recorder.of(PlanMade)[0].source == "rules"
    assert (llm.count(RequestKind.PLAN), llm.count(RequestKind.DECIDE), llm.count(RequestKind.CRITIQUE)) == (0, 5, 2)
    assert llm.count(RequestKind.UNKNOWN) == 0 and llm.decisions_left == 0


async def test_openai_loop_demo_b_gives_up_honestly_during_the_outage(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    demo_b = demo("demo_b")
    llm = ScriptedLLM(demo_b.script, unrecorded=Unrecorded.SERVER_ERROR)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, demo_b.tools, http_client) as (agent, recorder):
        result = await agent.run(demo_b.question)

    assert result.status is RunStatus.DEGRADED
    assert result.termination_reason is TerminationReason.GAVE_UP
    assert result.degraded is not None
    assert "search back-end kept failing (HTTP 503)" in result.degraded.explanation
    assert result.missing == ["A tool result that answers “What is Zephyr Labs' current market share?”"]
    assert result.citations == []
    codes = [(c.tool, c.code) for c in finished(recorder)]
    assert codes == [
        ("web_search", "UPSTREAM_DOWN"),
        ("knowledge_lookup", "NOT_FOUND"),
        ("web_search", "UPSTREAM_DOWN"),
        ("web_search", "UPSTREAM_DOWN"),
    ]
    # No market share was invented: no percentage, and every number was in the question or a tool's answer.
    assert "%" not in result.answer
    seen = demo_b.question + "".join(c.observation for c in finished(recorder))
    assert figures(result.answer) <= figures(seen)
    assert (llm.count(RequestKind.DECIDE), llm.count(RequestKind.CRITIQUE)) == (5, 2)  # critique rounds capped


async def test_openai_loop_weather_shanghai_only_final_is_rejected_and_the_run_continues(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    weather = demo("weather")
    llm = ScriptedLLM(weather.script, unrecorded=Unrecorded.SERVER_ERROR)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, weather.tools, http_client) as (agent, recorder):
        result = await agent.run(weather.question)

    rejected = recorder.of(FinalRejected)
    assert [(r.step, r.by) for r in rejected] == [(2, "done")]
    assert "Facts about 北京 obtained from a tool" in rejected[0].gaps  # one ask: the rules planned it
    assert "只回答了上海" in rejected[0].gaps  # the LLM critic's own gap joins the Done check's
    after_rejection = llm.requests_of(RequestKind.DECIDE)[2]
    quality_check = after_rejection["messages"][-1]
    assert quality_check["role"] == "system" and "Facts about 北京" in quality_check["content"]
    assert result.status is RunStatus.SOLVED
    assert [c.tool for c in result.citations] == ["get_weather", "get_weather", "calculator"]
    assert [c.arguments for c in result.citations][:2] == [{"city": " 上海"}, {"city": "北京"}]
    assert result.missing == []


async def test_json_react_loop_solves_demo_a(llm_server: FakeLLMServer, http_client: httpx.AsyncClient) -> None:
    demo_a = demo("demo_a")
    llm = ScriptedLLM.from_file(demo_path("demo_a"), unrecorded=Unrecorded.SERVER_ERROR, protocol="json_react")
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, demo_a.tools, http_client, protocol="json_react") as (agent, recorder):
        result = await agent.run(demo_a.question)

    assert result.status is RunStatus.SOLVED
    assert "564" in result.answer
    assert result.brain == "json_react:test-model"
    assert [c.tool_call_id for c in finished(recorder)] == ["jr_1", "jr_2", "jr_3", "jr_4"]
    assert all("tools" not in body for body in llm_server.chat_requests)
    last = llm.requests_of(RequestKind.DECIDE)[-1]
    observations = [m["content"] for m in last["messages"] if m["role"] == "user"]
    assert any(o.startswith("Observation for jr_4 (knowledge_lookup):") and "NOT_FOUND" in o for o in observations)
    assert (llm.count(RequestKind.PLAN), llm.count(RequestKind.DECIDE), llm.count(RequestKind.CRITIQUE)) == (0, 5, 2)


@pytest.mark.parametrize(
    ("unrecorded", "note"),
    [
        (Unrecorded.PROSE, "LLM planner answered something that is not a plan"),
        (Unrecorded.GARBAGE, "LLM planner answered something that is not a plan"),
        (Unrecorded.SERVER_ERROR, "LLM planner unavailable: the LLM is unavailable after 2 attempt(s): HTTP 500"),
    ],
)
async def test_openai_loop_planner_falls_back_to_rules(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient, unrecorded: Unrecorded, note: str
) -> None:
    script = {
        "decisions": [
            {
                "calls": [
                    {"tool": "get_weather", "args": {"city": "上海"}},
                    {"tool": "get_weather", "args": {"city": "北京"}},
                ]
            },
            {"final": "上海 28°C [1]，北京 22°C [2]。上海比北京高，建议上海穿短袖，北京带件外套。"},
        ]
    }
    llm = ScriptedLLM(script, unrecorded=unrecorded)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("get_weather"), http_client, done={"planner": "llm"}) as (
        agent,
        recorder,
    ):
        result = await agent.run("查上海和北京天气，对比并给穿衣建议。")

    plan = recorder.of(PlanMade)[0]
    assert plan.source == "rules"
    assert plan.note.startswith(note)
    assert [item.description for item in plan.items][:2] == [
        "Facts about 上海 obtained from a tool",
        "Facts about 北京 obtained from a tool",
    ]
    assert result.status is RunStatus.SOLVED  # the rules' checklist still guards the answer
    assert llm.count(RequestKind.PLAN) == (2 if unrecorded is Unrecorded.SERVER_ERROR else 1)


async def test_openai_loop_plan_naming_a_missing_tool_does_not_block_the_answer(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    demo_a = demo("demo_a")
    raw = demo_a.script.model_dump()
    raw["plan"] = [
        {**item, "tool": "knowledge_base"} if item.get("tool") == "knowledge_lookup" else item for item in raw["plan"]
    ]
    llm = ScriptedLLM(raw, unrecorded=Unrecorded.SERVER_ERROR)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, demo_a.tools, http_client) as (agent, recorder):
        result = await agent.run(demo_a.question)

    assert recorder.of(FinalRejected) == []
    assert result.status is RunStatus.SOLVED and "564" in result.answer


async def test_openai_loop_json_output_gets_one_repair_call(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    demo_a = demo("demo_a")
    schema = {
        "type": "object",
        "properties": {"total_musd": {"type": "number"}, "sources": {"type": "array", "items": {"type": "string"}}},
        "required": ["total_musd", "sources"],
    }
    decisions = [d.model_dump(exclude_defaults=True) for d in demo_a.script.decisions[:3]]
    script = {
        "plan": demo_a.script.plan,
        "decisions": [*decisions, {"final": '{"answer": "Zephyr Labs spent 564 million USD [3]."}'}],
        "repairs": ['{"total_musd": 564, "sources": ["[3]"]}'],
    }
    llm = ScriptedLLM(script, unrecorded=Unrecorded.PROSE)  # the closing critic answers prose: rules only
    llm_server.respond_with(llm)

    output = {"format": "json", "schema": schema}
    async with llm_agent(llm_server.base_url, demo_a.tools, http_client, output=output) as (agent, recorder):
        result = await agent.run(demo_a.question)

    assert [r.by for r in recorder.of(FinalRejected)] == ["output"]
    assert result.status is RunStatus.SOLVED
    assert json.loads(result.answer) == {"total_musd": 564, "sources": ["[3]"]}
    repair = llm.requests_of(RequestKind.REPAIR)
    assert len(repair) == 1 and repair[0]["messages"][-1]["content"].startswith('{"answer"')


def figures(text: str) -> set:
    return {figure.value for figure in read_figures(text)}
