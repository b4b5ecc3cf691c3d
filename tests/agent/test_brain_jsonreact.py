"""JsonReactBrain through the real client against a real HTTP server: seed 003's {thought, action, action_input}."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from agent.brains.chat import ChatCompletionsClient
from agent.brains.jsonreact import JsonReactBrain
from agent.messages import DecisionKind, Message, ToolCallRequest
from agent.tools.base import ToolSpec
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content

LOOKUP = ToolSpec(
    "knowledge_lookup",
    "Look up a fact about Zephyr Labs by key",
    {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
CALCULATOR = ToolSpec(
    "calculator", "Evaluate arithmetic", {"type": "object", "properties": {"expr": {"type": "string"}}}
)
QUESTION = [Message("system", "You are Parley."), Message("user", "How much did Zephyr Labs spend on satellites?")]


def reply_json(thought: str, action: str, action_input: object) -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": action_input})


@pytest.fixture
async def brain(llm_server: FakeLLMServer) -> AsyncIterator[JsonReactBrain]:
    client = ChatCompletionsClient(
        llm_server.base_url, "llama-3.1-8b", timeout_s=5.0, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.01
    )
    brain = JsonReactBrain(client)
    yield brain
    await brain.aclose()


async def test_jsonreact_brain_sends_the_protocol_prompt_and_no_tools_param(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content(reply_json("look it up", "knowledge_lookup", {"key": "x"})))

    await brain.decide(QUESTION, [LOOKUP, CALCULATOR])

    request = llm_server.chat_requests[0]
    assert "tools" not in request
    system, user = request["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith("You are Parley.\n\n")
    for needle in ['"thought"', '"action"', '"action_input"', "final", "give_up", "knowledge_lookup", '"required"']:
        assert needle in system["content"]
    assert user == {"role": "user", "content": "How much did Zephyr Labs spend on satellites?"}
    assert brain.name == "json_react:llama-3.1-8b"


async def test_jsonreact_brain_reads_a_fenced_tool_call(llm_server: FakeLLMServer, brain: JsonReactBrain) -> None:
    body = reply_json("I need the count first", "knowledge_lookup", {"key": "satellites_launched"})
    llm_server.script(completion_with_content(f"Sure! Here is my step:\n```json\n{body}\n```\nObservation: 47"))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert decision.kind is DecisionKind.TOOL_CALLS
    assert decision.thought == "I need the count first"
    [call] = decision.tool_calls
    assert (call.id, call.name, call.arguments, call.arguments_error) == (
        "jr_1",
        "knowledge_lookup",
        {"key": "satellites_launched"},
        None,
    )


async def test_jsonreact_brain_numbers_calls_after_the_transcript(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content(reply_json("multiply", "calculator", {"expr": "47 * 12"})))
    transcript = [
        *QUESTION,
        Message("assistant", "count", tool_calls=(ToolCallRequest("jr_1", "knowledge_lookup", {"key": "a"}),)),
        Message("tool", '{"ok": true, "data": 47}', tool_call_id="jr_1", name="knowledge_lookup"),
        Message("assistant", "cost", tool_calls=(ToolCallRequest("jr_2", "knowledge_lookup", {"key": "b"}),)),
        Message("tool", '{"ok": true, "data": 12}', tool_call_id="jr_2", name="knowledge_lookup"),
    ]

    decision = await brain.decide(transcript, [LOOKUP, CALCULATOR])

    assert decision.tool_calls[0].id == "jr_3"


async def test_jsonreact_brain_maps_tool_results_to_observations(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content(reply_json("done", "final", "564 million USD")))
    transcript = [
        *QUESTION,
        Message(
            "assistant",
            "I need the count",
            tool_calls=(ToolCallRequest("jr_1", "knowledge_lookup", {"key": "satellites_launched"}),),
        ),
        Message("tool", '{"ok": true, "data": 47}', tool_call_id="jr_1"),
        Message("system", "Critique: on track."),
    ]

    await brain.decide(transcript, [LOOKUP])

    sent = llm_server.chat_requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert json.loads(sent[2]["content"]) == {
        "thought": "I need the count",
        "action": "knowledge_lookup",
        "action_input": {"key": "satellites_launched"},
    }
    assert sent[3]["content"] == (
        'Observation for jr_1 (knowledge_lookup): {"ok": true, "data": 47}\n\nCritique: on track.'
    )


@pytest.mark.parametrize(
    "action_input",
    ["564 million USD", {"answer": "564 million USD"}],
    ids=["string", "answer-object"],
)
async def test_jsonreact_brain_final_carries_the_answer(
    llm_server: FakeLLMServer, brain: JsonReactBrain, action_input: object
) -> None:
    llm_server.script(completion_with_content(reply_json("47 * 12 = 564", "final", action_input)))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert (decision.kind, decision.text, decision.thought) == (DecisionKind.FINAL, "564 million USD", "47 * 12 = 564")


async def test_jsonreact_brain_give_up_carries_the_reason(llm_server: FakeLLMServer, brain: JsonReactBrain) -> None:
    llm_server.script(completion_with_content(reply_json("search is down", "give_up", "web_search kept failing (503)")))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert (decision.kind, decision.text) == (DecisionKind.GIVE_UP, "web_search kept failing (503)")


async def test_jsonreact_brain_tool_with_non_object_input_gets_arguments_error(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content(reply_json("look up", "knowledge_lookup", "satellites_launched")))

    decision = await brain.decide(QUESTION, [LOOKUP])

    [call] = decision.tool_calls
    assert (call.name, call.arguments, call.raw_arguments) == ("knowledge_lookup", None, "satellites_launched")
    assert call.arguments_error is not None
    assert "JSON object" in call.arguments_error


async def test_jsonreact_brain_passes_unknown_tool_names_through(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content(reply_json("search", "web_search", {"q": "market share"})))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert (decision.kind, decision.tool_calls[0].name) == (DecisionKind.TOOL_CALLS, "web_search")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("I think the answer is 564.", "not a JSON object"),
        ("", "empty"),
        ("{'thought': 'x', 'action': 'final'}", "not a JSON object"),
        ('{"thought": "hmm", "action_input": {"key": "x"}}', 'no "action"'),
        ('{"thought": "hmm", "action": "final"}', '"final" needs the answer'),
    ],
    ids=["prose", "empty", "python-dict", "missing-action", "final-without-answer"],
)
async def test_jsonreact_brain_unusable_reply_is_an_invalid_decision(
    llm_server: FakeLLMServer, brain: JsonReactBrain, content: str, says: str
) -> None:
    llm_server.script(completion_with_content(content))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert decision.kind is DecisionKind.INVALID
    assert says in decision.text
    assert decision.tool_calls == ()


async def test_jsonreact_brain_garbage_body_is_an_invalid_decision(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(FakeReply.with_bytes(b"\xff\xfe<html>"))

    decision = await brain.decide(QUESTION, [LOOKUP])

    assert (decision.kind, len(llm_server.requests)) == (DecisionKind.INVALID, 1)


async def test_jsonreact_brain_complete_sends_no_protocol_prompt(
    llm_server: FakeLLMServer, brain: JsonReactBrain
) -> None:
    llm_server.script(completion_with_content('{"on_track": false}'))

    completion = await brain.complete(
        [Message("system", "You critique."), Message("user", "Step 4?")], purpose="critique"
    )

    assert completion.text == '{"on_track": false}'
    assert llm_server.chat_requests[0]["messages"] == [
        {"role": "system", "content": "You critique."},
        {"role": "user", "content": "Step 4?"},
    ]
