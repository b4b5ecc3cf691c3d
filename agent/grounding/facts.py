"""Facts: what one source states, as an answer could show it (`SourceFacts`).

Its facts are every value in it as a figure could show it — as returned, counted in the scale its field name
says ("…_musd"), as a percentage of a fraction, in the other units of its field's unit ("p50_ms" in seconds) —
and its dates. `facts_of` reads them once per source, on first use.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, NamedTuple

from agent.grounding.dates import WrittenDate, iso_date, read_dates
from agent.grounding.derivation import hull, inside, interval
from agent.grounding.figures import Approximation, Reading, decimal_mark, normalise_digits, plain, read_figures
from agent.grounding.units import UNITS, Family, Unit, compatible, convert, unit_of_key
from agent.result import GroundingRule
from agent.source import Source

_DIGITS = re.compile(r"\d{1,12}")
_SCALARS = (str, int, float)
_ANY_DIGIT = re.compile(r"\d")
_DIGIT_RUNS = re.compile(r"\d+")
_WINDOW = re.compile(r"^\s*(\d{1,4})\s*([dhwDHW]|min)\s*$")
MAX_LEAVES = 2000  # values looked at per result: the shown observation is small, this bounds odd shapes
_HUNDRED = Decimal(100)
# Read for every figure against every value: `Enum.MEMBER` costs a class lookup each time in Python 3.11.
_CURRENCY, _PERCENT, _AS_FRACTION = Family.CURRENCY, Family.PERCENT, GroundingRule.PERCENT
_EPSILON = 1e-9
_CONTEXT_DIGITS = 28  # the precision of Decimal's default context


class Fact(NamedTuple):
    """One way a result's value can appear in an answer."""

    value: Decimal
    unit: Unit | None
    rule: GroundingRule  # EXACT (as returned), SCALED, PERCENT or CONVERTED
    key: str
    returned: Decimal  # the value as the tool returned it

    @property
    def from_a_name(self) -> bool:
        """A figure in a field's name ("seats_active_30d", {"2025": …}), not a value of the result."""
        return self.returned == self.returned.to_integral_value() and str(int(self.returned)) in self.key

    def shown(self) -> str:
        shown = _plain(self.returned)
        return f"{shown} ({self.key})" if self.key else shown


def _plain(value: Decimal) -> str:
    """`plain(value)`, read off its string when that is what `plain` makes of it: an integer or a decimal of at
    most 4 places, without an exponent or trailing zeros — what tools return — within the 28 digits of the
    context (`normalize` rounds to them)."""
    text = str(value)
    if len(text) <= _CONTEXT_DIGITS and "E" not in text and text[-1].isdigit():  # not NaN, not Infinity
        point = text.find(".")
        if point < 0:
            return text
        if len(text) - point <= 5:
            return text.rstrip("0").rstrip(".")
    return plain(value)


class _Sorted:
    """Facts ordered by value, for range lookups."""

    def __init__(self, facts: list[Fact]) -> None:
        keys = [float(fact.value) for fact in facts]
        order = sorted(range(len(facts)), key=keys.__getitem__)
        self.facts = tuple(facts[i] for i in order)
        self.keys = tuple(keys[i] for i in order)
        self.units = frozenset(fact.unit for fact in facts if fact.unit is not None)
        # The exact values in that order, for lookups without a float: each float is its value correctly rounded,
        # so a smaller float is a smaller value — only values that share a float may stand out of order.
        values = tuple(fact.value for fact in self.facts)
        self.values = values if all(a <= b for a, b in itertools.pairwise(values)) else None

    def between(self, low: Decimal, high: Decimal) -> tuple[Fact, ...]:
        lowest, highest = float(low), float(high)
        start = bisect.bisect_left(self.keys, lowest - _EPSILON * max(1.0, abs(lowest)))
        stop = bisect.bisect_right(self.keys, highest + _EPSILON * max(1.0, abs(highest)))
        return self.facts[start:stop]


class SourceFacts:
    """The values of one result, and its dates.

    Two tiers: the result's numbers are read at once; its strings ("44 new customers", "2026-11-30T08:15Z")
    only when a figure is not among the numbers, or a date is asked for — most figures are found first.
    """

    def __init__(self, numbers: list[Fact], texts: list[tuple[str, str]]) -> None:
        self._numbers = _Sorted(numbers)
        self._texts = texts
        self._text_facts: _Sorted | None = None
        self._dates: tuple[WrittenDate, ...] | None = None

    @classmethod
    def of(cls, *values: Any) -> SourceFacts:
        numbers: list[Fact] = []
        texts: list[tuple[str, str]] = []
        for key, leaf in _leaves(values):
            if not isinstance(leaf, str):
                numbers.extend(_number_facts(key, leaf))
            elif _ANY_DIGIT.search(leaf):
                texts.append((key, leaf))
        return cls(numbers, texts)

    @property
    def facts(self) -> tuple[Fact, ...]:
        return self._numbers.facts + self._strings().facts

    @property
    def dates(self) -> tuple[WrittenDate, ...]:
        if self._dates is None:
            self._strings()
        assert self._dates is not None
        return self._dates

    def find(
        self, readings: Sequence[Reading], approximation: Approximation, *, strings: bool = True
    ) -> tuple[Reading, Fact] | None:
        """The first reading some fact gives when written as the figure shows it (units permitting) — in its
        own unit, or converted from another unit of the same kind (ms ↔ s, km ↔ m, °C ↔ °F) — with that fact.
        Every reading is tried against the numbers before any string is read (`strings=False`: never)."""
        found = self.in_numbers(readings, approximation)
        if found is None and strings:
            found = self.in_strings(readings, approximation)
        return found

    def in_numbers(self, readings: Sequence[Reading], approximation: Approximation) -> tuple[Reading, Fact] | None:
        """`find` among the result's numbers only."""
        numbers = self._numbers
        for reading in readings:
            fact = _find(numbers, reading, approximation)
            if fact is not None:
                return reading, fact
        return None

    def in_strings(self, readings: Sequence[Reading], approximation: Approximation) -> tuple[Reading, Fact] | None:
        """`find` among the figures in the result's strings only (read on first need)."""
        if not self._texts:
            return None
        strings = self._strings()
        for reading in readings:
            fact = _find(strings, reading, approximation)
            if fact is not None:
                return reading, fact
        return None

    def _strings(self) -> _Sorted:
        if self._text_facts is None:
            facts: list[Fact] = []
            dates: list[WrittenDate] = []
            for key, text in self._texts:
                stamp = iso_date(text)
                if stamp is not None:  # the commonest dated string in an API's answer: read directly
                    # Its year may stand as a figure ("in 2026"); its month and day are no counts ("eleven").
                    year = Decimal(text[:4])
                    facts.append(Fact(year, None, GroundingRule.EXACT, key, year))
                    dates.append(stamp)
                else:
                    facts.extend(_text_facts(key, text))
                    dates.extend(read_dates(normalise_digits(text)))
            self._text_facts, self._dates = _Sorted(facts), tuple(dates)
        return self._text_facts


def _find(facts: _Sorted, reading: Reading, approximation: Approximation) -> Fact | None:
    unit = reading.unit
    values = facts.values
    if values is not None:
        # The facts in the hull exactly (in their order by value): each is inside, but for one edge.
        low, high, edge = hull(reading, approximation)
        for fact in facts.facts[bisect.bisect_left(values, low) : bisect.bisect_right(values, high)]:
            value = fact.value
            if (value != edge or inside(value, reading, approximation)) and _units_allow(unit, fact):
                return fact
    else:
        low, high = interval(reading, approximation)
        for fact in facts.between(low, high):
            if _units_allow(unit, fact) and inside(fact.value, reading, approximation):
                return fact
    if unit is None or unit.family in (_CURRENCY, _PERCENT) or unit.code == "°":
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


def _parts(text: str) -> list[int]:
    return [int(part) for part in _DIGIT_RUNS.findall(text)]


def _leaves(value: Any) -> list[tuple[str, Any]]:
    """The payload's strings and numbers, each with the name of the field it is in (depth and count bounded)."""
    leaves: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack and len(leaves) < MAX_LEAVES:
        key, item, level = stack.pop()
        if isinstance(item, _SCALARS):
            if item is not True and item is not False:
                leaves.append((key, item))
        elif isinstance(item, dict):
            if level < 32:
                named = item.get("key")
                for name, child in item.items():
                    name = name if isinstance(name, str) else str(name)
                    numbers = _numbers_in_name(name)
                    if numbers:  # a year as a key ({"2025": …}) or a figure in a name ("seats_active_30d")
                        leaves.extend((name, number) for number in numbers)
                    # {"key": "cost_per_satellite_musd", "value": 12}: the value is named by its key.
                    if name == "value" and isinstance(named, str):
                        name = named
                    stack.append((name, child, level + 1))
        elif isinstance(item, list | tuple) and level < 32:
            stack.extend((key, child, level + 1) for child in item)
    return leaves


@lru_cache(maxsize=4096)
def _numbers_in_name(name: str) -> tuple[int, ...]:
    return tuple(int(digits) for digits in _DIGITS.findall(name)) if any(c.isdigit() for c in name) else ()


def number_key(number: int | float) -> Decimal | None:
    """A returned number as the facts hold it (None: not a finite number)."""
    try:
        value = Decimal(repr(number)) if isinstance(number, float) else Decimal(number)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _number_facts(key: str, number: int | float) -> list[Fact]:
    value = number_key(number)
    if value is None:
        return []
    unit, scale = unit_of_key(key)
    facts = [Fact(value, unit, GroundingRule.EXACT, key, value)]
    if scale is not None:
        facts.append(Fact(value * scale, unit, GroundingRule.SCALED, key, value))
    if unit is not None and unit.family is Family.PERCENT:
        facts.append(Fact(value / _HUNDRED, None, GroundingRule.PERCENT, key, value))  # growth_pct 2.24 as 0.0224
    # 0.7532 as 75.3 % needs no fact of its own: a percentage figure is also read as its fraction.
    return facts


def _text_facts(key: str, text: str) -> Iterator[Fact]:
    window = _WINDOW.match(text)
    if window:  # "7d", "24h", "2w": an API's window, as "7 days", "24 hours", "14 days"
        count, unit = Decimal(window.group(1)), window.group(2).lower()
        value, code = (count * 7, "d") if unit == "w" else (count, unit)
        yield Fact(value, UNITS[code], GroundingRule.EXACT, key, count)
        return
    plain = normalise_digits(text)
    for figure in read_figures(plain, mark=decimal_mark(plain)):
        primary = figure.readings[0]
        for reading in figure.readings:
            rule = GroundingRule.PERCENT if figure.percent and reading.unit is None else GroundingRule.EXACT
            yield Fact(reading.value, reading.unit, rule, key, primary.value)


def _units_allow(unit: Unit | None, fact: Fact) -> bool:
    """A percentage counts only for a percentage; otherwise units must not contradict each other."""
    other = fact.unit
    if fact.rule is _AS_FRACTION and other is not None:
        return unit is not None and unit.family is _PERCENT
    if unit is None or other is None or unit is other:
        return True  # what `compatible` says of an unknown unit, or of the very same one
    if unit != other and "°" not in (unit.code, other.code):
        return False  # 28 °F is not 28 °C, 183 s not 183 ms: another unit of a kind is reached by converting
    return compatible(unit, other)


def facts_of(source: Source) -> SourceFacts:
    """The source's facts, read on first use: every draft of a run is checked against every source, and a
    source no figure asks about is never read."""
    return source.memo("facts", lambda: SourceFacts.of(source.arguments, source.data))


def returned(source: Source, limit: int, *, items: bool = True) -> list[Fact]:
    """Up to `limit` numbers of the result's data as it returned them — not its call's arguments, not figures
    in its field names: operands of a derivation the answer did not write out ("50 of the 200 are open" where
    the result says 150 resolved). `items`: the numbers of its lists' items too."""
    return source.memo(
        "returned" if items else "returned_outside_lists",
        lambda: [
            fact
            for key, leaf in data_leaves(source.data, items=items)
            if not isinstance(leaf, str)
            for fact in _number_facts(key, leaf)
            if fact.rule is GroundingRule.EXACT
        ],
    )[:limit]


def inputs_of(sources: Sequence[Source]) -> dict[int, tuple[Source, ...]]:
    """For each result, the earlier results whose values its call used: "calculator(47 * 12)" used 47 from
    [1] and 12 from [2], so an answer citing the product rests on those two as well."""
    inputs: dict[int, tuple[Source, ...]] = {}
    for at, source in enumerate(sources):
        used = _argument_values(source)
        if used:
            inputs[source.number] = tuple(earlier for earlier in sources[:at] if used & _returned_values(earlier))
    return inputs


def read_inputs(source: Source) -> None:
    """Read, once, what a result's call was given and what it returned: what `inputs_of` traces."""
    _argument_values(source)
    _returned_values(source)


def _argument_values(source: Source) -> frozenset[Decimal]:
    def read() -> frozenset[Decimal]:
        values: set[Decimal] = set()
        for _, leaf in _leaves(source.arguments):
            if isinstance(leaf, str):
                values.update(r.value for f in read_figures(normalise_digits(leaf)) for r in f.readings[:1])
            else:
                values.update(f.value for f in _number_facts("", leaf))
        return frozenset(v for v in values if _distinctive(v))

    return source.memo("argument_values", read)


def _returned_values(source: Source) -> frozenset[Decimal]:
    return source.memo("returned_values", lambda: frozenset(fact.value for fact in returned(source, MAX_LEAVES)))


def data_leaves(data: Any, *, items: bool = True) -> list[tuple[str, Any]]:
    """The data's numbers and strings, with their fields, in the result's order (no numbers of field names);
    `items`: in its lists of several items too (a top-level list, or a list of one, is always read)."""
    leaves: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack and len(leaves) < MAX_LEAVES:
        key, item, level = stack.pop(0)
        if isinstance(item, _SCALARS) and item is not True and item is not False:
            leaves.append((key, item))
        elif isinstance(item, dict) and level < 8:
            named = item.get("key")
            stack.extend(
                (named if k == "value" and isinstance(named, str) else str(k), v, level + 1) for k, v in item.items()
            )
        elif isinstance(item, list | tuple) and level < 8 and (items or level == 0 or len(item) == 1):
            stack.extend((key, child, level + 1) for child in item[:MAX_LEAVES])
    return leaves


def _distinctive(value: Decimal) -> bool:
    """A value worth tracing from result to call: not 0, 1 or 2, which any two results share by chance."""
    return abs(value) >= 10 or value != value.to_integral_value()
