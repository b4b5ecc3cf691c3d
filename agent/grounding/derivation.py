"""Derivation: a figure the answer computed from figures it cites — verified, never taken on trust.

"Shanghai is 12 degrees warmer" after 28 °C [1] and 16 °C [2]; "55 together" after 34 [1] and 21 [2];
"a resolution rate of 75 %" after 150 of 200 [1]. A figure is derived when it is the sum, difference,
product, ratio, mean or percentage of two or three operands (at three: sum, product, mean), as shown or as
the tool gave them, with units that agree. A percentage change has a direction and a base: "up 25 %" from
80 to 100, never "up 20 %" (that is the change measured on the wrong base).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import NamedTuple

from agent.grounding.figures import Approximation, Figure, Reading, plain
from agent.grounding.units import Family, Unit, compatible

MAX_OPERANDS = 12  # the nearest ones; a sentence pair rarely holds more figures that matter
_HUNDRED = Decimal(100)


class Operand(NamedTuple):
    """A grounded figure the answer states (or the asker gave), as shown and as its source has it."""

    text: str
    values: tuple[Decimal, ...]  # as shown first, then as the tool returned it (when that differs)
    unit: Unit | None
    percent: bool
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Derivation:
    """How a figure follows from operands: `12 = 28 − 16`."""

    formula: str
    operands: tuple[Operand, ...]

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(tag for operand in self.operands for tag in operand.tags))


def find_derivation(target: Figure, operands: Sequence[Operand], *, decrease: bool) -> Derivation | None:
    """The first derivation of `target` from `operands` (never itself among them), or None.

    `decrease`: the text around the target says it went down ("fell", "下降", "gesunken").
    """
    pool = list(operands[:MAX_OPERANDS])
    for reading in target.readings:
        low, high = interval(reading, target.approximation)
        for formula, used, value in _candidates(target, reading, pool, decrease):
            if low <= value <= high and inside(value, reading, target.approximation):
                return Derivation(formula, used)
    return None


def interval(reading: Reading, approximation: Approximation) -> tuple[Decimal, Decimal]:
    """The closed hull of the values that, written as shown, give this reading (see `_inside` for edges)."""
    value, step = reading.value, reading.precision
    if approximation is Approximation.AT_LEAST:
        return value, value + step
    if approximation is Approximation.AT_MOST:
        return value - step, value
    if value >= 0:
        return value - step / 2, value + step
    return value - step, value + step / 2


def inside(value: Decimal, reading: Reading, approximation: Approximation) -> bool:
    """Rounded (half up or half even) or truncated to the shown digit gives the figure; bounds hold."""
    shown, step = reading.value, reading.precision
    if approximation is Approximation.AT_LEAST:
        return shown <= value < shown + step
    if approximation is Approximation.AT_MOST:
        return shown - step < value <= shown
    low, high = (shown - step / 2, shown + step) if shown >= 0 else (shown - step, shown + step / 2)
    return low <= value < high or value == high == shown + step / 2


def _candidates(
    target: Figure, reading: Reading, pool: Sequence[Operand], decrease: bool
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    percent = target.percent and reading.unit is not None  # the figure read as a percentage, not a fraction
    for a, b in itertools.combinations(pool, 2):
        for x, y in itertools.product(a.values, b.values):
            yield from _symmetric(reading, percent, a, b, x, y)
    for a, b in itertools.permutations(pool, 2):
        for x, y in itertools.product(a.values, b.values):
            yield from _ordered(reading, percent, a, b, x, y, decrease)
    if percent:
        return
    for trio in itertools.combinations(pool, 3):
        if any(op.percent for op in trio) or not all(compatible(trio[0].unit, op.unit) for op in trio):
            continue
        values = [op.values[0] for op in trio]
        names = " + ".join(op.text for op in trio)
        if compatible(reading.unit, trio[0].unit):
            total = values[0] + values[1] + values[2]
            yield f"{plain(total)} = {names}", trio, total
            yield f"{plain(total / 3)} = ({names}) / 3", trio, total / 3
        if reading.unit is None or _unit_of_product(reading.unit, *(op.unit for op in trio)):
            product = values[0] * values[1] * values[2]
            yield f"{plain(product)} = {' × '.join(op.text for op in trio)}", trio, product


def _symmetric(
    reading: Reading, percent: bool, a: Operand, b: Operand, x: Decimal, y: Decimal
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    """Sum, difference (as a magnitude), mean, and product: the order of the operands does not matter."""
    used = (a, b)
    high, low = (a, b) if x >= y else (b, a)
    if a.percent and b.percent:  # two percentages: their difference is in points ("40 % to 45 %: 5 points")
        if percent or reading.unit is None:
            yield f"{plain(abs(x - y))} = {high.text} − {low.text}", used, abs(x - y)
        return
    if a.percent or b.percent or percent:
        return
    if compatible(a.unit, b.unit) and compatible(reading.unit, a.unit) and compatible(reading.unit, b.unit):
        yield f"{plain(x + y)} = {a.text} + {b.text}", used, x + y
        yield f"{plain(abs(x - y))} = {high.text} − {low.text}", used, abs(x - y)
        yield f"{plain((x + y) / 2)} = ({a.text} + {b.text}) / 2", used, (x + y) / 2
    if reading.unit is None or _unit_of_product(reading.unit, a.unit, b.unit):
        yield f"{plain(x * y)} = {a.text} × {b.text}", used, x * y


def _ordered(
    reading: Reading, percent: bool, a: Operand, b: Operand, x: Decimal, y: Decimal, decrease: bool
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    """Ratio, share, change and "a % of b": which operand is the base matters."""
    used = (a, b)
    if a.percent and not b.percent and not percent:  # "20 % of 300"
        if compatible(reading.unit, b.unit):
            yield f"{plain(x / _HUNDRED * y)} = {a.text} × {b.text}", used, x / _HUNDRED * y
        return
    if a.percent or b.percent or y == 0:
        return
    if percent:
        if not compatible(a.unit, b.unit):
            return
        share = x / y * _HUNDRED
        yield f"{plain(share)} % = {a.text} / {b.text}", used, share
        change = (x - y) / y * _HUNDRED
        if reading.value < 0:
            yield f"{plain(change)} % = ({a.text} − {b.text}) / {b.text}", used, change
        elif (change < 0) == decrease:
            yield f"{plain(change)} % = ({a.text} − {b.text}) / {b.text}", used, abs(change)
    elif reading.unit is None or (compatible(reading.unit, a.unit) and b.unit is None):
        try:  # a ratio, or an amount per item: "CHF 1'200'000 over 3'417 orders, CHF 351 each"
            yield f"{plain(x / y)} = {a.text} / {b.text}", used, x / y
        except (DivisionByZero, InvalidOperation):
            return


def _unit_of_product(result: Unit, *factors: Unit | None) -> bool:
    """A product carries the unit of one factor ("47 × 12 million USD"): never a mix of two known ones."""
    known = [u for u in factors if u is not None and u.family is not Family.PERCENT]
    return len(known) <= 1 and all(compatible(result, u) for u in known)
