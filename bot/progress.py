"""ConsoleProgress: a Recorder that shows a run step by step, as a person watching would want it."""

from __future__ import annotations

import json
from typing import Any, TextIO

from agent import (
    REPLAY_NOTICE,
    CritiqueVerdictMade,
    DoneItemTicked,
    FinalRejected,
    PlanMade,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepDecided,
    ToolCallFinished,
    TraceEvent,
)

MAX_SHOWN = 140


class ConsoleProgress:
    def __init__(self, stream: TextIO) -> None:
        self._out = stream

    async def record(self, event: TraceEvent) -> None:
        line = self._line(event)
        if line:
            print(line, file=self._out, flush=True)

    def _line(self, event: TraceEvent) -> str | None:
        match event:
            case RunStarted():
                head = f"▶ run {event.run_id[:8]} · brain {event.brain} · tools: {', '.join(event.tools) or 'none'}"
                return head + (f"\n  ({REPLAY_NOTICE})" if event.replayed else "")
            case PlanMade():
                items = "; ".join(item["description"] for item in event.items)
                note = f" — {event.note}" if event.note and event.source == "rules" else ""
                return f"  Definition of Done ({event.source}{note}): {items}"
            case StepDecided():
                return f"  step {event.step}: {_decision(event)}"
            case RetryScheduled():
                return f"      ↻ {event.tool} {event.code}: retry {event.attempt} in {event.delay_s:.2f}s"
            case ToolCallFinished():
                return f"      {_outcome(event)}"
            case DoneItemTicked():
                return f"      ☑ {event.item}"
            case CritiqueVerdictMade():
                verdict = "on track" if event.satisfied else "gaps: " + "; ".join(event.gaps)
                return f"      critique ({event.stage}, {event.source}, round {event.round}): {_short(verdict)}"
            case FinalRejected():
                return f"      ✗ final answer not accepted ({event.by}): {_short('; '.join(event.gaps))}"
            case RunFinished():
                r = event.result
                counts = ", ".join(
                    _count(n, word)
                    for n, word in (
                        (r.steps, "step"),
                        (r.llm_calls, "LLM call"),
                        (r.tool_calls, "tool call"),
                        (r.retries, "retry"),
                        (r.critique_rounds, "critique round"),
                    )
                )
                return f"■ {r.status.value} ({r.termination_reason.value}) · {counts} · {r.duration_ms} ms"
        return None


def _decision(event: StepDecided) -> str:
    if event.decision == "tool_calls":
        calls = ", ".join(f"{c['name']}({_args(c['arguments'])})" for c in event.tool_calls)
        thought = f"  — {_short(event.thought, 80)}" if event.thought else ""
        return f"→ {calls}{thought}"
    if event.decision == "final":
        return f"final answer drafted: {_short(event.text)}"
    if event.decision == "give_up":
        return f"gives up: {_short(event.text)}"
    return f"unusable reply: {_short(event.text)}"


def _outcome(event: ToolCallFinished) -> str:
    retries = f" after {event.retries} retries" if event.retries else ""
    if event.ok:
        body = json.loads(event.observation)
        return f"✓ {event.tool} {body.get('cite', '')} {_short(json.dumps(body.get('data'), ensure_ascii=False))}"
    body = json.loads(event.observation).get("error", {})
    return f"✗ {event.tool} {event.code} ({event.level}){retries}: {_short(body.get('message', ''))}"


def _count(n: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def _args(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return "…"
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def _short(text: str, limit: int = MAX_SHOWN) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
