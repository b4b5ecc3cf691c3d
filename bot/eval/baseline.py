"""Baselines: a report a team blessed, and what changed since — per-case flips (pass→fail first), the deltas of the
totals, and whether anything regressed (a case flipped to failing, the kept rate fell by more than the tolerance,
or a fabrication was accepted)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import ValidationError

from agent import ConfigError, exception_line
from bot.eval.report import Report

DEFAULT_TOLERANCE = 0.02
COMPARED = (  # the totals whose change a diff shows, in this order
    "kept_rate",
    "fabrications_accepted",
    "wrong_answers_caught",
    "pass_rate",
    "partial_rate",
    "escalation_rate",
    "latency_p50_ms",
    "latency_p95_ms",
    "tokens_per_case",
    "cost_per_case_usd",
)


class Flip(StrEnum):
    BROKE = "pass→fail"
    FIXED = "fail→pass"
    NEW = "new"
    GONE = "gone"


@dataclass(frozen=True)
class CaseFlip:
    case: str
    flip: Flip
    run_id: str | None  # the newest run of the case, to open with `parley runs show`


@dataclass(frozen=True)
class Delta:
    name: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class Comparison:
    flips: list[CaseFlip]
    deltas: list[Delta]
    regressions: list[str]  # each in one line; empty: nothing regressed

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)


def save_baseline(report: Report, path: Path) -> None:
    path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")


def load_baseline(path: Path) -> Report:
    try:
        return Report.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the baseline {path}: {exception_line(exc)}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise ConfigError(f"{path} is not a report of `parley eval` ({where}: {first['msg']})") from None


def compare(baseline: Report, current: Report, *, tolerance: float = DEFAULT_TOLERANCE) -> Comparison:
    before = {case.id: case for case in baseline.cases}
    after = {case.id: case for case in current.cases}
    flips: list[CaseFlip] = []
    for case_id, case in after.items():
        newest = case.runs[-1].run_id if case.runs else None
        old = before.get(case_id)
        if old is None:
            flips.append(CaseFlip(case_id, Flip.NEW, newest))
        elif old.passed and not case.passed:
            flips.append(CaseFlip(case_id, Flip.BROKE, newest))
        elif not old.passed and case.passed:
            flips.append(CaseFlip(case_id, Flip.FIXED, newest))
    flips.extend(CaseFlip(case_id, Flip.GONE, None) for case_id in before if case_id not in after)
    order = list(Flip)
    flips.sort(key=lambda f: order.index(f.flip))
    deltas = [
        Delta(name, getattr(baseline.totals, name), getattr(current.totals, name))
        for name in COMPARED
        if getattr(baseline.totals, name) != getattr(current.totals, name)
    ]
    regressions = [f"{f.case}: {f.flip.value}" for f in flips if f.flip is Flip.BROKE]
    fell = baseline.totals.kept_rate - current.totals.kept_rate
    if fell > tolerance:
        regressions.append(
            f"kept rate fell from {baseline.totals.kept_rate:.1%} to {current.totals.kept_rate:.1%} "
            f"(tolerance {tolerance:.1%})"
        )
    if current.totals.fabrications_accepted:
        regressions.append(f"{current.totals.fabrications_accepted} fabrication(s) accepted")
    return Comparison(flips, deltas, regressions)
