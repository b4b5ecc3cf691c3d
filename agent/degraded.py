"""Degraded finals: when a run cannot answer fully, say what was done, what is missing, why, what next.

Only what tool results established is repeated, each with its citation; nothing is guessed. Every result the
run got is listed with its key facts, whether or not it ticked a Done item. When the model wrote a draft that
did not pass, its sentences that passed are quoted as they were (with the citations Parley attached), and its
other statements are quoted with each unbacked figure replaced by a plain marker — a figure that failed is
never shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent.done import DoneChecklist
from agent.grounding import SentenceCheck
from agent.result import DegradedFinal, TerminationReason
from agent.source import Source, describe
from agent.text import clip
from agent.wording import NOTHING_KNOWN, explain, more_results, next_step

MAX_FACTS = 20
MAX_QUOTED = 8
FACT_CHARS = 200


def build_degraded_final(
    reason: TerminationReason,
    detail: str,
    checklist: DoneChecklist,
    sources: Sequence[Source],
    draft: Sequence[SentenceCheck] = (),
) -> DegradedFinal:
    """The partial answer: the draft's verified sentences, every fact the results confirmed, and why it ends here."""
    verified = [s for s in draft if s.verified and s.cited][:MAX_QUOTED]
    unchecked = [s for s in draft if s.unbacked][:MAX_QUOTED]
    quoted = {source.number for sentence in verified for source in sentence.cited}
    used: list[Source] = [source for sentence in verified for source in sentence.cited]
    facts: list[str] = []
    seen: set[str] = set()
    for source in sources:
        line = fact_line(source)
        if source.number in quoted or line in seen:
            continue  # a quoted sentence already shows it, or another call returned the same
        seen.add(line)
        if len(facts) == MAX_FACTS:
            facts.append(more_results(len(sources) - len(seen) + 1))
            break
        facts.append(line)
        used.append(source)
    explanation = explain(reason, detail)
    if not sources:
        explanation = f"{explanation.rstrip('.')}. {NOTHING_KNOWN}"
    return DegradedFinal(
        reason=reason,
        explanation=explanation,
        completed=checklist.completed(),
        missing=checklist.missing(),
        known_facts=facts,
        citations=[s.citation() for s in sorted({s.number: s for s in used}.values(), key=lambda s: s.number)],
        next_steps=[step] if (step := next_step(reason)) else [],
        verified=[sentence.shown or sentence.text for sentence in verified],
        unchecked=[
            f"{s.without_unbacked()} — {'; '.join(dict.fromkeys(w for *_, w in s.unbacked))}" for s in unchecked
        ],
    )


def fact_line(source: Source) -> str:
    """One result as a line a person reads, with its tag: "get_weather(city: 上海): temp_c: 28, condition: 多云 [1]";
    a lookup by key as its key and value: "satellites_launched: 47 [1]"."""
    summary = describe(source.data)
    asked = [str(value) for value in source.arguments.values()]
    if all(value in summary for value in asked):
        label = ""  # the result repeats what it was asked: "key: value"
    else:
        args = ", ".join(f"{key}: {_shown(value)}" for key, value in source.arguments.items())
        label = f"{source.tool}({args}): "
    return clip(f"{label}{summary}", FACT_CHARS) + f" {source.tag}"


def _shown(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
