"""Finalisation: the output constraints a draft answer must meet before anyone sees it.

Every fact cites the tool call it came from (`[n]`, the tag each successful observation carries, or
seed 000's `（来源：get_weather）`), and every figure and date is grounded in what it cites (`grounding`);
in JSON mode the answer must validate against the configured schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import jsonschema

from agent.grounding import SentenceCheck, ground
from agent.result import Citation, GroundedFigure
from agent.source import Source


@dataclass
class AnswerCheck:
    citations: list[Citation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    grounded: list[GroundedFigure] = field(default_factory=list)
    sentences: list[SentenceCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_answer(answer: str, sources: Sequence[Source], question: str, *, today: date | None = None) -> AnswerCheck:
    """Resolve the answer's citations and find its ungrounded figures and dates, and its uncited facts."""
    verdict = ground(answer, sources, question, today=today)
    cited = sorted(verdict.cited, key=lambda s: s.number)
    return AnswerCheck(
        citations=[source.citation() for source in cited],
        problems=verdict.problems,
        grounded=verdict.grounded,
        sentences=verdict.sentences,
    )


def validate_json_output(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """Parse a JSON answer and validate it; returns the value and the problems (empty when valid)."""
    candidate = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", candidate, re.DOTALL)
    if fenced:
        candidate = fenced.group(1)
    try:
        value = json.loads(candidate)
    except ValueError as exc:
        return None, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    ]
    return value, problems[:10]
