"""OpenAIBrain through the real client against a real HTTP server: transcript out, Decision in."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.brains.base import GIVE_UP, LLMUnavailable
from agent.brains.chat import ChatCompletionsClient
from agent.brains.openai import OpenAIBrain
from agent.messages import DecisionKind, Message, ToolCallRequest
from agent.tools.base import ToolSpec
from tests.fakes.llm_server import (
    FakeLLMServer,
    FakeReply,
    chat_completion,
    completion_with_content,
    completion_with_tool_calls,
)

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for one city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CALCULATOR = ToolSpec(
    "calculator", "Evaluate arithmetic", {"type": "object", "properties": {"expr": {"type": "string"}}}
)
QUESTION = [Message("system", "You are Parley."), Message("user", "Weather in Paris and Oslo?")]


@pytest.fixture
async def brain(llm_server: FakeLLMServer) -> AsyncIterator[OpenAIBrain]:
    client = ChatCompletionsClient(
        llm_server.base_url, "fake-model", timeout_s=5.0, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.01
    )
    brain = OpenAIBrain(client)
    yield brain
    await brain.aclose()


async def test_openai_brain_parses_parallel_tool_calls_with_aligned_ids(
    llm_server: FakeLLMServer, brain: OpenAIBrain
) -> None:
    llm_server.script(
        completion_with_tool_calls(
            [("call_a", "get_weather", {"city": "Paris"}), ("call_b", "get_weather", {"city": "Oslo"})],
            content="Two cities, two calls.",
            usage=(120, 30),
        )
    )

    decision = await brain.decide(QUESTION, [WEATHER, CALCULATOR])

    assert decision.kind is DecisionKind.TOOL_CALLS
    assert [(c.id, c.name, c.arguments) for c in decision.tool_calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_weather", {"city": "Oslo"}),
    ]
    assert all(call.arguments_error is None for call in decision.tool_calls)
    assert decision.thought == "Two cities, two calls."
    assert (decision.usage.prompt_tokens, decision.usage.completion_tokens) == (120, 30)
    assert decision.retry_notes == ()
    assert decision.raw["choices"][0]["finish_reason"] == "tool_calls"
    assert llm_server.chat_requests[0]["tools"] == [
        WEATHER.as_openai(),
        CALCULATOR.as_openai(),
    ]  # give_up: the engine's call


async def test_openai_brain_maps_tool_calls_and_results_into_the_transcript(
    llm_server: FakeLLMServer, brain: OpenAIBrain
) -> None:
    llm_server.script(completion_with_content("Paris 18°C, Oslo 4°C."))
    transcript = [
        *QUESTION,
        Message(
            "assistant",
            "",
            tool_calls=(
                ToolCallRequest("call_a", "get_weather", {"city": "Paris"}, raw_arguments='{"city": "Paris"}'),
                ToolCallRequest("call_b", "get_weather", None, raw_arguments="{city: Oslo", arguments_error="bad"),
            ),
        ),
        Message("tool", '{"ok": true, "data": {"temp_c": 18}}', tool_call_id="call_a", name="get_weather"),
        Message("tool", '{"ok": false, "error": {"code": "INVALID_ARGS"}}', tool_call_id="call_b"),
    ]

    decision = await brain.decide(transcript, [WEATHER])

    assert (decision.kind, decision.text) == (DecisionKind.FINAL, "Paris 18°C, Oslo 4°C.")
    sent = llm_server.chat_requests[0]["messages"]
    assert sent[:2] == [
        {"role": "system", "content": "You are Parley."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
    ]
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_a", "content": '{"ok": true, "data": {"temp_c": 18}}'}
    assert sent[4]["tool_call_id"] == "call_b"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [("{city: Paris", "not valid JSON"), ('["Paris"]', "got a array"), ('"Paris"', "got a string")],
    ids=["bad-json", "array", "string"],
)
async def test_openai_brain_unusable_arguments_become_arguments_error(
    llm_server: FakeLLMServer, brain: OpenAIBrain, raw: str, problem: str
) -> None:
    llm_server.script(completion_with_tool_calls([("call_a", "get_weather", raw), ("call_b", "calculator", {})]))

    decision = await brain.decide(QUESTION, [WEATHER, CALCULATOR])

    bad, good = decision.tool_calls
    assert (bad.arguments, bad.raw_arguments) == (None, raw)
    assert bad.arguments_error is not None
    assert problem in bad.arguments_error
    assert (good.arguments, good.arguments_error) == ({}, None)


async def test_openai_brain_generates_missing_and_duplicate_ids(llm_server: FakeLLMServer, brain: OpenAIBrain) -> None:
    llm_server.script(
        completion_with_tool_calls(
            [
                (None, "get_weather", {"city": "Paris"}),
                ("dup", "get_weather", {"city": "Oslo"}),
                ("dup", "calculator", {}),
            ]
        )
    )

    decision = await brain.decide(QUESTION, [WEATHER, CALCULATOR])

    ids = [call.id for call in decision.tool_calls]
    assert ids[1] == "dup"
    assert len(set(ids)) == 3
    assert all(ids)


async def test_openai_brain_passes_unknown_tool_names_through(llm_server: FakeLLMServer, brain: OpenAIBrain) -> None:
    llm_server.script(completion_with_tool_calls([("call_a", "web_search", {"q": "x"})]))

    decision = await brain.decide(QUESTION, [WEATHER])

    assert decision.kind is DecisionKind.TOOL_CALLS
    assert decision.tool_calls[0].name == "web_search"


async def test_openai_brain_content_without_tool_calls_is_final(llm_server: FakeLLMServer, brain: OpenAIBrain) -> None:
    llm_server.script(completion_with_content("  It is sunny.  "))

    decision = await brain.decide(QUESTION, [WEATHER])

    assert (decision.kind, decision.text, decision.tool_calls) == (DecisionKind.FINAL, "It is sunny.", ())


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (FakeReply.with_json({"id": "x", "choices": []}), "no choices"),
        (FakeReply.with_json({"error": {"message": "model overloaded"}}), "model overloaded"),
        (FakeReply.with_json({"choices": [{"index": 0, "finish_reason": "stop"}]}), "no message"),
        (FakeReply.with_json(chat_completion({"role": "assistant", "content": ""})), "neither content nor tool calls"),
        (FakeReply.with_json(chat_completion({"role": "assistant"}, finish_reason="length")), "max_tokens"),
        (completion_with_tool_calls([("call_a", "", {})]), "no function name"),
        (FakeReply.with_bytes(b"<html>Bad Gateway</html>"), "not JSON"),
        (FakeReply.with_bytes(b"\xff\xfe\xfd not utf-8"), "not JSON"),
    ],
    ids=["empty-choices", "error-body", "no-message", "empty", "cut-off", "nameless-call", "html", "invalid-utf8"],
)
async def test_openai_brain_unusable_reply_is_an_invalid_decision(
    llm_server: FakeLLMServer, brain: OpenAIBrain, reply: FakeReply, says: str
) -> None:
    llm_server.script(reply)

    decision = await brain.decide(QUESTION, [WEATHER])

    assert decision.kind is DecisionKind.INVALID
    assert says in decision.text
    assert decision.tool_calls == ()
    assert len(llm_server.requests) == 1


async def test_openai_brain_reports_transport_retries(llm_server: FakeLLMServer, brain: OpenAIBrain) -> None:
    llm_server.script(FakeReply.with_status(429, headers={"Retry-After": "0"}), completion_with_content("done"))

    decision = await brain.decide(QUESTION, [WEATHER])

    assert (decision.kind, len(decision.retry_notes)) == (DecisionKind.FINAL, 1)
    assert len(llm_server.requests) == 2


async def test_openai_brain_raises_llm_unavailable_when_the_endpoint_stays_down(
    llm_server: FakeLLMServer, brain: OpenAIBrain
) -> None:
    llm_server.script(FakeReply.with_status(503), FakeReply.with_status(503))

    with pytest.raises(LLMUnavailable, match="503"):
        await brain.decide(QUESTION, [WEATHER])


async def test_openai_brain_complete_sends_no_tools(llm_server: FakeLLMServer, brain: OpenAIBrain) -> None:
    llm_server.script(completion_with_content('{"on_track": true}', usage=(40, 6)))

    completion = await brain.complete([Message("user", "Critique this step.")], purpose="critique")

    assert completion.text == '{"on_track": true}'
    assert completion.usage.total == 46
    assert "tools" not in llm_server.chat_requests[0]


async def test_openai_brain_complete_with_garbage_body_returns_empty_text(
    llm_server: FakeLLMServer, brain: OpenAIBrain
) -> None:
    llm_server.script(FakeReply.with_bytes(b"<html>oops</html>"))

    completion = await brain.complete([Message("user", "Plan this.")], purpose="plan")

    assert completion.text == ""


async def test_openai_brain_names_itself_after_the_model() -> None:
    brain = OpenAIBrain(ChatCompletionsClient("http://127.0.0.1:9/v1", "llama-3.1-8b"))
    await brain.aclose()

    assert (brain.name, brain.replayed) == ("openai:llama-3.1-8b", False)


async def test_openai_brain_give_up_function_ends_honestly(llm_server):
    llm_server.script(completion_with_tool_calls([("c1", "give_up", {"reason": "search is down"})]))
    brain = OpenAIBrain(ChatCompletionsClient(llm_server.base_url, "m", max_retries=0))
    try:
        decision = await brain.decide([Message("user", "q")], [GIVE_UP])  # offered by the engine
    finally:
        await brain.aclose()

    assert decision.kind is DecisionKind.GIVE_UP and decision.text == "search is down"
    offered = [t["function"]["name"] for t in llm_server.chat_requests[0]["tools"]]
    assert offered == ["give_up"]
