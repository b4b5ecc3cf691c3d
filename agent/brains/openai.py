"""OpenAIBrain: a model with native tool calling behind any OpenAI-compatible `/chat/completions` endpoint."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from agent.brains.base import GIVE_UP
from agent.brains.chat import ChatCompletionsClient, ChatReply, json_type_name
from agent.messages import Completion, Decision, DecisionKind, Message, ToolCallRequest
from agent.tools.base import ToolSpec

logger = logging.getLogger(__name__)


class OpenAIBrain:
    """The Brain for models that call tools natively (OpenAI, vLLM, Ollama, llama.cpp, NIM …).

    It only translates: our transcript into OpenAI messages, the reply into a `Decision`. A reply that
    breaks the protocol becomes `DecisionKind.INVALID` (the engine tells the model); only an unreachable
    LLM raises (`LLMUnavailable`). Whether a tool name exists is the engine's business, not this one's.
    """

    replayed = False

    def __init__(self, client: ChatCompletionsClient) -> None:
        self._client = client
        self.name = f"openai:{client.model}"

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision:
        specs = [spec.as_openai() for spec in tools]  # give_up among them when the engine offers it
        reply = await self._client.create(to_openai_messages(messages), tools=specs)
        return decision_from_reply(reply)

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        reply = await self._client.create(to_openai_messages(messages))
        if reply.problem:
            logger.warning("%s: no usable reply for %s: %s", self.name, purpose, reply.problem)
        return Completion(text=reply.content.strip(), usage=reply.usage, retry_notes=reply.retry_notes)

    async def aclose(self) -> None:
        await self._client.aclose()


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our transcript in the OpenAI chat shape."""
    return [_to_openai(message) for message in messages]


def decision_from_reply(reply: ChatReply) -> Decision:
    """Tool calls if there are any, else the content as the final answer, else INVALID saying why."""
    if reply.problem:
        return reply.decision(DecisionKind.INVALID, text=reply.problem)
    if reply.tool_calls:
        calls, problem = _tool_calls(reply.tool_calls)
        if problem:
            return reply.decision(DecisionKind.INVALID, text=problem)
        thought = (reply.content or reply.reasoning).strip()
        if any(call.name == GIVE_UP.name for call in calls):
            if len(calls) > 1:
                return reply.decision(DecisionKind.INVALID, text="give_up must be called alone, without other tools")
            reason = (calls[0].arguments or {}).get("reason") or thought or "no reason given"
            return reply.decision(DecisionKind.GIVE_UP, thought=thought, text=str(reason))
        return reply.decision(DecisionKind.TOOL_CALLS, thought=thought, tool_calls=calls)
    answer = reply.content.strip()
    if answer:
        return reply.decision(DecisionKind.FINAL, thought=reply.reasoning.strip(), text=answer)
    why = "the reply has neither content nor tool calls"
    if reply.finish_reason == "length":
        why += " (it was cut off at max_tokens)"
    elif reply.finish_reason:
        why += f" (finish_reason {reply.finish_reason!r})"
    return reply.decision(DecisionKind.INVALID, text=why)


def parse_tool_arguments(value: Any) -> tuple[dict[str, Any] | None, str, str | None]:
    """Arguments as the model sent them → (arguments or None, raw text, what is wrong or None).

    Accepts a JSON object as text (the OpenAI shape), an already-decoded object (Ollama and friends),
    nothing at all (a tool without arguments) and a JSON string that itself holds an object (double-encoded).
    """
    if value is None:
        return {}, "", None
    if isinstance(value, dict):
        return value, json.dumps(value, ensure_ascii=False), None
    if not isinstance(value, str):
        raw = json.dumps(value, ensure_ascii=False)
        return None, raw, f"arguments must be a JSON object, got a {json_type_name(value)}"
    if not value.strip():
        return {}, value, None
    try:
        parsed = json.loads(value)
        if isinstance(parsed, str) and parsed.strip().startswith("{"):
            parsed = json.loads(parsed)
    except json.JSONDecodeError as exc:
        return None, value, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    except (ValueError, RecursionError):
        return None, value, "arguments are not valid JSON"
    if not isinstance(parsed, dict):
        return None, value, f"arguments must be a JSON object, got a {json_type_name(parsed)}"
    return parsed, value, None


def _tool_calls(entries: Sequence[Any]) -> tuple[tuple[ToolCallRequest, ...], str | None]:
    calls: list[ToolCallRequest] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        function = entry.get("function") if isinstance(entry, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name.strip():
            return (), f"tool call #{number} has no function name"
        call_id = entry.get("id")
        # Some servers send no id, or the same id for every call of a batch: results must still line up.
        if not isinstance(call_id, str) or not call_id.strip() or call_id in seen:
            call_id = _new_call_id()
        seen.add(call_id)
        arguments, raw, error = parse_tool_arguments(function.get("arguments"))
        calls.append(ToolCallRequest(call_id, name.strip(), arguments, raw_arguments=raw, arguments_error=error))
    return tuple(calls), None


def _new_call_id() -> str:
    return f"call_{secrets.token_hex(6)}"


def _to_openai(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name:
        out["name"] = message.name
    if message.role == "assistant" and message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [_call_to_openai(call) for call in message.tool_calls]
    return out


def _call_to_openai(call: ToolCallRequest) -> dict[str, Any]:
    # Unusable arguments go back as "{}": servers such as vLLM re-parse the history's arguments and answer
    # 400 to invalid JSON, and the model learns what was wrong from the observation of this call anyway.
    arguments = json.dumps(call.arguments, ensure_ascii=False) if call.arguments is not None else "{}"
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
