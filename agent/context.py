"""Transcript: the messages the brain sees, built only through these methods (one writer, one shape)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.messages import Message, ToolCallRequest
from agent.plain import plain_text
from agent.wording import FAILURE_NOTE, INVALID_REPLY, OUTPUT_JSON, QUALITY_CHECK, REPAIR_ANSWER, SYSTEM_PROMPT


@dataclass(frozen=True)
class Exchange:
    """An earlier question and answer in the same conversation (a Slack thread)."""

    question: str
    answer: str


@dataclass
class Transcript:
    messages: list[Message] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        question: str,
        *,
        history: Sequence[Exchange] = (),
        output_schema: dict | None = None,
    ) -> Transcript:
        system = SYSTEM_PROMPT
        if output_schema:
            system += "\n" + OUTPUT_JSON.format(schema=json.dumps(output_schema, ensure_ascii=False))
        messages = [Message("system", system)]
        for exchange in history:  # from a store or a thread: made plain like everything else that enters
            messages.append(Message("user", plain_text(exchange.question)))
            messages.append(Message("assistant", plain_text(exchange.answer)))
        messages.append(Message("user", question))
        return cls(messages)

    def add_tool_calls(self, thought: str, calls: Sequence[ToolCallRequest]) -> None:
        self.messages.append(Message("assistant", thought, tool_calls=tuple(calls)))

    def add_observation(self, call: ToolCallRequest, content: str) -> None:
        self.messages.append(Message("tool", content, tool_call_id=call.id, name=call.name))

    def add_draft(self, text: str) -> None:
        self.messages.append(Message("assistant", text))

    def add_failure_note(self) -> None:
        """How to read a failure, once, when the first one happens (the system prompt stays short)."""
        if not any(m.role == "system" and m.content == FAILURE_NOTE for m in self.messages):
            self.messages.append(Message("system", FAILURE_NOTE))

    def add_quality_check(self, gaps: Sequence[str]) -> None:
        self.messages.append(Message("system", QUALITY_CHECK.format(gaps="; ".join(gaps))))

    def add_repair_request(self, problems: Sequence[str]) -> None:
        self.messages.append(Message("system", REPAIR_ANSWER.format(problems="; ".join(problems))))

    def add_invalid_reply(self, raw_text: str, observation: str) -> None:
        """A reply that broke the protocol: the model sees what it said and why it could not be used."""
        if raw_text:
            self.messages.append(Message("assistant", raw_text[:2000]))
        self.messages.append(Message("system", INVALID_REPLY.format(problem=observation)))
