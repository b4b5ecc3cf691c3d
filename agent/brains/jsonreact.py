"""JsonReactBrain: models without tool calling reply `{"thought", "action", "action_input"}` as text (seed 003)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from agent.brains.base import GIVE_UP
from agent.brains.chat import ChatCompletionsClient, ChatReply
from agent.brains.openai import parse_tool_arguments
from agent.messages import Completion, Decision, DecisionKind, Message, ToolCallRequest
from agent.text import shorten
from agent.tools.base import ToolSpec

logger = logging.getLogger(__name__)

FINAL_ACTIONS = frozenset({"final", "final_answer"})
GIVE_UP_ACTIONS = frozenset({"give_up", "giveup"})
_MAX_OBJECT_ATTEMPTS = 100  # bounds the scan of a long garbage reply for a JSON object
_MAX_QUOTED_CHARS = 120

_PROTOCOL = """\
Reply with exactly one JSON object and nothing else:
{"thought": "<your reasoning>", "action": "<tool name> | final | give_up", "action_input": <see below>}

- To call a tool: "action" is the tool's name and "action_input" is a JSON object of its arguments, \
matching the tool's schema. One tool call per reply.
- To answer: "action": "final" and "action_input" is the answer as a string.
- If you cannot answer: "action": "give_up" and "action_input" says what is missing and why.

After each tool call you receive "Observation for <call id> (<tool>): <result>". Use only what the \
observations say; never invent a result.

Tools:
"""


class JsonReactBrain:
    """The Brain for models without native tool calling: the protocol lives in a system prompt.

    Same wire as `OpenAIBrain` (no `tools` parameter is sent). Replies are parsed tolerantly (code fences
    and prose around the object are ignored); anything unusable becomes `DecisionKind.INVALID` with a
    sentence saying what was wrong, so the engine can tell the model.
    """

    replayed = False

    def __init__(self, client: ChatCompletionsClient) -> None:
        self._client = client
        self.name = f"json_react:{client.model}"

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision:
        reply = await self._client.create(to_react_messages(messages, protocol=render_protocol(tools)))
        next_number = 1 + sum(len(m.tool_calls) for m in messages if m.role == "assistant")
        return decision_from_react_reply(reply, call_id=f"jr_{next_number}")

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        reply = await self._client.create(to_react_messages(messages))
        if reply.problem:
            logger.warning("%s: no usable reply for %s: %s", self.name, purpose, reply.problem)
        return Completion(text=reply.content.strip(), usage=reply.usage, retry_notes=reply.retry_notes)

    async def aclose(self) -> None:
        await self._client.aclose()


def render_protocol(tools: Sequence[ToolSpec]) -> str:
    """The system prompt that teaches the JSON-ReAct reply format and lists the tools (give_up is built in)."""
    tools = [spec for spec in tools if spec.name != GIVE_UP.name]
    if not tools:
        return _PROTOCOL + "(none: answer with final or give_up)\n"
    return _PROTOCOL + "\n".join(_describe(spec) for spec in tools) + "\n"


def to_react_messages(messages: Sequence[Message], *, protocol: str | None = None) -> list[dict[str, str]]:
    """Our transcript as plain chat: tool calls become the assistant's JSON, results become user observations.

    Many chat templates accept one leading system message and strictly alternating turns, so leading
    system messages are merged (with `protocol` appended), later ones become user text, and consecutive
    turns of one role are joined.
    """
    rest = list(messages)
    system_parts: list[str] = []
    while rest and rest[0].role == "system":
        system_parts.append(rest.pop(0).content)
    if protocol:
        system_parts.append(protocol)
    out: list[dict[str, str]] = []
    if any(system_parts):
        out.append({"role": "system", "content": "\n\n".join(part for part in system_parts if part)})
    tool_names: dict[str, str] = {}
    for message in rest:
        if message.role == "assistant" and message.tool_calls:
            tool_names.update((call.id, call.name) for call in message.tool_calls)
            _append(out, "assistant", "\n".join(_render_action(message.content, call) for call in message.tool_calls))
        elif message.role == "assistant":
            _append(out, "assistant", message.content)
        elif message.role == "tool":
            call_id = message.tool_call_id or "?"
            tool = message.name or tool_names.get(call_id, "unknown tool")
            _append(out, "user", f"Observation for {call_id} ({tool}): {message.content}")
        else:
            _append(out, "user", message.content)
    return out


def decision_from_react_reply(reply: ChatReply, *, call_id: str) -> Decision:
    """Read one `{thought, action, action_input}` reply; `call_id` names the tool call if it is one."""
    if reply.problem:
        return reply.decision(DecisionKind.INVALID, text=reply.problem)
    found, problem = find_action_object(reply.content)
    if found is None:
        return reply.decision(DecisionKind.INVALID, text=problem or "the reply holds no JSON object")
    thought = _as_text(found.get("thought"))
    action = found.get("action")
    if not isinstance(action, str) or not action.strip():
        why = 'the reply has no "action" (a tool name, "final" or "give_up")'
        return reply.decision(DecisionKind.INVALID, thought=thought, text=why)
    action = action.strip()
    action_input = found.get("action_input")
    if action.lower() in FINAL_ACTIONS:
        answer = _answer(action_input, keys=("answer", "final_answer", "text"))
        if not answer:
            why = 'action "final" needs the answer in "action_input"'
            return reply.decision(DecisionKind.INVALID, thought=thought, text=why)
        return reply.decision(DecisionKind.FINAL, thought=thought, text=answer)
    if action.lower() in GIVE_UP_ACTIONS:
        reason = _answer(action_input, keys=("reason", "answer", "text")) or "the model gave up without saying why"
        return reply.decision(DecisionKind.GIVE_UP, thought=thought, text=reason)
    arguments, raw, error = parse_tool_arguments(action_input)
    if error:
        error = f'"action_input" of a tool must be a JSON object of its arguments: {error}'
    call = ToolCallRequest(call_id, action, arguments, raw_arguments=raw, arguments_error=error)
    return reply.decision(DecisionKind.TOOL_CALLS, thought=thought, tool_calls=(call,))


def find_action_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The first JSON object in `text` that has an "action" (else the first object), ignoring fences and prose."""
    decoder = json.JSONDecoder()
    first: dict[str, Any] | None = None
    position = text.find("{")
    attempts = 0
    while position != -1 and attempts < _MAX_OBJECT_ATTEMPTS:
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            if "action" in value:
                return value, None
            first = first if first is not None else value
        position = text.find("{", end)
    if first is not None:
        return first, None
    if not text.strip():
        return None, "the reply is empty; expected a JSON object {thought, action, action_input}"
    return None, f"the reply is not a JSON object {{thought, action, action_input}}: {_quote(text)}"


def _describe(spec: ToolSpec) -> str:
    schema = json.dumps(spec.parameters, ensure_ascii=False)
    return f"- {spec.name}: {spec.description}\n  arguments (JSON Schema): {schema}"


def _render_action(thought: str, call: ToolCallRequest) -> str:
    action_input: Any = call.arguments if call.arguments is not None else call.raw_arguments
    return json.dumps({"thought": thought, "action": call.name, "action_input": action_input}, ensure_ascii=False)


def _append(out: list[dict[str, str]], role: str, content: str) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"] = f"{out[-1]['content']}\n\n{content}"
    else:
        out.append({"role": role, "content": content})


def _answer(value: Any, *, keys: tuple[str, ...]) -> str:
    if isinstance(value, dict):
        for key in keys:
            if key in value:
                return _as_text(value[key])
        # A structured final answer (output.format json) may be the object itself.
        return json.dumps(value, ensure_ascii=False) if value else ""
    return _as_text(value)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _quote(text: str) -> str:
    return json.dumps(shorten(text, _MAX_QUOTED_CHARS), ensure_ascii=False)
