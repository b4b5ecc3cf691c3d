"""Degraded finals: when a run cannot answer fully, say what was done, what is missing, why, what next."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent.done import DoneChecklist
from agent.result import DegradedFinal, TerminationReason
from agent.source import Source
from agent.wording import NOTHING_KNOWN, explain, next_step

MAX_FACTS = 6


def build_degraded_final(
    reason: TerminationReason,
    detail: str,
    checklist: DoneChecklist,
    sources: Sequence[Source],
) -> DegradedFinal:
    """Only facts that tool results established are repeated, each with its citation; nothing is guessed."""
    by_call = {source.tool_call_id: source for source in sources}
    used: list[Source] = []
    facts: list[str] = []
    for item, call_id in checklist.ticked():
        source = by_call.get(call_id or "")
        if source is not None:
            facts.append(f"{item.description}: {source.summary()} {source.tag}")
            used.append(source)
    if not facts:
        for source in sources[:MAX_FACTS]:
            args = json.dumps(source.arguments, ensure_ascii=False)
            facts.append(f"{source.tool}({args}): {source.summary()} {source.tag}")
            used.append(source)
    explanation = explain(reason, detail)
    if not sources:
        explanation = f"{explanation.rstrip('.')}. {NOTHING_KNOWN}"
    return DegradedFinal(
        reason=reason,
        explanation=explanation,
        completed=checklist.completed(),
        missing=checklist.missing(),
        known_facts=facts[:MAX_FACTS],
        citations=[s.citation() for s in {s.number: s for s in used}.values()],
        next_steps=[step] if (step := next_step(reason)) else [],
    )
