"""The report of an evaluation: per case and per run what happened and which expectations held, and the totals a
team decides on (kept, fabrications accepted, wrong answers caught, rates, latency, tokens, cost).

One shape, `Report`, serialised as JSON: it is what `--format json` prints, what `--save-baseline` blesses and
what `--baseline` reads back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from agent import OutcomeKind
from bot.eval.prices import Prices
from bot.eval.runner import Attempt
from bot.eval.scoring import Check, Standing, grounding_lines, score, standing

REPORT_VERSION = 1


class RunRecord(BaseModel):
    """One run of a case."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    run_id: str
    passed: bool
    standing: Standing
    outcome: OutcomeKind
    reason: str
    checks: list[Check]
    grounding: list[str]
    tools: list[str]
    rejected: list[str] = Field(default_factory=list)  # the closing checks that refused a draft
    steps: int
    retries: int = 0  # automatic retries of failed tool calls
    tokens: int
    latency_ms: int
    cost_usd: float | None = None
    replayed: bool = False


class CaseReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    runs: list[RunRecord]

    @property
    def passed(self) -> bool:
        """Held on every run (pass^k)."""
        return all(run.passed for run in self.runs)

    @property
    def flaky(self) -> bool:
        """Held on some runs and not on others."""
        return len({run.passed for run in self.runs}) > 1


class Totals(BaseModel):
    model_config = ConfigDict(frozen=True)

    cases: int
    runs: int
    passed: int  # cases that held on every run
    failed: int
    pass_rate: float  # pass^k: the share of cases that held on all their runs
    flaky: int
    kept: int  # runs answered and correct
    kept_rate: float
    fabrications_accepted: int  # must be 0
    wrong_answers_caught: int  # runs in which the closing checks refused a draft, and nothing wrong got out
    partial_rate: float
    escalation_rate: float
    latency_p50_ms: int
    latency_p95_ms: int
    tokens_per_case: float
    cost_per_case_usd: float | None = None


class Report(BaseModel):
    version: int = REPORT_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: str  # the case file or suite
    model: str  # the model asked, or "replay"
    config_hash: str = ""
    repeat: int = 1
    cases: list[CaseReport]
    totals: Totals

    @property
    def held(self) -> bool:
        return self.totals.failed == 0 and self.totals.fabrications_accepted == 0


def build_report(
    attempts: Sequence[Attempt],
    *,
    source: str,
    model: str,
    config_hash: str,
    repeat: int,
    prices: Prices | None = None,
) -> Report:
    """The attempts (in case order) scored and totalled."""
    cases: dict[str, CaseReport] = {}
    for attempt in attempts:
        case = attempt.case.case
        record = _record(attempt, prices)
        found = cases.get(case.id)
        runs = [*(found.runs if found else []), record]
        cases[case.id] = CaseReport(id=case.id, question=case.question, runs=runs)
    listed = list(cases.values())
    return Report(
        source=source,
        model=model,
        config_hash=config_hash,
        repeat=repeat,
        cases=listed,
        totals=totals_of(listed),
    )


def _record(attempt: Attempt, prices: Prices | None) -> RunRecord:
    result = attempt.result
    expect = attempt.case.case.expect
    checks = score(expect, result, attempt.tools)
    cost = None
    if prices is not None:
        cost = prices.cost(attempt.model, attempt.prompt_tokens, attempt.completion_tokens)
    return RunRecord(
        attempt=attempt.attempt,
        run_id=result.run_id,
        passed=all(c.ok for c in checks),
        standing=standing(expect, result, checks, attempt.rejected),
        outcome=result.outcome,
        reason=result.termination_reason.value,
        checks=checks,
        grounding=grounding_lines(result.grounding),
        tools=attempt.tools,
        rejected=attempt.rejected,
        steps=result.steps,
        retries=result.retries,
        tokens=attempt.prompt_tokens + attempt.completion_tokens or result.tokens,
        latency_ms=result.duration_ms,
        cost_usd=cost,
        replayed=result.replayed,
    )


def totals_of(cases: Sequence[CaseReport]) -> Totals:
    runs = [run for case in cases for run in case.runs]
    count = len(runs) or 1
    passed = sum(case.passed for case in cases)
    latencies = sorted(run.latency_ms for run in runs)
    costs = [run.cost_usd for run in runs]
    cost = None if not runs or any(c is None for c in costs) else sum(c or 0.0 for c in costs) / count
    return Totals(
        cases=len(cases),
        runs=len(runs),
        passed=passed,
        failed=len(cases) - passed,
        pass_rate=passed / (len(cases) or 1),
        flaky=sum(case.flaky for case in cases),
        kept=sum(run.standing == Standing.KEPT for run in runs),
        kept_rate=sum(run.standing == Standing.KEPT for run in runs) / count,
        fabrications_accepted=sum(run.standing == Standing.FABRICATION for run in runs),
        wrong_answers_caught=sum(bool(run.rejected) and run.standing != Standing.FABRICATION for run in runs),
        partial_rate=sum(run.outcome == OutcomeKind.PARTIAL for run in runs) / count,
        escalation_rate=sum(run.outcome == OutcomeKind.ESCALATED for run in runs) / count,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        tokens_per_case=sum(run.tokens for run in runs) / count,
        cost_per_case_usd=cost,
    )


def percentile(ordered: Sequence[int], p: int) -> int:
    """The nearest-rank percentile of sorted values (0 for none)."""
    if not ordered:
        return 0
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]
