"""Source: a successful tool result an answer may cite, and the facts it states (`SourceFacts`).

A source holds what the model was shown (`data`: the observation's payload after any cut), never the whole
raw result: a figure only in the part the model never saw cannot back an answer. Its facts are every value
in it as a figure could show it — as returned, counted in the scale its field name says ("…_musd"), as a
percentage of a fraction, in the other units of its field's unit ("p50_ms" in seconds) — and its dates.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, NamedTuple

from agent.dates import WrittenDate, read_dates
from agent.derivation import inside, interval
from agent.figures import Approximation, Reading, decimal_mark, normalise_digits, plain, read_figures
from agent.result import Citation, GroundingRule
from agent.units import Family, Unit, compatible, convert, unit_of_key

_DIGITS = re.compile(r"\d{1,12}")
MAX_LEAVES = 2000  # values looked at per result: the shown observation is small, this bounds odd shapes
_HUNDRED = Decimal(100)
_EPSILON = 1e-9


class Fact(NamedTuple):
    """One way a result's value can appear in an answer."""

    value: Decimal
    unit: Unit | None
    rule: GroundingRule  # EXACT (as returned), SCALED, PERCENT or CONVERTED
    key: str
    returned: Decimal  # the value as the tool returned it

    def shown(self) -> str:
        where = f" ({self.key})" if self.key else ""
        return f"{plain(self.returned)}{where}"


@dataclass(frozen=True)
class SourceFacts:
    """The values of one result, sorted for range lookups, and its dates."""

    facts: tuple[Fact, ...]
    dates: tuple[WrittenDate, ...]
    _keys: tuple[float, ...] = field(repr=False, default=())

    @classmethod
    def of(cls, *values: Any) -> SourceFacts:
        facts: list[Fact] = []
        dates: list[WrittenDate] = []
        for key, leaf in _leaves(values):
            if isinstance(leaf, str):
                facts.extend(_text_facts(key, leaf))
                if any(ch.isdigit() for ch in leaf):
                    dates.extend(read_dates(normalise_digits(leaf)))
            else:
                facts.extend(_number_facts(key, leaf))
        ordered = sorted(facts, key=lambda f: float(f.value))
        return cls(tuple(ordered), tuple(dates), tuple(float(f.value) for f in ordered))

    def find(self, reading: Reading, approximation: Approximation) -> Fact | None:
        """A fact that, written as the figure shows it, gives this reading (units permitting) — in its own
        unit, or converted from another unit of the same kind (ms ↔ s, km ↔ m, °C ↔ °F)."""
        low, high = interval(reading, approximation)
        for fact in self._between(low, high):
            if _units_allow(reading.unit, fact) and inside(fact.value, reading, approximation):
                return fact
        unit = reading.unit
        if unit is None or unit.family in (Family.CURRENCY, Family.PERCENT) or unit.code == "°":
            return None
        for other in {f.unit for f in self.facts if f.unit is not None and f.unit.family is unit.family}:
            if other == unit or other.code == "°":
                continue
            edges = [convert(edge, unit, other) for edge in (low, high)]
            if edges[0] is None or edges[1] is None:
                continue
            for fact in self._between(min(edges), max(edges)):  # type: ignore[type-var]
                converted = convert(fact.value, other, unit) if fact.unit == other else None
                if converted is not None and inside(converted, reading, approximation):
                    return Fact(converted, unit, GroundingRule.CONVERTED, fact.key, fact.returned)
        return None

    def _between(self, low: Decimal, high: Decimal) -> tuple[Fact, ...]:
        start = bisect.bisect_left(self._keys, float(low) - _EPSILON * max(1.0, abs(float(low))))
        stop = bisect.bisect_right(self._keys, float(high) + _EPSILON * max(1.0, abs(float(high))))
        return self.facts[start:stop]


@dataclass(frozen=True)
class Source:
    """A successful observation that an answer may cite."""

    number: int
    tool: str
    tool_call_id: str
    step: int
    arguments: dict[str, Any]
    data: Any  # the payload as the model was shown it

    @property
    def tag(self) -> str:
        return f"[{self.number}]"

    @cached_property
    def facts(self) -> SourceFacts:
        # Cached: every draft is checked against every source; built on first use, never for unread sources.
        return SourceFacts.of(self.arguments, self.data)

    def citation(self) -> Citation:
        return Citation(
            marker=self.tag, tool=self.tool, tool_call_id=self.tool_call_id, step=self.step, arguments=self.arguments
        )

    def summary(self, limit: int = 160) -> str:
        """The result for a person: `key: value` pairs, not JSON."""
        text = describe(self.data)
        return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(data: Any) -> str:
    """A tool's result in words a person reads: `temp_c: 28, condition: cloudy`; a key/value pair as
    `cost_per_satellite_musd: 12`."""
    if isinstance(data, dict):
        if set(data) == {"key", "value"} or (set(data) >= {"key", "value"} and len(data) <= 3):
            return f"{data['key']}: {describe(data['value'])}"
        return ", ".join(f"{key}: {describe(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "; ".join(describe(item) for item in data)
    if data is None:
        return "nothing"
    if isinstance(data, bool):
        return "yes" if data else "no"
    return str(data)


def _leaves(value: Any, key: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    count = 0
    stack: list[tuple[str, Any, int]] = [(key, value, depth)]
    while stack and count < MAX_LEAVES:
        key, item, level = stack.pop()
        if isinstance(item, dict):
            if level < 32:
                named = item.get("key") if isinstance(item.get("key"), str) else None
                for name, child in reversed(list(item.items())):
                    name = str(name)
                    for digits in _DIGITS.findall(name):
                        count += 1
                        yield key, int(digits)  # a year as a key ({"2025": …}), or "seats_active_30d"
                    # {"key": "cost_per_satellite_musd", "value": 12}: the value is named by its key
                    stack.append((named if name == "value" and named else name, child, level + 1))
        elif isinstance(item, list | tuple):
            if level < 32:
                stack.extend((key, child, level + 1) for child in reversed(item))
        elif isinstance(item, str | int | float) and not isinstance(item, bool):
            count += 1
            yield key, item


def _number_facts(key: str, number: int | float) -> Iterator[Fact]:
    try:
        value = Decimal(repr(number)) if isinstance(number, float) else Decimal(number)
    except InvalidOperation:
        return
    if not value.is_finite():
        return
    unit, scale = unit_of_key(key)
    yield Fact(value, unit, GroundingRule.EXACT, key, value)
    if scale is not None:
        yield Fact(value * scale, unit, GroundingRule.SCALED, key, value)
    if unit is not None and unit.family is Family.PERCENT:
        yield Fact(value / _HUNDRED, None, GroundingRule.PERCENT, key, value)  # growth_pct 2.24 as 0.0224
    # 0.7532 as 75.3 % needs no fact of its own: a percentage figure is also read as its fraction.


def _text_facts(key: str, text: str) -> Iterator[Fact]:
    if not any(ch.isdigit() for ch in text):
        return
    plain = normalise_digits(text)
    for figure in read_figures(plain, mark=decimal_mark(plain)):
        primary = figure.readings[0]
        for reading in figure.readings:
            rule = GroundingRule.PERCENT if figure.percent and reading.unit is None else GroundingRule.EXACT
            yield Fact(reading.value, reading.unit, rule, key, primary.value)


def _units_allow(unit: Unit | None, fact: Fact) -> bool:
    """A percentage counts only for a percentage; otherwise units must not contradict each other."""
    if fact.rule is GroundingRule.PERCENT and fact.unit is not None:
        return unit is not None and unit.family is Family.PERCENT
    return compatible(unit, fact.unit)
