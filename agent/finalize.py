"""Finalisation: the output format a draft answer must meet before anyone sees it.

In JSON mode the answer must validate against the configured schema (seed 000's validate-plus-repair path);
that every fact is cited and grounded is the fact-checker's part (`agent.grounding`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema


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
