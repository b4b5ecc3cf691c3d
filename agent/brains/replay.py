"""ReplayBrain: plays back a recorded sequence of decisions. Tools and checks still run for real.

Script format (YAML or JSON):

    decisions:
      - {thought: "…", tool: knowledge_lookup, args: {key: satellites_launched}}
      - {calls: [{tool: get_weather, args: {city: 上海}}, {tool: get_weather, args: {city: 北京}}]}
      - {final: "564 million USD [3]"}
      - {give_up: "the search back-end is down"}
      - {invalid: "I'm not sure what to do"}          # a reply that breaks the protocol
    plan: [{description: …, kind: evidence, tool: …, mentions: […]}]   # optional: the recorded planner
    critiques: [{satisfied: false, gaps: […], next_action: switch_tool}] # optional: recorded critic verdicts
    repairs: ["{…}"]                                                     # optional: recorded JSON repairs
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent.brains.base import LLMUnavailable, NotRecorded
from agent.errors import ConfigError
from agent.messages import Completion, Decision, DecisionKind, Message, ToolCallRequest
from agent.text import exception_line
from agent.tools.base import ToolSpec


class RecordedCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: Any = Field(default_factory=dict)


class RecordedDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    thought: str = ""
    tool: str | None = None
    args: Any = None
    calls: list[RecordedCall] = Field(default_factory=list)
    final: str | None = None
    give_up: str | None = None
    invalid: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> RecordedDecision:
        chosen = [
            self.tool is not None,
            bool(self.calls),
            self.final is not None,
            self.give_up is not None,
            self.invalid is not None,
        ]
        if sum(chosen) != 1:
            raise ValueError("each decision needs exactly one of tool, calls, final, give_up, invalid")
        return self


class ReplayScript(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    question: str | None = None  # the question the decisions answer, when the script records it
    decisions: list[RecordedDecision] = Field(min_length=1)
    plan: list[dict[str, Any]] | None = None
    critiques: list[dict[str, Any]] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> ReplayScript:
        try:
            return cls.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the script"
            raise ConfigError(f"replay script {path}: {where}: {first['msg']}") from None
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise ConfigError(f"cannot read replay script {path}: {exception_line(exc)}") from None

    def answers(self, question: str) -> bool:
        """A script plays back the decisions for its own question; any question if it records none."""
        return self.question is None or " ".join(self.question.split()) == " ".join(question.split())


class ReplayBrain:
    """A Brain whose choices come from a script; `replayed` tells every output that they did."""

    replayed = True

    def __init__(self, script: ReplayScript, *, name: str = "replay") -> None:
        self.name = name
        self._script = script
        self._next = 0
        self._critiques = list(script.critiques)
        self._repairs = list(script.repairs)

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision:
        if self._next >= len(self._script.decisions):
            raise LLMUnavailable(f"the replay script has no more decisions (it recorded {self._next})")
        recorded = self._script.decisions[self._next]
        self._next += 1
        step = self._next
        if recorded.final is not None:
            return Decision(
                DecisionKind.FINAL, thought=recorded.thought, text=recorded.final, raw=recorded.model_dump()
            )
        if recorded.give_up is not None:
            return Decision(DecisionKind.GIVE_UP, thought=recorded.thought, text=recorded.give_up)
        if recorded.invalid is not None:
            return Decision(
                DecisionKind.INVALID, text="the reply is not a tool call or a final answer", raw=recorded.invalid
            )
        calls = recorded.calls or [RecordedCall(tool=recorded.tool or "", args=recorded.args or {})]
        requests = tuple(_request(f"replay_{step}_{i}", call) for i, call in enumerate(calls, start=1))
        return Decision(DecisionKind.TOOL_CALLS, thought=recorded.thought, tool_calls=requests)

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        if purpose == "plan" and self._script.plan is not None:
            return Completion(json.dumps({"items": self._script.plan}, ensure_ascii=False))
        if purpose == "critique" and self._critiques:
            return Completion(json.dumps(self._critiques.pop(0), ensure_ascii=False))
        if purpose == "repair_json" and self._repairs:
            return Completion(self._repairs.pop(0))
        raise NotRecorded(f"the replay script records no {purpose} answer")

    async def aclose(self) -> None:
        return None


def _request(call_id: str, call: RecordedCall) -> ToolCallRequest:
    raw = json.dumps(call.args, ensure_ascii=False) if not isinstance(call.args, str) else call.args
    if isinstance(call.args, dict):
        return ToolCallRequest(call_id, call.tool, dict(call.args), raw)
    return ToolCallRequest(call_id, call.tool, None, raw, "the arguments are not a JSON object")
