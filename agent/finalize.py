"""Finalisation: the output constraints a draft answer must meet before anyone sees it.

Every fact cites the tool call it came from (`[n]`, the tag each successful observation carries, or
seed 000's `（来源：get_weather）`), and every figure and date is grounded in what it cites (`grounding`);
in JSON mode the answer must validate against the configured schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date
from typing import Any

import jsonschema

from agent.grounding import Grounding, ground
from agent.source import Source

AnswerCheck = Grounding  # what `check_answer` returns


def check_answer(answer: str, sources: Sequence[Source], question: str, *, today: date | None = None) -> AnswerCheck:
    """Resolve the answer's citations and find its ungrounded figures and dates, and its uncited facts."""
    return ground(answer, sources, question, today=today)


def validate_json_output(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """Parse a JSON answer and validate it; returns the value and the problems (empty when valid)."""
    candidate = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", candidate, re.DOTALL)
    if fenced:
        candidate = fenced.group(1)
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        return None, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    except (ValueError, RecursionError) as exc:  # nested past reading, or a number Python will not read
        return None, [f"not usable JSON: {type(exc).__name__}"]
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    ]
    return value, problems[:10]
