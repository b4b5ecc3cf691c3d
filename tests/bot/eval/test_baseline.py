"""Comparing with a blessed report: flips in order (pass→fail first), deltas, and what counts as a regression."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import ConfigError, OutcomeKind
from bot.eval import compare, load_baseline, save_baseline
from bot.eval.baseline import Flip
from bot.eval.report import CaseReport, Report, RunRecord, totals_of
from bot.eval.scoring import Standing


def a_case(case_id: str, *passed: bool, standing: Standing = Standing.KEPT) -> CaseReport:
    runs = [
        RunRecord(
            attempt=i,
            run_id=f"{case_id}-{i}",
            passed=ok,
            standing=standing if ok else Standing.HONEST,
            outcome=OutcomeKind.ANSWERED if ok else OutcomeKind.PARTIAL,
            reason="answered" if ok else "gave_up",
            checks=[],
            grounding=[],
            tools=[],
            steps=2,
            tokens=0,
            latency_ms=100 * i,
        )
        for i, ok in enumerate(passed, start=1)
    ]
    return CaseReport(id=case_id, question="q", runs=runs)


def a_report(*cases: CaseReport) -> Report:
    return Report(source="cases.yaml", model="replay", cases=list(cases), totals=totals_of(cases))


def test_compare_lists_pass_to_fail_first_with_the_run_to_open() -> None:
    before = a_report(a_case("a", True), a_case("b", False), a_case("c", True), a_case("gone", True))
    after = a_report(a_case("b", True), a_case("a", True), a_case("c", False), a_case("new", True))

    comparison = compare(before, after)

    assert [(f.case, f.flip, f.run_id) for f in comparison.flips] == [
        ("c", Flip.BROKE, "c-1"),
        ("b", Flip.FIXED, "b-1"),
        ("new", Flip.NEW, "new-1"),
        ("gone", Flip.GONE, None),
    ]
    assert comparison.regressions[0] == "c: pass→fail"


def test_compare_nothing_regressed_when_only_fixes() -> None:
    comparison = compare(a_report(a_case("a", False)), a_report(a_case("a", True)))

    assert not comparison.regressed
    assert {d.name for d in comparison.deltas} >= {"kept_rate", "pass_rate"}


def test_compare_a_flaky_case_that_held_before_is_a_regression() -> None:
    comparison = compare(a_report(a_case("a", True, True)), a_report(a_case("a", True, False)))

    assert comparison.regressed and comparison.flips[0].flip is Flip.BROKE


def test_compare_any_fabrication_accepted_is_a_regression() -> None:
    bad = a_case("a", True, standing=Standing.FABRICATION)

    assert compare(a_report(bad), a_report(bad)).regressions == ["1 fabrication(s) accepted"]


def test_a_baseline_reads_back_as_it_was_saved(tmp_path: Path) -> None:
    report = a_report(a_case("a", True, False))
    save_baseline(report, tmp_path / "base.json")

    assert load_baseline(tmp_path / "base.json") == report


@pytest.mark.parametrize("text", ["", "{}", "[1, 2]", '{"version": 1}'])
def test_a_file_that_is_no_report_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "base.json").write_text(text, encoding="utf-8")

    with pytest.raises(ConfigError, match="is not a report of `parley eval`"):
        load_baseline(tmp_path / "base.json")
