"""Every LLM request a run makes — the plan, each decision, the critiques — is reported as one
`LLMCallFinished` event (what for, at which step, how long, the tokens), answered or not."""

from __future__ import annotations

import httpx

from agent import LLMCallFinished, StepDecided, TerminationReason
from tests.agent.llm_agent import builtins, llm_agent
from tests.fakes.llm_server import FakeLLMServer, FakeReply
from tests.fakes.scripted_llm import ScriptedLLM, Unrecorded

QUESTION = "What is 47 * 12?"
SOLVES_IT = {
    "decisions": [
        {"tool": "calculator", "args": {"expression": "47 * 12"}},
        {"final": "47 × 12 = 564 [1]."},
    ]
}


async def test_llm_calls_each_request_of_a_run_is_reported_with_its_purpose_step_and_tokens(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    llm_server.respond_with(ScriptedLLM(SOLVES_IT, unrecorded=Unrecorded.PROSE))

    async with llm_agent(
        llm_server.base_url, builtins("calculator"), http_client, done={"planner": "llm"}, critique={"llm": "always"}
    ) as (agent, recorder):
        result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.ANSWERED
    calls: list[LLMCallFinished] = recorder.of(LLMCallFinished)
    assert [(call.purpose, call.step) for call in calls if call.purpose != "critique"] == [
        ("plan", 0),
        ("decide", 1),
        ("decide", 2),
    ]
    assert {call.step for call in calls if call.purpose == "critique"} <= {1, 2}
    assert all(call.ok and call.retries == 0 and call.latency_ms >= 0 for call in calls)
    assert len(calls) == result.llm_calls == len(llm_server.chat_requests)
    assert sum(call.prompt_tokens + call.completion_tokens for call in calls) == result.tokens
    decided = recorder.of(StepDecided)
    assert [c.prompt_tokens for c in calls if c.purpose == "decide"] == [s.prompt_tokens for s in decided]


async def test_llm_calls_an_unreachable_llm_is_reported_as_failed_requests_with_their_retries(
    llm_server: FakeLLMServer, http_client: httpx.AsyncClient
) -> None:
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "the model is overloaded"))

    async with llm_agent(
        llm_server.base_url, builtins("calculator"), http_client, max_retries=2, done={"planner": "llm"}
    ) as (agent, recorder):
        result = await agent.run(QUESTION)

    assert result.termination_reason is TerminationReason.LLM_UNAVAILABLE
    calls: list[LLMCallFinished] = recorder.of(LLMCallFinished)
    assert [(c.purpose, c.step, c.ok, c.retries) for c in calls] == [("plan", 0, False, 2), ("decide", 1, False, 2)]
    assert all(c.prompt_tokens == c.completion_tokens == 0 for c in calls)
