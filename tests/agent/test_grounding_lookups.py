"""The fact-checker's fast lookups say what the plain definitions they replace say: a value's hull and the
edge `inside` may leave out (`hull`) against `inside`; a result's facts looked up by exact value against the
float lookup with its tolerance; a figure's negative readings made on first need against the figure read with
them."""

from __future__ import annotations

import bisect
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding.backing import _negatives
from agent.grounding.derivation import hull, inside, interval
from agent.grounding.facts import Fact, _find, _plain, _Sorted, _units_allow
from agent.grounding.figures import Approximation, Figure, Reading, plain
from agent.grounding.language import says_decrease
from agent.grounding.units import UNITS, convert
from agent.result import GroundingRule
from tests.agent.test_grounding_properties import CHECKS

STEPS = st.sampled_from(["0", "0.0001", "0.001", "0.01", "0.1", "0.5", "1", "10", "100000.0", "1E+6", "2.5"]).map(
    Decimal
)
VALUES = st.one_of(
    st.decimals(min_value=-(10**7), max_value=10**7, allow_nan=False, allow_infinity=False, places=4),
    st.integers(min_value=-(10**12), max_value=10**12).map(Decimal),
    st.sampled_from(["0", "-0", "0.5", "-0.5", "1.25", "9007199254740993", "9007199254740992", "1E+30"]).map(Decimal),
)
APPROXIMATIONS = st.sampled_from(list(Approximation))
UNIT_CHOICES = st.sampled_from([None, "%", "EUR", "USD", "ms", "s", "°C", "°F", "°", "km", "m", "kg", "lb"]).map(
    lambda code: None if code is None else UNITS[code]
)
RULES = st.sampled_from(list(GroundingRule))
READINGS = st.builds(Reading, VALUES, STEPS, UNIT_CHOICES)


@CHECKS
@given(reading=READINGS, approximation=APPROXIMATIONS, offsets=st.lists(st.decimals(0, 1, places=3), max_size=8))
def test_grounding_a_value_in_the_hull_is_inside_but_for_the_edge_hull_names(reading, approximation, offsets):
    low, high, edge = hull(reading, approximation)
    assert (low, high) == interval(reading, approximation)
    for value in {low, high, reading.value, *(low + (high - low) * offset for offset in offsets)}:
        if low <= value <= high:
            assert value == edge or inside(value, reading, approximation)
        else:
            assert not inside(value, reading, approximation)


FACTS = st.lists(st.builds(Fact, VALUES, UNIT_CHOICES, RULES, st.sampled_from(["", "a", "b_pct"]), VALUES), max_size=30)


def _find_by_float(facts: _Sorted, reading: Reading, approximation: Approximation) -> Fact | None:
    """The lookup as it was: floats with a tolerance, then `inside` for each fact in range."""
    low, high = interval(reading, approximation)
    for fact in facts.between(low, high):
        if _units_allow(reading.unit, fact) and inside(fact.value, reading, approximation):
            return fact
    unit = reading.unit
    if unit is None or unit.family.value in ("currency", "percent") or unit.code == "°":
        return None
    for other in facts.units:
        if other.family is not unit.family or other == unit or other.code == "°":
            continue
        first, second = convert(low, unit, other), convert(high, unit, other)
        if first is None or second is None:
            continue
        for fact in facts.between(min(first, second), max(first, second)):
            converted = convert(fact.value, other, unit) if fact.unit == other else None
            if converted is not None and inside(converted, reading, approximation):
                return Fact(converted, unit, GroundingRule.CONVERTED, fact.key, fact.returned)
    return None


@CHECKS
@given(facts=FACTS, readings=st.lists(READINGS, min_size=1, max_size=6), approximation=APPROXIMATIONS)
def test_grounding_a_fact_looked_up_by_its_exact_value_is_the_one_the_float_lookup_finds(
    facts, readings, approximation
):
    # Some of the figures are the facts' own values, so that most lookups find one.
    readings += [Reading(f.value, step, f.unit) for f, step in zip(facts, (Decimal("0.1"), Decimal(1)), strict=False)]
    tier = _Sorted(facts)
    for reading in readings:
        assert _find(tier, reading, approximation) == _find_by_float(tier, reading, approximation)


def test_grounding_facts_that_share_a_float_are_looked_up_by_float():
    close = [Decimal("9007199254740993"), Decimal("9007199254740992.5"), Decimal("9007199254740992")]
    tier = _Sorted([Fact(value, None, GroundingRule.EXACT, "n", value) for value in close])
    assert tier.values is None  # out of order by exact value: the float lookup answers
    reading = Reading(Decimal("9007199254740992"), Decimal(1))
    assert _find(tier, reading, Approximation.EXACT) == _find_by_float(tier, reading, Approximation.EXACT)
    ordered = _Sorted([Fact(Decimal(n), None, GroundingRule.EXACT, "n", Decimal(n)) for n in (3, 1, 2)])
    assert ordered.values == (1, 2, 3) and bisect.bisect_left(ordered.values, Decimal("1.5")) == 1


CLAUSES = [
    "revenue fell 3.2 %",
    "up 3.2 %",
    "Umsatz um 3,2 % gesunken",
    "le chiffre a baissé de 3,2 %",
    "las ventas bajaron un 3,2 %",
    "营收下降3.2%",
    "売上は3.2%減少",
    "매출 3.2% 감소",
    "grew 3.2 %",
    "",
]


@given(clause=st.sampled_from(CLAUSES), values=st.lists(READINGS, min_size=1, max_size=3))
def test_grounding_negative_readings_tried_after_a_figures_own_are_those_it_was_read_with(clause, values):
    figure = Figure("3.2", 0, 3, tuple(values))
    signed = tuple(r._replace(value=-r.value) for r in figure.readings)
    assert _negatives(figure, clause) == (signed if figure.value > 0 and says_decrease(clause) else ())


DECIMALS = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=2),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: Decimal(repr(f))),
    st.integers(min_value=-(10**40), max_value=10**40).map(Decimal),
    st.sampled_from(["-0", "0.0", "-0.00", "100.0", "1.23450", "5.00000", "1E+2", "0.000001", "1" * 28, "1" * 29]).map(
        Decimal
    ),
    st.sampled_from(["NaN", "Infinity", "-Infinity"]).map(Decimal),
)


@CHECKS
@given(value=DECIMALS)
def test_grounding_a_value_read_off_its_string_is_shown_as_plain_shows_it(value):
    try:
        expected = plain(value)
    except (TypeError, ArithmeticError):
        expected = None  # NaN: `plain` has no answer, nor may the shortcut
    try:
        shortcut = _plain(value)
    except (TypeError, ArithmeticError):
        shortcut = None
    assert shortcut == expected
