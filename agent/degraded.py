"""Degraded finals: when a run cannot answer fully, say what was done, what is missing, why, what next.

Only what tool results established is repeated, each with its citation; nothing is guessed. When the model
wrote a draft that did not pass, its sentences that did pass are quoted as they were, and its other
statements are described with their unbacked figures hidden — a figure that failed is never shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent.done import DoneChecklist
from agent.grounding import SentenceCheck
from agent.result import DegradedFinal, TerminationReason
from agent.source import Source
from agent.wording import NOTHING_KNOWN, explain, next_step

MAX_FACTS = 6
MAX_QUOTED = 8


def build_degraded_final(
    reason: TerminationReason,
    detail: str,
    checklist: DoneChecklist,
    sources: Sequence[Source],
    draft: Sequence[SentenceCheck] = (),
) -> DegradedFinal:
    """The partial answer: facts with their citations, the draft's verified sentences, and why it ends here."""
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
    verified = [s for s in draft if s.verified and s.cited][:MAX_QUOTED]
    unchecked = [s for s in draft if s.unbacked][:MAX_QUOTED]
    for sentence in verified:
        used.extend(sentence.cited)
    explanation = explain(reason, detail)
    if not sources:
        explanation = f"{explanation.rstrip('.')}. {NOTHING_KNOWN}"
    return DegradedFinal(
        reason=reason,
        explanation=explanation,
        completed=checklist.completed(),
        missing=checklist.missing(),
        known_facts=facts[:MAX_FACTS],
        citations=[s.citation() for s in sorted({s.number: s for s in used}.values(), key=lambda s: s.number)],
        next_steps=[step] if (step := next_step(reason)) else [],
        verified=[sentence.text for sentence in verified],
        unchecked=[
            f"{s.without_unbacked()} — {'; '.join(dict.fromkeys(w for *_, w in s.unbacked))}" for s in unchecked
        ],
    )
