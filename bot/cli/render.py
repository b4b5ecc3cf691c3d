"""Rendering a RunResult for a terminal: the answer with its citations as footnotes, honest when partial."""

from __future__ import annotations

import json
from typing import Any

from agent import REPLAY_NOTICE, Citation, OutcomeKind, RunResult
from bot.wording import InTerminal


def render_citations(citations: list[Citation]) -> list[str]:
    """An answer's sources as footnotes, one a line: the same live (`parley ask`) and read back (`runs show`)."""
    return [
        f"  {c.marker} {render_call(c.tool, c.arguments)} — step {c.step}, call {c.tool_call_id}" for c in citations
    ]


def render_call(tool: str, arguments: dict[str, Any] | None) -> str:
    """A tool call as `tool({...})`, its keys sorted: stored arguments come back in another order (PostgreSQL's
    JSONB orders keys its own way), and a run must print the same live and read back."""
    return f"{tool}({json.dumps(arguments or {}, ensure_ascii=False, sort_keys=True)})"


def render_result(result: RunResult) -> str:
    lines: list[str] = []
    escalation = result.escalation
    match result.outcome:
        case OutcomeKind.ANSWERED:
            lines.append(result.answer)
        case OutcomeKind.REFUSED:
            reason = escalation.message if escalation else result.answer
            lines.append(InTerminal.REFUSED.format(reason=reason))
            lines.append(InTerminal.REFUSED_NOTE)
        case OutcomeKind.HELD if escalation is not None:
            lines.append(InTerminal.HELD.format(why=escalation.message))
            for call in escalation.held_calls:
                lines.append(InTerminal.HELD_CALL.format(call=render_call(call.tool, call.arguments)))
            lines.append(InTerminal.HELD_NOTE)
        case OutcomeKind.ESCALATED:
            lines.append(InTerminal.ESCALATED.format(reason=result.termination_reason.value))
            lines.append(result.answer)
            lines.append(InTerminal.ESCALATED_NOTE)
        case _:
            lines.append(InTerminal.PARTIAL.format(reason=result.termination_reason.value))
            lines.append(result.answer)
    if result.citations:
        lines.append("")
        lines.append(InTerminal.SOURCES)
        lines.extend(render_citations(result.citations))
    lines.append("")
    lines.append(
        f"status: {result.status.value} · reason: {result.termination_reason.value} · steps: {result.steps} · "
        f"run: {result.run_id}"
    )
    if result.replayed:
        lines.append(f"({REPLAY_NOTICE})")
    return "\n".join(lines)
