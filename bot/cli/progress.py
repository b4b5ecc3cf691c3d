"""ConsoleProgress: a Recorder that shows a run step by step, as a person watching would want it."""

from __future__ import annotations

import json
from typing import Any, TextIO

from agent import (
    REPLAY_NOTICE,
    CritiqueVerdictMade,
    DecisionKind,
    DoneItemTicked,
    FinalRejected,
    PlanMade,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepDecided,
    ToolCallFinished,
    TraceEvent,
    shorten,
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
                items = "; ".join(item.description for item in event.items)
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
                where = f"{event.stage}, {event.source}, round {event.round}"
                return f"      critique ({where}): {shorten(verdict, MAX_SHOWN)}"
            case FinalRejected():
                return f"      ✗ final answer not accepted ({event.by}): {shorten('; '.join(event.gaps), MAX_SHOWN)}"
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
    match event.decision:
        case DecisionKind.TOOL_CALLS:
            calls = ", ".join(f"{call.name}({_args(call.arguments)})" for call in event.tool_calls)
            thought = f"  — {shorten(event.thought, 80)}" if event.thought else ""
            return f"→ {calls}{thought}"
        case DecisionKind.FINAL:
            return f"final answer drafted: {shorten(event.text, MAX_SHOWN)}"
        case DecisionKind.GIVE_UP:
            return f"gives up: {shorten(event.text, MAX_SHOWN)}"
    return f"unusable reply: {shorten(event.text, MAX_SHOWN)}"


def _outcome(event: ToolCallFinished) -> str:
    """From the event's structured fields: the text the model was shown is not read back."""
    retries = f" after {event.retries} retries" if event.retries else ""
    if event.ok:
        data = json.dumps(event.shown, ensure_ascii=False, default=str)
        return f"✓ {event.tool} {event.cite or ''} {shorten(data, MAX_SHOWN)}"
    level = f" ({event.level.name})" if event.level is not None else ""
    return f"✗ {event.tool} {event.code}{level}{retries}: {shorten(event.message or '', MAX_SHOWN)}"


def _count(n: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def _args(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return "…"
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
