"""SlackProgress: a Recorder that turns a run's trace into live progress lines in its thread."""

from __future__ import annotations

import json
from typing import Any

from agent import DecisionKind, RetryScheduled, StepDecided, ToolCallFinished, TraceEvent, clip
from bot.slack.blocks import progress_blocks
from bot.slack.reply import ThreadReply

MAX_ARGUMENT_CHARS = 60


class SlackProgress:
    def __init__(self, reply: ThreadReply, question: str) -> None:
        self._reply = reply
        self._question = question
        self._lines: list[str] = []
        self._pending: dict[str, int] = {}  # tool_call_id → index of its "…" line

    async def record(self, event: TraceEvent) -> None:
        match event:
            case StepDecided(decision=DecisionKind.TOOL_CALLS):
                for call in event.tool_calls:
                    self._pending[call.id] = len(self._lines)
                    self._lines.append(f"… {_call(call.name, call.arguments)}")
            case StepDecided(decision=DecisionKind.FINAL):
                self._lines.append("… checking the answer")
            case RetryScheduled():
                self._lines.append(f"↻ retrying {event.tool} ({event.code})")
            case ToolCallFinished():
                mark = "✓" if event.ok else "✗"
                outcome = "" if event.ok else f" {event.code}"
                line = f"{mark} {_call(event.tool, event.arguments)}{outcome}"
                index = self._pending.pop(event.tool_call_id, None)
                if index is None:
                    self._lines.append(line)
                else:
                    self._lines[index] = line
            case _:
                return
        await self._reply.show(progress_blocks(self._question, self._lines, state="working"))


def _call(tool: str, arguments: Any) -> str:
    if not isinstance(arguments, dict) or not arguments:
        return f"{tool}()"
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{tool}({clip(shown, MAX_ARGUMENT_CHARS)})"
