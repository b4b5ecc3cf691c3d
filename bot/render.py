"""Rendering a RunResult for a terminal: the answer with its citations as footnotes, honest when partial."""

from __future__ import annotations

import json

from agent import REPLAY_NOTICE, Citation, RunResult, RunStatus


def render_citations(citations: list[Citation]) -> list[str]:
    return [
        f"  {c.marker} {c.tool}({json.dumps(c.arguments, ensure_ascii=False)}) — step {c.step}, call {c.tool_call_id}"
        for c in citations
    ]


def render_result(result: RunResult) -> str:
    lines: list[str] = []
    if result.status is RunStatus.SOLVED:
        lines.append(result.answer)
    elif result.status is RunStatus.REFUSED:
        reason = result.escalation.message if result.escalation else result.answer
        lines.append(f"REFUSED — {reason}")
        lines.append("This request needs a person's review; nothing was done on it.")
    else:
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
