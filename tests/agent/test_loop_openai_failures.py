"""An LLM that is down, slow to admit requests, or answers garbage — and a model that calls tools badly.
Every case ends in a bounded, honest outcome through the real client, brain and tools; nothing raises."""

from __future__ import annotations

import socket

import httpx
import pytest

from agent import LLMRetry, OutcomeKind, PlanMade, RunStatus, TerminationReason
from agent.wording import INVALID_REPLY
from tests.agent.llm_agent import builtins, finished, llm_agent, tool_messages
from tests.fakes.llm_server import FakeLLMServer, FakeReply, chat_completion
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded, classify

QUESTION = "What is 47 * 12?"
SOLVES_IT = {
    "decisions": [
        {"tool": "calculator", "args": {"expression": "47 * 12"}},
        {"final": "47 × 12 = 564 [1]."},
    ]
}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_openai_loop_llm_answering_503_every_time_ends_llm_unavailable(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "the model is overloaded"))

    async with llm_agent(
        llm_server.base_url, builtins("calculator"), http_client, max_retries=2, done={"planner": "llm"}
    ) as (agent, recorder):
        result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.LLM_UNAVAILABLE
    assert result.outcome is OutcomeKind.ESCALATED and result.steps == 1
    assert "after 3 attempt(s): HTTP 503: the model is overloaded" in result.answer
    assert [classify(body) for body in llm_server.chat_requests] == [RequestKind.PLAN] * 3 + [RequestKind.DECIDE] * 3
    assert recorder.of(PlanMade)[0].source == "rules"


async def test_openai_loop_llm_refusing_connections_ends_llm_unavailable(http_client: httpx.AsyncClient) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"

    async with llm_agent(base_url, builtins("calculator"), http_client, max_retries=1, done={"planner": "llm"}) as (
        agent,
        recorder,
    ):
        result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.LLM_UNAVAILABLE
    assert result.outcome is OutcomeKind.ESCALATED
    assert "ConnectError" in result.answer and result.tool_calls == 0
    assert recorder.of(PlanMade)[0].note.startswith("LLM planner unavailable")


async def test_openai_loop_rate_limit_with_retry_after_is_honoured(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    llm = ScriptedLLM(SOLVES_IT, unrecorded=Unrecorded.PROSE)
    llm.inject(RequestKind.DECIDE, FakeReply.with_status(429, "slow down", headers={"Retry-After": "0.3"}))
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("calculator"), http_client, backoff_max_s=1.0) as (agent, _):
        result = await agent.run(QUESTION)

    assert result.status is RunStatus.SOLVED and "564" in result.answer
    decide = [r for r in llm_server.requests if classify(r.json) is RequestKind.DECIDE]
    assert len(decide) == 3  # the rate-limited request, its retry, and the request after the tool call
    assert decide[0].json == decide[1].json  # the same request, sent again
    assert decide[1].received_at - decide[0].received_at >= 0.25  # the backoff alone would wait 0.01 s at most


async def test_openai_loop_llm_retry_is_recorded_in_the_trace(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    llm = ScriptedLLM(SOLVES_IT, unrecorded=Unrecorded.PROSE)
    llm.inject(RequestKind.DECIDE, FakeReply.with_status(429, "slow down", headers={"Retry-After": "0"}))
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("calculator"), http_client) as (agent, recorder):
        result = await agent.run(QUESTION)

    assert result.status is RunStatus.SOLVED
    assert [(e.attempt, e.problem.startswith("HTTP 429")) for e in recorder.of(LLMRetry)] == [(1, True)]


@pytest.mark.parametrize(
    "reply",
    [
        FakeReply.with_bytes(b"\x00\xff<html>upstream proxy error</html>"),
        FakeReply.with_json({"id": "chatcmpl-fake", "object": "chat.completion", "choices": []}),
        FakeReply.with_json(chat_completion({"role": "assistant", "content": None}, finish_reason="length")),
    ],
    ids=["non_json_bytes", "empty_choices", "no_content"],
)
async def test_openai_loop_garbage_every_time_ends_bounded(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient, reply: FakeReply
) -> None:
    llm_server.respond_with(lambda body: reply)

    async with llm_agent(llm_server.base_url, builtins("calculator"), http_client, done={"planner": "llm"}) as (
        agent,
        recorder,
    ):
        result = await agent.run(QUESTION)

    assert result.outcome is OutcomeKind.ESCALATED
    assert result.termination_reason is TerminationReason.REPEAT_SAME_ERROR
    assert result.steps <= agent.config.limits.max_steps and result.tool_calls == 0
    kinds = [classify(body) for body in llm_server.chat_requests]
    assert kinds == [RequestKind.PLAN, RequestKind.DECIDE, RequestKind.DECIDE]
    told = llm_server.chat_requests[2]["messages"][-1]
    assert told["role"] == "system" and told["content"].startswith(INVALID_REPLY.split("{")[0])
    assert "INVALID_RESPONSE" in told["content"]
    assert recorder.of(PlanMade)[0].source == "rules"


async def test_openai_loop_invalid_json_arguments_are_shown_to_the_model(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    script = {
        "decisions": [
            {"tool": "calculator", "args": '{"expression": "47 * 12"'},  # cut off: not valid JSON
            *SOLVES_IT["decisions"],
        ]
    }
    llm = ScriptedLLM(script, unrecorded=Unrecorded.PROSE)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("calculator"), http_client) as (agent, recorder):
        result = await agent.run(QUESTION)

    received = llm.requests_of(RequestKind.DECIDE)[1]
    [(call_id, observation)] = tool_messages(received)
    assert call_id == "call_1"
    assert observation["error"]["code"] == "INVALID_ARGS" and observation["error"]["level"] == "L1"
    assert "not valid JSON" in observation["error"]["message"]
    echoed = next(m for m in received["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert echoed["function"]["arguments"] == "{}"  # never the broken JSON: some servers reject it with a 400
    assert finished(recorder)[0].raw == '{"expression": "47 * 12"'
    assert result.status is RunStatus.SOLVED and "564" in result.answer


async def test_openai_loop_unknown_tool_is_an_l3_observation(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    script = {
        "decisions": [
            {"tool": "get_wether", "args": {"city": "上海"}},
            {"tool": "get_weather", "args": {"city": "上海"}},
            {"final": "上海 28°C [1]。"},
        ]
    }
    llm = ScriptedLLM(script, unrecorded=Unrecorded.PROSE)
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("get_weather", "calculator"), http_client) as (agent, recorder):
        result = await agent.run("上海天气怎么样？")

    decide = llm.requests_of(RequestKind.DECIDE)
    [(call_id, observation)] = tool_messages(decide[1])
    assert call_id == "call_1" and finished(recorder)[0].tool == "get_wether"
    assert (observation["error"]["code"], observation["error"]["level"]) == ("UNKNOWN_TOOL", "L3")
    assert "get_weather" in observation["error"]["message"]
    offered = [t["function"]["name"] for t in decide[1]["tools"]]
    assert offered == ["get_weather", "calculator", "give_up"]  # a misspelt name disables nothing; give_up is offered
    assert result.status is RunStatus.SOLVED
    assert [c.tool_call_id for c in result.citations] == ["call_2"]


async def test_openai_loop_call_ids_reused_across_turns_keep_facts_apart(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    script = {
        "decisions": [
            {"tool": "get_weather", "args": {"city": "上海"}},
            {"tool": "get_weather", "args": {"city": "北京"}},
            {"give_up": "no time left for the comparison"},
        ]
    }
    llm = ScriptedLLM(script, unrecorded=Unrecorded.PROSE, call_ids="reply")
    llm_server.respond_with(llm)

    async with llm_agent(llm_server.base_url, builtins("get_weather"), http_client) as (agent, _):
        result = await agent.run("查上海和北京天气，对比并给穿衣建议。")

    assert result.degraded is not None
    shanghai, beijing = result.degraded.known_facts[:2]
    assert "city: 上海" in shanghai and "temp_c: 28" in shanghai  # in words, not JSON
    assert "city: 北京" in beijing
    assert len({c.tool_call_id for c in result.citations}) == 2
