"""Rendering a RunResult for a terminal: the answer with its citations as footnotes, honest when partial."""

from __future__ import annotations

import json
from typing import Any

from agent import REPLAY_NOTICE, Citation, OutcomeKind, RunResult


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
            lines.append(f"REFUSED — {reason}")
            lines.append("This request needs a person's review; nothing was done on it.")
        case OutcomeKind.HELD if escalation is not None:
            lines.append(f"WAITING FOR A REVIEWER — {escalation.message}")
            for call in escalation.held_calls:
                lines.append(f"  held: {render_call(call.tool, call.arguments)} — not run")
            lines.append("A person decides on it (`parley review list`); nothing held was done.")
        case OutcomeKind.ESCALATED:
            lines.append(f"⚠ PARTIAL ANSWER (awaiting review: {result.termination_reason.value})")
            lines.append(result.answer)
            lines.append("A reviewer will look at this run (`parley review list`).")
        case _:
            lines.append(f"⚠ PARTIAL ANSWER (degraded: {result.termination_reason.value})")
            lines.append(result.answer)
    if result.citations:
        lines.append("")
        lines.append("Sources:")
        lines.extend(render_citations(result.citations))
    lines.append("")
    lines.append(
        f"status: {result.status.value} · reason: {result.termination_reason.value} · steps: {result.steps} · "
        f"run: {result.run_id}"
    )
    if result.replayed:
        lines.append(f"({REPLAY_NOTICE})")
    return "\n".join(lines)
