"""ScriptedLLM: a replay script (`config/demos/*.yaml`) served over the wire by `FakeLLMServer.respond_with`.

Each request is classified by what the engine sent — the planner's prompt, the critic's prompt, the JSON
repair prompt, or a decision request — and answered from the script the way a real OpenAI-compatible model
would: tool calls with ids `call_1`, `call_2` … (parallel for `calls:`), content for `final:`, a `give_up`
function call for `give_up:`, and garbage for `invalid:`. With `protocol="json_react"` decisions are the
JSON text `{thought, action, action_input}` instead. A plan, critique or repair the script does not record
gets the `unrecorded` answer the test chose, so every test says which fallback it exercises.

The kind of every request is recorded (`kinds`, `count`, `requests_of`), faults can be put in front of
the script (`inject`), and a request the script cannot answer gets a 400: the run fails loudly, at once.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import yaml

from agent.brains.replay import RecordedCall, RecordedDecision, ReplayScript
from agent.closing import REPAIR_JSON_PROMPT
from agent.critique import CRITIC_PROMPT
from agent.planner import PLANNER_PROMPT
from agent.wording import SYSTEM_PROMPT
from tests.fakes.llm_server import FakeReply, chat_completion

Protocol = Literal["tools", "json_react"]
# "run": ids unique within the run, as OpenAI sends them; "reply": numbered from call_0 in every reply, as
# some OpenAI-compatible servers do (the same id then comes back in later turns for other calls).
CallIds = Literal["run", "reply"]

_PROSE = "Sure! I would first look things up, then answer. Let me know if that works for you."
_GARBAGE = b"\x00\xff<<not json at all>>\xfe"
# The JSON-ReAct brain's protocol prompt (agent/brains/jsonreact.py): in the system message of every decision.
_JSON_REACT_PROTOCOL = "Reply with exactly one JSON object and nothing else"


class RequestKind(StrEnum):
    PLAN = "plan"
    CRITIQUE = "critique"
    REPAIR = "repair"
    DECIDE = "decide"
    UNKNOWN = "unknown"


class Unrecorded(StrEnum):
    """What a plan, critique or repair request gets when the script records no answer for it."""

    PROSE = "prose"  # 200, a well-formed completion whose content is chatty text, not JSON
    GARBAGE = "garbage"  # 200, a body that is not JSON at all
    SERVER_ERROR = "server_error"  # HTTP 500 on every attempt (the client retries, then gives up)


class InvalidAs(StrEnum):
    """How an `invalid:` decision goes over the wire."""

    GARBAGE = "garbage"  # 200 with non-JSON bytes
    NO_CONTENT = "no_content"  # a message with neither content nor tool calls
    NO_CHOICES = "no_choices"  # `{"choices": []}`
    PROSE = "prose"  # content without a JSON object (json_react only: for tool calling that is a final)


def classify(body: Any, *, protocol: Protocol = "tools") -> RequestKind:
    """Which engine request a `/chat/completions` body is, from its first system message (and `tools`)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return RequestKind.UNKNOWN
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    if system.startswith(_first_line(PLANNER_PROMPT)):
        return RequestKind.PLAN
    if system.startswith(_first_line(CRITIC_PROMPT)):
        return RequestKind.CRITIQUE
    if system.startswith(_first_line(REPAIR_JSON_PROMPT)):
        return RequestKind.REPAIR
    if protocol == "tools" and (body.get("tools") or system.startswith(SYSTEM_PROMPT[:40])):
        return RequestKind.DECIDE  # an agent without tools decides too (no `tools` is sent then)
    if protocol == "json_react" and _JSON_REACT_PROTOCOL in system and not body.get("tools"):
        return RequestKind.DECIDE
    return RequestKind.UNKNOWN


class ScriptedLLM:
    """A handler for `FakeLLMServer.respond_with` that plays one replay script."""

    def __init__(
        self,
        script: ReplayScript | Mapping[str, Any],
        *,
        unrecorded: Unrecorded,
        protocol: Protocol = "tools",
        invalid_as: InvalidAs = InvalidAs.GARBAGE,
        call_ids: CallIds = "run",
    ) -> None:
        self._script = script if isinstance(script, ReplayScript) else ReplayScript.model_validate(script)
        if protocol == "tools" and invalid_as is InvalidAs.PROSE:
            raise ValueError("with tool calling, prose content is a final answer, not an invalid reply")
        if protocol == "json_react" and any(len(d.calls) > 1 for d in self._script.decisions):
            raise ValueError("JSON-ReAct makes one tool call per reply; the script has parallel calls")
        self._protocol = protocol
        self._unrecorded = unrecorded
        self._invalid_as = invalid_as
        self._call_ids = call_ids
        self._lock = threading.Lock()
        self._decisions = deque(self._script.decisions)
        self._critiques = deque(self._script.critiques)
        self._repairs = deque(self._script.repairs)
        self._faults: dict[RequestKind, deque[FakeReply]] = {}
        self._log: list[tuple[RequestKind, Any]] = []
        self._calls_made = 0

    @classmethod
    def from_file(cls, path: Path, **options: Any) -> ScriptedLLM:
        return cls(ReplayScript.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))), **options)

    def inject(self, kind: RequestKind, *replies: FakeReply) -> None:
        """Serve these to the next requests of `kind` before the script answers (which stays unconsumed)."""
        with self._lock:
            self._faults.setdefault(kind, deque()).extend(replies)

    @property
    def kinds(self) -> list[RequestKind]:
        with self._lock:
            return [kind for kind, _ in self._log]

    def count(self, kind: RequestKind) -> int:
        return self.kinds.count(kind)

    def requests_of(self, kind: RequestKind) -> list[Any]:
        """The bodies of the requests of one kind, in order (retries included)."""
        with self._lock:
            return [body for logged, body in self._log if logged is kind]

    @property
    def decisions_left(self) -> int:
        with self._lock:
            return len(self._decisions)

    def __call__(self, body: Any) -> FakeReply:
        kind = classify(body, protocol=self._protocol)
        with self._lock:
            self._log.append((kind, body))
            faults = self._faults.get(kind)
            if faults:
                return faults.popleft()
            if kind is RequestKind.PLAN:
                plan = self._script.plan
                return self._unrecorded_reply() if plan is None else _content(json.dumps({"items": plan}))
            if kind is RequestKind.CRITIQUE:
                return _content(json.dumps(self._critiques.popleft())) if self._critiques else self._unrecorded_reply()
            if kind is RequestKind.REPAIR:
                return _content(self._repairs.popleft()) if self._repairs else self._unrecorded_reply()
            if kind is RequestKind.DECIDE:
                if not self._decisions:
                    recorded = len(self._script.decisions)
                    return FakeReply.with_status(400, f"scripted LLM: no decision left ({recorded} were recorded)")
                return self._decision(self._decisions.popleft())
        return FakeReply.with_status(400, "scripted LLM: a request that is no plan, critique, repair or decision")

    # --- rendering ----------------------------------------------------------------------------------

    def _decision(self, recorded: RecordedDecision) -> FakeReply:
        if recorded.invalid is not None:
            return self._invalid(recorded.invalid)
        if self._protocol == "json_react":
            return _content(json.dumps(_react_object(recorded), ensure_ascii=False))
        if recorded.final is not None:
            return _content(recorded.final)
        if recorded.give_up is not None:
            return self._tool_calls(recorded.thought, [RecordedCall(tool="give_up", args={"reason": recorded.give_up})])
        calls = recorded.calls or [RecordedCall(tool=recorded.tool or "", args=recorded.args or {})]
        return self._tool_calls(recorded.thought, calls)

    def _tool_calls(self, thought: str, calls: list[RecordedCall]) -> FakeReply:
        entries = []
        if self._call_ids == "reply":
            self._calls_made = -1
        for call in calls:
            self._calls_made += 1
            # A string is sent as it stands: that is how a test sends arguments that are not valid JSON.
            arguments = call.args if isinstance(call.args, str) else json.dumps(call.args, ensure_ascii=False)
            entries.append(
                {
                    "id": f"call_{self._calls_made}",
                    "type": "function",
                    "function": {"name": call.tool, "arguments": arguments},
                }
            )
        message = {"role": "assistant", "content": thought or None, "tool_calls": entries}
        return FakeReply.with_json(chat_completion(message, finish_reason="tool_calls"))

    def _invalid(self, text: str) -> FakeReply:
        match self._invalid_as:
            case InvalidAs.GARBAGE:
                return FakeReply.with_bytes(text.encode() + _GARBAGE, content_type="text/plain")
            case InvalidAs.NO_CONTENT:
                return FakeReply.with_json(chat_completion({"role": "assistant", "content": None}))
            case InvalidAs.NO_CHOICES:
                return FakeReply.with_json({"id": "chatcmpl-fake", "object": "chat.completion", "choices": []})
            case InvalidAs.PROSE:
                return _content(text)

    def _unrecorded_reply(self) -> FakeReply:
        match self._unrecorded:
            case Unrecorded.PROSE:
                return _content(_PROSE)
            case Unrecorded.GARBAGE:
                return FakeReply.with_bytes(_GARBAGE, content_type="text/plain")
            case Unrecorded.SERVER_ERROR:
                return FakeReply.with_status(500, "scripted LLM: nothing recorded for this request")


def _react_object(recorded: RecordedDecision) -> dict[str, Any]:
    if recorded.final is not None:
        action, action_input = "final", recorded.final
    elif recorded.give_up is not None:
        action, action_input = "give_up", recorded.give_up
    else:
        call = recorded.calls[0] if recorded.calls else RecordedCall(tool=recorded.tool or "", args=recorded.args)
        action, action_input = call.tool, call.args
    return {"thought": recorded.thought, "action": action, "action_input": action_input}


def _content(text: str) -> FakeReply:
    return FakeReply.with_json(chat_completion({"role": "assistant", "content": text}))


def _first_line(prompt: str) -> str:
    return prompt.split("\n", 1)[0]
