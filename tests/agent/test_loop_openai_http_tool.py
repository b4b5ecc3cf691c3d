"""Seed 000's 'Problem Scenario' through the OpenAI-compatible brain: decisions come over HTTP from a fake
`/v1/chat/completions`, and `get_weather` is a declared HTTP tool (DESIGN.md's `HttpToolEntry`) calling a
fake weather API. Each test asserts on what the model was sent back, not only on the trace."""

from __future__ import annotations

import asyncio
import json

import httpx

from agent import ErrorLevel, FinalRejected, OutcomeKind, RetryScheduled, RunStatus, TerminationReason
from tests.agent.llm_agent import builtins, finished, llm_agent, tool_messages
from tests.agent.toolbox import eventually
from tests.agent.weather_api import ENV, SECRET, weather_entry
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded

TWO_CITIES = "查上海和北京天气，对比并给穿衣建议。"
PLAN = [
    {"description": "已获取上海天气（来自 tool）", "tool": "get_weather", "mentions": ["上海"]},
    {"description": "已获取北京天气（来自 tool）", "tool": "get_weather", "mentions": ["北京"]},
    {"description": "回答中包含两城对比", "kind": "answer", "answer_terms": ["对比", "比", "高", "低", "更"]},
    {"description": "回答中包含穿衣建议", "kind": "answer", "answer_terms": ["穿", "建议", "外套"]},
]
GOOD_FINAL = "上海 28°C，多云 [1]；北京 22°C，晴 [2]。上海比北京更热。建议：上海穿短袖，北京带一件薄外套。"
SHANGHAI = ApiReply.with_json({"city": "上海", "temp_c": 28, "condition": "多云"})
BEIJING = ApiReply.with_json({"city": "北京", "temp_c": 22, "condition": "晴"})
CITY_NOT_FOUND = ApiReply.with_json(
    {"error": {"code": "CITY_NOT_FOUND", "message": "unknown city", "did_you_mean": "上海"}}, status=404
)


def weather(city: str) -> dict:
    return {"tool": "get_weather", "args": {"city": city}}


def serve(llm_server: FakeLLMServer, script: dict) -> ScriptedLLM:
    """Critiques are not recorded here: the critic answers prose and the rules decide alone."""
    llm = ScriptedLLM(script, unrecorded=Unrecorded.PROSE)
    llm_server.respond_with(llm)
    return llm


def agent_for(llm_server: FakeLLMServer, http_api: FakeHttpApi, http: httpx.AsyncClient, **config):
    timeout_s = config.pop("timeout_s", 5.0)
    tools = [weather_entry(http_api.base_url, timeout_s=timeout_s), *builtins("calculator")]
    return llm_agent(llm_server.base_url, tools, http, env=ENV, **config)


async def test_openai_loop_html_page_with_200_is_a_bad_response(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    page = "<!DOCTYPE html><html><body>" + "<p>Weather portal</p>" * 20_000 + "</body></html>"
    http_api.route("/v1/current/上海", ApiReply.with_bytes(page.encode(), content_type="text/html"))
    llm = serve(llm_server, {"decisions": [weather("上海"), {"give_up": "the weather service is broken"}]})

    async with agent_for(llm_server, http_api, http_client) as (agent, recorder):
        result = await agent.run("上海天气怎么样？")

    [(call_id, observation)] = tool_messages(llm.requests_of(RequestKind.DECIDE)[1])
    assert call_id == "call_1"
    assert observation["ok"] is False and observation["error"]["code"] == "BAD_RESPONSE"
    assert observation["suggested_action"] == "switch_tool"  # the grading table's for BAD_RESPONSE
    assert "fallback_tools" not in observation  # get_weather declares no fallbacks: none is made up
    assert "Weather portal" not in json.dumps(llm_server.chat_requests)  # the page never reaches the model
    assert (finished(recorder)[0].code, finished(recorder)[0].level) == ("BAD_RESPONSE", ErrorLevel.L2)
    assert result.status is RunStatus.DEGRADED and result.termination_reason is TerminationReason.GAVE_UP
    assert SECRET not in json.dumps(llm_server.chat_requests, ensure_ascii=False)
    assert http_api.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_openai_loop_ok_false_with_200_is_a_failure(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上嗨", ApiReply.with_json({"ok": False}))
    llm = serve(llm_server, {"decisions": [weather("上嗨"), {"give_up": "the city is unknown"}]})

    async with agent_for(llm_server, http_api, http_client) as (agent, recorder):
        result = await agent.run("上嗨天气怎么样？")

    [(call_id, observation)] = tool_messages(llm.requests_of(RequestKind.DECIDE)[1])
    assert call_id == "call_1" and observation["ok"] is False
    assert "data" not in observation
    assert finished(recorder)[0].ok is False
    assert result.status is RunStatus.DEGRADED


async def test_openai_loop_timeout_is_retried_then_city_not_found_is_not(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上嗨", ApiReply.with_json({"city": "上嗨"}).after(30))
    llm = serve(llm_server, {"decisions": [weather("上嗨"), {"give_up": "unknown city"}]})

    async with agent_for(llm_server, http_api, http_client, timeout_s=0.5) as (agent, recorder):
        run = asyncio.create_task(agent.run("上嗨天气怎么样？"))
        await eventually(lambda: len(http_api.requests) == 1)
        http_api.route("/v1/current/上嗨", CITY_NOT_FOUND)  # the retry finds the API answering again
        result = await run

    assert len(http_api.requests) == 2  # the timeout retried once; CITY_NOT_FOUND (L1) not retried at all
    call = finished(recorder)[0]
    assert [a.code for a in call.attempts] == ["TIMEOUT", "CITY_NOT_FOUND"]
    assert [(r.attempt, r.code) for r in recorder.of(RetryScheduled)] == [(1, "TIMEOUT")]
    [(_, observation)] = tool_messages(llm.requests_of(RequestKind.DECIDE)[1])
    assert observation["error"]["code"] == "CITY_NOT_FOUND" and observation["error"]["retryable"] is False
    assert observation["suggested_action"] == "retry_with_pinyin"
    assert result.retries == 1


async def test_openai_loop_five_identical_misspelled_calls_stop_at_the_threshold(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上嗨", CITY_NOT_FOUND)
    llm = serve(llm_server, {"decisions": [weather("上嗨")] * 5 + [{"final": "unused"}]})

    async with agent_for(llm_server, http_api, http_client) as (agent, _):
        result = await agent.run("上嗨天气怎么样？")

    assert result.termination_reason is TerminationReason.REPEAT_SAME_ERROR
    assert result.outcome is OutcomeKind.ESCALATED
    assert len(http_api.requests) == 2  # the brake, not five calls and not max_steps
    assert llm.count(RequestKind.DECIDE) == 2 and llm.decisions_left == 4
    assert "CITY_NOT_FOUND" in result.answer


async def test_openai_loop_final_without_citations_is_cited_by_parley(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上海", SHANGHAI)
    http_api.route("/v1/current/北京", BEIJING)
    uncited = GOOD_FINAL.replace(" [1]", "").replace(" [2]", "")
    script = {"plan": PLAN, "decisions": [{"calls": [weather("上海"), weather("北京")]}, {"final": uncited}]}
    llm = serve(llm_server, script)

    async with agent_for(llm_server, http_api, http_client) as (agent, recorder):
        result = await agent.run(TWO_CITIES)

    assert recorder.of(FinalRejected) == []
    assert result.status is RunStatus.SOLVED
    assert result.answer.startswith("上海 28°C [1]，多云；北京 22°C [2]，晴。")
    assert [(c.marker, c.tool_call_id) for c in result.citations] == [("[1]", "call_1"), ("[2]", "call_2")]
    assert all(g.cited_by == "parley" and "cited by Parley" in g.how for g in result.grounding)
    assert llm.count(RequestKind.DECIDE) == 2  # no repair round: nothing was left to attribute


async def test_openai_loop_three_parallel_calls_with_one_timeout_write_back_each(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上海", SHANGHAI)
    http_api.route("/v1/current/广州", ApiReply.with_json({"city": "广州"}).after(30))
    http_api.route("/v1/current/北京", BEIJING)
    script = {
        "decisions": [{"calls": [weather("上海"), weather("广州"), weather("北京")]}, {"give_up": "广州 timed out"}]
    }
    llm = serve(llm_server, script)

    async with agent_for(llm_server, http_api, http_client, timeout_s=0.3, limits={"max_auto_retries": 1}) as (
        agent,
        recorder,
    ):
        await agent.run("查上海、广州和北京的天气。")

    assert sorted(r.path for r in http_api.requests) == sorted(
        ["/v1/current/上海", "/v1/current/北京"] + ["/v1/current/广州"] * 2
    )
    received = llm.requests_of(RequestKind.DECIDE)[1]
    assistant = next(m for m in received["messages"] if m.get("tool_calls"))
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2", "call_3"]
    written_back = tool_messages(received)
    assert [(call_id, o["ok"]) for call_id, o in written_back] == [
        ("call_1", True),
        ("call_2", False),
        ("call_3", True),
    ]
    assert written_back[0][1]["data"]["city"] == "上海" and written_back[2][1]["data"]["city"] == "北京"
    assert written_back[1][1]["error"]["code"] == "TIMEOUT"
    assert written_back[1][1]["error"]["level"] == "L2"  # retries exhausted: switch path
    assert [(c.tool_call_id, c.retries) for c in finished(recorder)] == [("call_1", 0), ("call_2", 1), ("call_3", 0)]


async def test_openai_loop_transient_outage_is_retried_within_the_step_and_the_value_kept(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    down = ApiReply.with_json({"message": "service unavailable"}, status=503, headers={"Retry-After": "0"})
    http_api.route("/v1/current/上海", down, ApiReply(status=502), SHANGHAI)
    llm = serve(llm_server, {"decisions": [weather("上海"), {"final": "上海 28°C，多云 [1]。"}]})

    async with agent_for(llm_server, http_api, http_client) as (agent, recorder):
        result = await agent.run("上海天气怎么样？")

    assert result.status is RunStatus.SOLVED and result.answer == "上海 28°C，多云 [1]。"
    assert len(http_api.requests) == 3 and result.retries == 2 and result.steps == 2
    assert [(r.attempt, r.code) for r in recorder.of(RetryScheduled)] == [(1, "UPSTREAM_DOWN"), (2, "UPSTREAM_DOWN")]
    [(_, observation)] = tool_messages(llm.requests_of(RequestKind.DECIDE)[1])
    assert observation["ok"] is True  # the model only ever saw the value


async def test_openai_loop_outage_that_lasts_is_graded_l2_after_the_retries(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/current/上海", ApiReply(status=503))
    serve(llm_server, {"decisions": [weather("上海"), {"give_up": "the weather service is down"}]})

    async with agent_for(llm_server, http_api, http_client) as (agent, recorder):
        result = await agent.run("上海天气怎么样？")

    assert result.status is RunStatus.DEGRADED and result.termination_reason is TerminationReason.GAVE_UP
    assert len(http_api.requests) == 3  # the first try and max_auto_retries (2)
    [call] = finished(recorder)
    assert (call.code, call.level, call.retries) == ("UPSTREAM_DOWN", ErrorLevel.L2, 2)
    assert "automatic retries exhausted" in json.loads(call.observation)["error"]["message"]
