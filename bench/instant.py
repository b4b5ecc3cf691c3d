"""The instant brain and tool of the engine and store benchmarks: no I/O, no sleeps, their own time measured.

`InstantBrain` answers `steps - 1` tool steps with new arguments each time (no repeat or alternation brake
fires), then a cited final; the planner and the critic get a valid plan and a satisfied verdict. The `add`
tool answers at once, padded with `payload_kb` of JSON rows when asked (real tools return kilobytes).
Both add the time spent in their own code to a `Stopwatch`, which the benchmarks subtract.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agent import Completion, Decision, DecisionKind, FunctionTool, Message, ToolCallRequest, ToolSpec

PLAN = json.dumps({"items": [{"description": "Sums computed by the add tool", "tool": "add", "mentions": []}]})
VERDICT = json.dumps({"satisfied": True, "gaps": [], "next_action": "finalize"})


class AddArgs(BaseModel):
    a: int
    b: int


@dataclass
class Stopwatch:
    """Time spent in the brain's and the tool's own code, and when each `decide` began (this run)."""

    outside_s: float = 0.0
    decide_at: list[float] = field(default_factory=list)
    outside_at_decide: list[float] = field(default_factory=list)  # outside_s at those moments

    def reset(self) -> None:
        self.outside_s = 0.0
        self.decide_at.clear()
        self.outside_at_decide.clear()


class InstantBrain:
    """A `Brain` that answers at once: `steps - 1` tool steps whose arguments alternate, then a cited final."""

    name = "instant"
    replayed = False

    def __init__(self, steps: int, watch: Stopwatch) -> None:
        self._steps = steps
        self._watch = watch
        self._step = 0

    def start_run(self) -> None:
        self._step = 0

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision:
        started = time.perf_counter()
        self._watch.decide_at.append(started)
        self._watch.outside_at_decide.append(self._watch.outside_s)
        self._step += 1
        if self._step >= self._steps:
            decision = Decision(DecisionKind.FINAL, text="The first sum is 2 [1].")
        else:
            # New arguments every step (a, b alternate in role): no repeat or alternation brake fires.
            arguments = {"a": self._step, "b": 1} if self._step % 2 else {"a": 1, "b": self._step}
            call = ToolCallRequest(f"call_{self._step}", "add", arguments, json.dumps(arguments))
            decision = Decision(DecisionKind.TOOL_CALLS, thought=f"add step {self._step}", tool_calls=(call,))
        self._watch.outside_s += time.perf_counter() - started
        return decision

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        started = time.perf_counter()
        completion = Completion(text=PLAN if purpose == "plan" else VERDICT)
        self._watch.outside_s += time.perf_counter() - started
        return completion

    async def aclose(self) -> None:
        return None


def add_tool(watch: Stopwatch, payload_kb: int = 0, *, payload_bytes: int | None = None) -> FunctionTool:
    """`payload_bytes` (or `payload_kb` KiB) of JSON rows of about 100 bytes each ride along with the sum."""
    size = payload_kb * 1024 if payload_bytes is None else payload_bytes
    rows = [{"id": i, "note": f"row {i} of the payload, " + "x" * 70} for i in range(size // 100)]

    async def add(args: AddArgs) -> dict[str, Any]:
        started = time.perf_counter()
        result: dict[str, Any] = {"a": args.a, "b": args.b, "sum": args.a + args.b}
        if rows:
            result["rows"] = rows
        watch.outside_s += time.perf_counter() - started
        return result

    return FunctionTool("add", "Adds two integers.", AddArgs, add)
