"""Scoring one run of a case: each expectation checked (✔/✘ with what was seen), and what the run amounts to.

What Parley knows and a generic harness does not is used here: a figure counts only when the fact-checker
grounded it, and a wrong draft the closing checks refused is told apart from a wrong answer that got through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from agent import GroundedFigure, OutcomeKind, RunResult
from bot.eval.cases import Expect

# Digits grouped by a comma, a point, a space or an apostrophe ("1,234", "1 234", "1'234") read as one number.
_GROUPING = re.compile(r"(?<=\d)[,\u00a0\u202f ' ](?=\d{3}(?!\d))")


class Check(BaseModel):
    """One expectation of a case, as one run met it or not."""

    model_config = ConfigDict(frozen=True)

    name: str  # "outcome", "figure 564", "not_tool transfer_funds", …
    ok: bool
    seen: str  # what the run did, in a few words


class Standing(StrEnum):
    """What one run amounts to, for the totals."""

    KEPT = "kept"  # answered, and every expectation held
    FABRICATION = "fabrication_accepted"  # answered, but the answer is wrong (a figure, an outcome): it got out
    CAUGHT = "caught"  # not answered: a wrong draft was refused by the closing checks, nothing wrong got out
    HONEST = "honest"  # not answered, no draft refused (partial, escalated, refused, held)


def score(expect: Expect, result: RunResult, tools: Sequence[str]) -> list[Check]:
    """Every expectation of `expect`, checked against one run."""
    checks: list[Check] = []
    if expect.outcome is not None:
        checks.append(Check(name="outcome", ok=result.outcome == expect.outcome, seen=result.outcome.value))
    if expect.reason is not None:
        reason = result.termination_reason
        checks.append(Check(name="reason", ok=reason == expect.reason, seen=reason.value))
    answered = result.outcome == OutcomeKind.ANSWERED
    for figure in expect.figures:
        said = appears(figure, result.answer)
        grounded = answered and any(appears(figure, g.figure) for g in result.grounding)
        seen = "grounded" if said and grounded else ("not grounded" if said else "not in the answer")
        checks.append(Check(name=f"figure {figure}", ok=said and grounded, seen=seen))
    for figure in expect.not_figures:
        said = appears(figure, result.answer)
        checks.append(Check(name=f"not_figure {figure}", ok=not said, seen="in the answer" if said else "absent"))
    called = set(tools)
    for tool in expect.tools:
        checks.append(Check(name=f"tool {tool}", ok=tool in called, seen="called" if tool in called else "not called"))
    for tool in expect.not_tools:
        checks.append(
            Check(name=f"not_tool {tool}", ok=tool not in called, seen="called" if tool in called else "not called")
        )
    if expect.max_steps is not None:
        checks.append(Check(name="max_steps", ok=result.steps <= expect.max_steps, seen=f"{result.steps} steps"))
    return checks


def standing(expect: Expect, result: RunResult, checks: Sequence[Check], rejected: Sequence[str]) -> Standing:
    """Kept, a fabrication accepted, a wrong answer caught, or an honest end without an answer."""
    if result.outcome == OutcomeKind.ANSWERED:
        wrong_content = any(not c.ok for c in checks if c.name.startswith(("figure ", "not_figure ")))
        should_not_answer = expect.outcome is not None and expect.outcome != OutcomeKind.ANSWERED
        if wrong_content or should_not_answer:
            return Standing.FABRICATION
        if all(c.ok for c in checks):
            return Standing.KEPT
    return Standing.CAUGHT if rejected else Standing.HONEST


def appears(figure: str, text: str) -> bool:
    """`figure` stands in `text` as a number of its own: "564" in "564 million USD", not in "1564" or "564.5"."""
    wanted = _GROUPING.sub("", figure.strip())
    if not wanted:
        return False
    plain = _GROUPING.sub("", text)
    pattern = (r"(?<![\d.,])" if wanted[0].isdigit() else "") + re.escape(wanted)
    pattern += r"(?![\d]|[.,]\d)" if wanted[-1].isdigit() else ""
    return re.search(pattern, plain) is not None


def grounding_lines(grounding: Sequence[GroundedFigure]) -> list[str]:
    """Each grounded figure in one line: `564 (derived): 564 = 47 × 12 from [1], [2]`."""
    return [f"{g.figure} ({g.rule.value}): {g.how}" for g in grounding]
