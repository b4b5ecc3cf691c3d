"""Scoring one run: figures told apart from their neighbours, grounding required, and what a run amounts to."""

from __future__ import annotations

import pytest

from agent import GroundedFigure, GroundingRule, RunResult, RunStatus, TerminationReason
from bot.eval import Expect, Standing, appears, score
from bot.eval.prices import Prices
from bot.eval.report import percentile
from bot.eval.scoring import standing


def a_result(answer: str, *, grounded: tuple[str, ...] = (), reason=TerminationReason.ANSWERED) -> RunResult:
    return RunResult(
        run_id="r1",
        question="q",
        status=reason.status,
        termination_reason=reason,
        answer=answer,
        citations=[],
        completed=[],
        missing=[],
        steps=3,
        llm_calls=3,
        tool_calls=2,
        retries=0,
        critique_rounds=0,
        grounding=[GroundedFigure(figure=f, rule=GroundingRule.EXACT, how=f"{f} ← [1]") for f in grounded],
    )


@pytest.mark.parametrize(
    ("figure", "text", "found"),
    [
        ("564", "Zephyr Labs spent 564 million USD [3].", True),
        ("564", "It spent 1564 million.", False),
        ("564", "It spent 564.5 million.", False),
        ("1234", "a total of 1,234 units", True),
        ("1,234", "a total of 1 234 units", True),
        ("28", "上海 28°C，北京 22°C", True),
        ("2", "上海 28°C", False),
        ("%", "a share of 12%", True),
        ("", "anything", False),
    ],
)
def test_appears_finds_a_figure_as_a_number_of_its_own(figure: str, text: str, found: bool) -> None:
    assert appears(figure, text) is found


def test_score_needs_each_figure_said_and_grounded() -> None:
    expect = Expect(outcome="answered", figures=["564", "47"], not_figures=["574"], tools=["calculator"])
    result = a_result("47 satellites, 564 million USD", grounded=("564 million USD",))

    checks = {c.name: (c.ok, c.seen) for c in score(expect, result, ["knowledge_lookup"])}

    assert checks == {
        "outcome": (True, "answered"),
        "figure 564": (True, "grounded"),
        "figure 47": (False, "not grounded"),
        "not_figure 574": (True, "absent"),
        "tool calculator": (False, "not called"),
    }


def test_a_wrong_figure_that_got_out_is_a_fabrication_accepted() -> None:
    expect = Expect(figures=["564"], not_figures=["574"])
    result = a_result("574 million USD", grounded=("574 million USD",))
    checks = score(expect, result, [])

    assert standing(expect, result, checks, rejected=[]) is Standing.FABRICATION


def test_an_answer_where_none_was_expected_is_a_fabrication_accepted() -> None:
    expect = Expect(outcome="partial")
    result = a_result("The market share is 12% [1].", grounded=("12%",))

    assert standing(expect, result, score(expect, result, []), rejected=[]) is Standing.FABRICATION


def test_a_refused_draft_and_an_honest_end_is_caught_and_without_a_draft_honest() -> None:
    expect = Expect(outcome="answered", figures=["564"])
    result = a_result("I could not find it.", reason=TerminationReason.UNGROUNDED_ANSWER)
    checks = score(expect, result, [])

    assert result.status is not RunStatus.SOLVED
    assert standing(expect, result, checks, rejected=["grounding"]) is Standing.CAUGHT
    assert standing(expect, result, checks, rejected=[]) is Standing.HONEST


def test_prices_cost_by_model_and_replays_cost_nothing() -> None:
    prices = Prices.model_validate({"prices": {"gpt-4.1": {"prompt": 2.0, "completion": 8.0}}})

    assert prices.cost("gpt-4.1", 1_000_000, 500_000) == pytest.approx(6.0)
    assert prices.cost("", 10, 10) == 0.0
    assert prices.cost("llama3.1", 10, 10) is None


def test_percentile_is_the_nearest_rank() -> None:
    assert percentile([], 95) == 0
    assert percentile([10, 20, 30, 40], 50) == 20
    assert percentile(list(range(1, 101)), 95) == 95
