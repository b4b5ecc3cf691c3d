"""Done is ticked by tool results only: an answer that says part of the question could not be answered ends
partial, with what was found kept, cited and quoted — never `solved` because its own words name the missing
city. Through the OpenAI-compatible brain, with `get_weather` a declared HTTP tool whose 深圳 never answers."""

from __future__ import annotations

import httpx

from agent import DoneItemTicked, RunStatus, TerminationReason
from tests.agent.llm_agent import llm_agent
from tests.agent.weather_api import ENV, weather_entry
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.scripted_llm import ScriptedLLM, Unrecorded

QUESTION = "What is the weather in 上海, 北京 and 深圳 right now?"
THREE = [{"tool": "get_weather", "args": {"city": city}} for city in ("上海", "北京", "深圳")]
LENIENT_CRITIC = {"satisfied": True, "gaps": [], "next_action": "finalize"}


def routes(http_api: FakeHttpApi) -> None:
    http_api.route("/v1/current/上海", ApiReply.with_json({"city": "上海", "temp_c": 28, "condition": "cloudy"}))
    http_api.route("/v1/current/北京", ApiReply.with_json({"city": "北京", "temp_c": 16, "condition": "sunny"}))
    http_api.route("/v1/current/深圳", ApiReply.with_json({"city": "深圳", "temp_c": 30}).after(30))  # hangs


async def run(llm_server: FakeLLMServer, http_api: FakeHttpApi, http: httpx.AsyncClient, final: str):
    routes(http_api)
    # A weak model: asked again, it writes the same answer.
    script = {"decisions": [{"calls": THREE}, *[{"final": final}] * 3], "critiques": [LENIENT_CRITIC] * 6}
    llm_server.respond_with(ScriptedLLM(script, unrecorded=Unrecorded.PROSE))
    tools = [weather_entry(http_api.base_url, timeout_s=0.2)]
    async with llm_agent(llm_server.base_url, tools, http, env=ENV, limits={"max_auto_retries": 2}) as (
        agent,
        recorder,
    ):
        return await agent.run(QUESTION), recorder


async def test_answer_naming_a_city_no_tool_returned_never_ticks_it_and_ends_partial(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    final = "Shanghai 28°C, Beijing 16°C (source: get_weather); Shenzhen could not be fetched."

    result, recorder = await run(llm_server, http_api, http_client, final)

    assert result.status is RunStatus.DEGRADED and result.termination_reason is TerminationReason.GAVE_UP
    assert result.missing == ["Facts about 深圳 obtained from a tool"]
    assert result.completed == ["Facts about 上海 obtained from a tool", "Facts about 北京 obtained from a tool"]
    ticked = [event.item for event in recorder.of(DoneItemTicked)]
    assert all("深圳" not in item for item in ticked)  # the answer's words are no evidence
    assert result.degraded is not None
    # What was found is kept, cited (by Parley: the answer only named the tool) and quoted.
    assert result.degraded.verified == [
        "Shanghai 28°C [1], Beijing 16°C [2] (source: get_weather); Shenzhen could not be fetched."
    ]
    assert [c.marker for c in result.citations] == ["[1]", "[2]"]
    assert "深圳" in result.degraded.explanation and "TIMEOUT" in result.degraded.explanation
    assert result.steps == 2  # the calls, then the answer: no round of repairs for a city no tool returned


async def test_answer_giving_a_missing_city_anothers_figure_is_never_solved(
    llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    # 深圳 "16°C" is 北京's reading: no result about 深圳 backs it, and 北京's result is about 北京.
    final = "Shanghai 28°C, Beijing 16°C and Shenzhen 16°C (source: get_weather)."

    result, recorder = await run(llm_server, http_api, http_client, final)

    assert result.status is not RunStatus.SOLVED
    assert "深圳" in " ".join(result.missing)
    assert all("深圳" not in event.item for event in recorder.of(DoneItemTicked))
