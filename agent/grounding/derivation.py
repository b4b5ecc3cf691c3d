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
from typing import Any, NamedTuple

from agent.grounding.figures import Approximation, Figure, Reading, plain
from agent.grounding.language import STATE_WORDS
from agent.grounding.units import Family, Unit, compatible, convert, unit_of_key

MAX_OPERANDS = 12  # the nearest ones; a sentence pair rarely holds more figures that matter
_HUNDRED = Decimal(100)
_HALF = Decimal("0.5")  # a step's half: multiplied, not divided (the same value, correctly rounded, for less)


class Operand(NamedTuple):
    """A grounded figure the answer states (or the asker gave, or a result returned), as shown and as its
    source has it."""

    text: str
    values: tuple[Decimal, ...]  # as shown first, then as the tool returned it (when that differs)
    unit: Unit | None
    percent: bool
    tags: tuple[str, ...]
    per: Unit | None = None  # a rate's "per" unit: "1.0832 USD per EUR"


@dataclass(frozen=True)
class Derivation:
    """How a figure follows from operands: `12 = 28 − 16`."""

    formula: str
    operands: tuple[Operand, ...]

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(tag for operand in self.operands for tag in operand.tags))


def find_derivation(
    target: Figure,
    operands: Sequence[Operand],
    *,
    decrease: bool,
    exchange: bool = False,
    anchor: Operand | None = None,
) -> Derivation | None:
    """The first derivation of `target` from `operands` (never itself among them), or None.

    `decrease`: the text around the target says it went down ("fell", "下降", "gesunken"); `exchange`: it
    speaks of a rate of exchange, so an amount in one currency times a bare rate may give another. `anchor`:
    only two-operand derivations that use it (the answer's figure, with values its result did not show).
    """
    pool = [anchor, *operands[:MAX_OPERANDS]] if anchor is not None else list(operands[:MAX_OPERANDS])
    for reading in target.readings:
        low, high = interval(reading, target.approximation)
        for formula, used, value in _candidates(target, reading, pool, decrease, exchange, anchor is None):
            if anchor is not None and anchor not in used:
                continue
            if low <= value <= high and inside(value, reading, target.approximation):
                return Derivation(formula, used)
    return None


# Read for every figure against every value: `Enum.MEMBER` costs a class lookup each time in Python 3.11.
_AT_LEAST, _AT_MOST = Approximation.AT_LEAST, Approximation.AT_MOST


def interval(reading: Reading, approximation: Approximation) -> tuple[Decimal, Decimal]:
    """The closed hull of the values that, written as shown, give this reading (see `_inside` for edges)."""
    value, step = reading.value, reading.precision
    if approximation is _AT_LEAST:
        return value, value + step
    if approximation is _AT_MOST:
        return value - step, value
    if value >= 0:
        return value - step * _HALF, value + step
    return value - step, value + step * _HALF


def hull(reading: Reading, approximation: Approximation) -> tuple[Decimal, Decimal, Decimal]:
    """`interval`, and the one of its edges `inside` may leave out: a value in the interval that is not that edge
    is inside."""
    value, step = reading.value, reading.precision
    if approximation is _AT_LEAST:
        high = value + step
        return value, high, high
    if approximation is _AT_MOST:
        low = value - step
        return low, value, low
    if value >= 0:
        high = value + step
        return value - step * _HALF, high, high
    low = value - step
    return low, value + step * _HALF, low


def inside(value: Decimal, reading: Reading, approximation: Approximation) -> bool:
    """Rounded (half up or half even) or truncated to the shown digit gives the figure; bounds hold."""
    shown, step = reading.value, reading.precision
    if approximation is _AT_LEAST:
        return shown <= value < shown + step
    if approximation is _AT_MOST:
        return shown - step < value <= shown
    if shown < 0:  # the mirror image: −5 is −5.99 truncated or −4.5 rounded, never −6
        return shown - step < value <= shown + step * _HALF
    low, high = shown - step * _HALF, shown + step
    return low <= value < high or value == high == shown + step * _HALF


def _candidates(
    target: Figure, reading: Reading, pool: Sequence[Operand], decrease: bool, exchange: bool, trios: bool
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    percent = target.percent and reading.unit is not None  # the figure read as a percentage, not a fraction
    if reading.unit is not None and not percent:  # "your 21,5 kg suitcase is about 47,4 lb"
        for a in pool:
            converted = convert(a.values[0], a.unit, reading.unit) if a.unit not in (None, reading.unit) else None
            if converted is not None:
                yield f"{plain(converted)} = {a.text} in {reading.unit.code}", (a,), converted
    for a, b in itertools.combinations(pool, 2):
        for x, y in itertools.product(a.values, b.values):
            yield from _symmetric(reading, percent, a, b, x, y, exchange, trios)
    for a, b in itertools.permutations(pool, 2):
        for x, y in itertools.product(a.values, b.values):
            yield from _ordered(reading, percent, a, b, x, y, decrease)
            if target.per is not None:
                yield from _rate(reading, target.per, a, b, x, y)
    if percent or not trios:
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
            for at, whole in enumerate(trio):  # "30 budgeted, 21.5 spent, 4 committed: 4.5 left"
                parts = [op for op in trio if op is not whole]
                rest = values[at] - (total - values[at])
                yield f"{plain(rest)} = {whole.text} − {parts[0].text} − {parts[1].text}", trio, rest
        if reading.unit is None or _unit_of_product(reading.unit, *(op.unit for op in trio)):
            product = values[0] * values[1] * values[2]
            yield f"{plain(product)} = {' × '.join(op.text for op in trio)}", trio, product


def _symmetric(
    reading: Reading, percent: bool, a: Operand, b: Operand, x: Decimal, y: Decimal, exchange: bool, full: bool
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    """Sum, difference (as a magnitude), mean, and product: the order of the operands does not matter.
    `full`: the mean and the product too (not with a value the answer did not write: too many would fit)."""
    used = (a, b)
    high, low = (a, b) if x >= y else (b, a)
    if a.percent and b.percent:  # two percentages: their difference is in points ("40 % to 45 %: 5 points")
        if percent or reading.unit is None:
            yield f"{plain(abs(x - y))} = {high.text} − {low.text}", used, abs(x - y)
        return
    if a.percent or b.percent or percent:
        return
    if not full and (a.unit is None) != (b.unit is None):
        return  # with a value the answer did not write, units must be known alike: no year plus an amount
    if compatible(a.unit, b.unit) and compatible(reading.unit, a.unit) and compatible(reading.unit, b.unit):
        yield f"{plain(x + y)} = {a.text} + {b.text}", used, x + y
        yield f"{plain(abs(x - y))} = {high.text} − {low.text}", used, abs(x - y)
        if full:
            yield f"{plain((x + y) / 2)} = ({a.text} + {b.text}) / 2", used, (x + y) / 2
    if full and _product_in(reading.unit, a, b, exchange):
        yield f"{plain(x * y)} = {a.text} × {b.text}", used, x * y


def _product_in(unit: Unit | None, a: Operand, b: Operand, exchange: bool) -> bool:
    """May `a × b` carry `unit`? One factor's unit, or a rate's ("1,000 EUR × 1.0832 USD per EUR" in USD)."""
    for amount, rate in ((a, b), (b, a)):
        if rate.per is not None and compatible(amount.unit, rate.per):
            return compatible(unit, rate.unit)
    if unit is None or _unit_of_product(unit, a.unit, b.unit):
        return True
    # "at an exchange rate of 1.0832": an amount in one currency times a bare rate is an amount in another;
    # "£1 is € 1,17 worth, so £8,750 is € 10,237.50": times a rate written in the currency it gives.
    if not exchange or unit.family is not Family.CURRENCY:
        return False
    return (a.unit is None) != (b.unit is None) or (unit in (a.unit, b.unit) and a.unit != b.unit)


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
    elif reading.value < 0 and compatible(a.unit, b.unit) and compatible(reading.unit, a.unit):
        yield f"{plain(x - y)} = {a.text} − {b.text}", used, x - y  # "87 → 81: −6", a change with its sign
    elif (reading.unit is None and compatible(a.unit, b.unit)) or (compatible(reading.unit, a.unit) and b.unit is None):
        try:  # a ratio, or an amount per item: "CHF 1'200'000 over 3'417 orders, CHF 351 each"
            ratio = x / y
        except (DivisionByZero, InvalidOperation):
            return
        yield f"{plain(ratio)} = {a.text} / {b.text}", used, ratio


def _rate(
    reading: Reading, per: Unit, a: Operand, b: Operand, x: Decimal, y: Decimal
) -> Iterator[tuple[str, tuple[Operand, ...], Decimal]]:
    """A rate in its own units: "982 km in 9 hours 30 minutes, 103 km/h", "€ 4,350 for 1,450 kg: € 3 per kg"."""
    if a.unit is None or b.unit is None or reading.unit is None or a.percent or b.percent:
        return
    amount, base = convert(x, a.unit, reading.unit), convert(y, b.unit, per)
    if amount is not None and base:
        yield f"{plain(amount / base)} = {a.text} / {b.text}", (a, b), amount / base


def _unit_of_product(result: Unit, *factors: Unit | None) -> bool:
    """A product carries the unit of one factor ("47 × 12 million USD"): never a mix of two known ones."""
    known = [u for u in factors if u is not None and u.family is not Family.PERCENT]
    return len(known) <= 1 and all(compatible(result, u) for u in known)


# --- aggregates over a list in one result ---------------------------------------------------------------------

MAX_ITEMS = 500  # items of a list that are counted or summed
MAX_DISTINCT = 12  # a field with more distinct values is a name, not a state to count by
MAX_AGGREGATES = 400


class Aggregate(NamedTuple):
    """A figure a result states without writing it: how many items of a list it has, how many have a value,
    the sum or the average of a field. `needs`: the word a sentence must say for a count by value to be the one
    it means ("3 of the 5 services are down" counts status "down")."""

    value: Decimal
    unit: Unit | None
    how: str
    needs: str = ""
    others: tuple[str, ...] = ()  # the field's other values: a sentence saying one of them counts those
    alone: bool = True  # no other value of the field has as many items


def aggregates_of(data: Any) -> tuple[Aggregate, ...]:
    """Every aggregate of every list of records in `data` (a result's payload), bounded."""
    found: list[Aggregate] = []
    for name, items in lists_of_records(data, "", 0):
        found.append(Aggregate(Decimal(len(items)), None, f"the number of items in {name or 'the list'}"))
        fields: dict[str, list[Any]] = {}
        for item in items[:MAX_ITEMS]:
            for key, value in item.items():
                fields.setdefault(str(key), []).append(value)
        for key, values in fields.items():
            found.extend(_field_aggregates(name or "the list", key, values, len(items)))
        found.extend(_sums_by_state(name or "the list", items[:MAX_ITEMS], fields))
        if len(found) > MAX_AGGREGATES:
            break
    return tuple(found[:MAX_AGGREGATES])


def _sums_by_state(name: str, items: list[dict[str, Any]], fields: dict[str, list[Any]]) -> Iterator[Aggregate]:
    """ "The 4 completed orders came to 779 元", "net of the cancelled one, 459,60 €": an amount summed over the
    items in one state, or over all but those. Only amounts (a unit, or cents): a count summed over a subset
    matches too many figures by chance."""
    states = [key for key, values in fields.items() if is_state(values)]
    amounts = [
        key
        for key, values in fields.items()
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        and len(values) == len(items)
        and (unit_of_key(key)[0] is not None or any(isinstance(v, float) and v != int(v) for v in values))
    ]
    for state in states[:2]:
        for value in {str(item.get(state)).strip() for item in items}:
            chosen = [item for item in items if str(item.get(state)).strip() == value]
            if len(chosen) in (0, len(items)):
                continue
            for key in amounts[:4]:
                unit = unit_of_key(key)[0]
                total = sum((decimal_of(item[key]) for item in chosen), Decimal(0))
                rest = sum((decimal_of(item[key]) for item in items), Decimal(0)) - total
                yield Aggregate(total, unit, f"the sum of {key} over the {name} whose {state} is {value}")
                yield Aggregate(rest, unit, f"the sum of {key} over the {name} whose {state} is not {value}")


def is_state(values: list[Any]) -> bool:
    """Are `values` (one field's, over a list's items) states the items share ("down", "창가"), not names each
    has once: all text, some repeated, a few distinct?"""
    texts = [v.strip().casefold() for v in values if isinstance(v, str)]
    return len(texts) == len(values) and len(set(texts)) < len(texts) and len(set(texts)) <= MAX_DISTINCT


def decimal_of(value: int | float) -> Decimal:
    """A number as the tool returned it, exactly ("7.5" stays 7.5, not its binary neighbour)."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def extremes_of(data: Any) -> dict[str, tuple[Decimal, Decimal]]:
    """The smallest and the largest value of each numeric field over the items of the lists in `data` (and of
    each label of a mapping of labelled numbers, which is its own field)."""
    found: dict[str, tuple[Decimal, Decimal]] = {}
    for _, items in lists_of_records(data, "", 0):
        if items and "label" in items[0]:
            values = [decimal_of(value) for item in items for key, value in item.items() if key != "label"]
            found.update(dict.fromkeys((str(item["label"]) for item in items), (min(values), max(values))))
            continue
        fields: dict[str, list[Decimal]] = {}
        for item in items[:MAX_ITEMS]:
            for key, value in item.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    fields.setdefault(str(key), []).append(decimal_of(value))
        for key, values in fields.items():
            if len(values) >= 2:
                found[key] = (min(values), max(values))
    return found


def find_aggregate(aggregates: Sequence[Aggregate], target: Figure, words: str) -> tuple[Reading, Aggregate] | None:
    """The aggregate `target` shows (units permitting), whose counted value, if any, `words` (its clause) says."""
    said = words.casefold()
    for reading in target.readings:
        low, high = interval(reading, target.approximation)
        for aggregate in aggregates:
            if not low <= aggregate.value <= high or not compatible(reading.unit, aggregate.unit):
                continue
            if aggregate.needs and not _says(aggregate, said):
                continue
            if inside(aggregate.value, reading, target.approximation):
                return reading, aggregate
    return None


def _says(aggregate: Aggregate, said: str) -> bool:
    """Does a clause count what `aggregate` counts? It says its value or a word for it ("are down", "sind
    ausgefallen", "三个宕机"); or it names none of the field's other values and no other value has as many items
    (a state in words nobody listed)."""
    if says_state(aggregate.needs, said):
        return True
    return aggregate.alone and not any(says_state(other, said) for other in aggregate.others)


def says_state(state: str, said: str) -> bool:
    """Does `said` (casefolded) name `state`, or a word for it ("down": "ausgefallen", "宕机")?"""
    words = (state, *STATE_WORDS.get(state, ()))
    return any(_stands(word, said) for word in words)


def _stands(word: str, text: str) -> bool:
    """`word` is in `text` as a word ("down" is not in "slowdown"; CJK words need no spaces around them)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not word.isascii() or (
            (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum())
        ):
            return True
        at = text.find(word, at + 1)
    return False


def lists_of_records(data: Any, name: str = "", depth: int = 0) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The lists of records in `data`, each with the name of the field that holds it."""
    if depth > 3:
        return
    if isinstance(data, dict):
        labels = _labelled_numbers(data)
        if labels:  # {"te klein": 38, "te groot": 22, …}: a list of counted things, written as a mapping
            yield name, [{"label": label, name or "value": value} for label, value in labels.items()]
            return
        for key, value in data.items():
            yield from lists_of_records(value, str(key), depth + 1)
    elif isinstance(data, list):
        records = [item for item in data if isinstance(item, dict)]
        if len(records) >= 2 and len(records) == len(data):
            yield name, records
        elif len(data) >= 2 and all(isinstance(item, str) for item in data):  # ["W", "W", "V", …]
            yield name, [{name or "value": item} for item in data]
        for item in records[:MAX_ITEMS]:
            for key, value in item.items():
                if isinstance(value, list | dict):
                    yield from lists_of_records(value, str(key), depth + 2)


def _labelled_numbers(data: dict[Any, Any]) -> dict[str, Any]:
    """A mapping from labels to numbers ("计算": 58300, "te klein": 38), or {} when its keys are fields
    ("temp_c", "humidity"): no key is snake_case and some have spaces, capitals or another script than ASCII."""
    if len(data) < 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()):
        return {}
    keys = [str(key) for key in data]
    if any("_" in key for key in keys) or not any(" " in key or not key.isascii() or key[:1].isupper() for key in keys):
        return {}
    return {str(key): value for key, value in data.items()}


def _field_aggregates(name: str, key: str, values: list[Any], size: int) -> Iterator[Aggregate]:
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) >= 2 and len(numbers) == len(values):
        decimals = [decimal_of(n) for n in numbers]
        unit, scale = unit_of_key(key)
        total = sum(decimals, Decimal(0))
        for value, what in ((total, "sum"), (total / len(decimals), "average")):
            yield Aggregate(value, unit, f"the {what} of {key} over {name}")
            if scale is not None:
                yield Aggregate(value * scale, unit, f"the {what} of {key} over {name}")
        return
    if all(isinstance(v, bool) for v in values):
        words = " ".join(part for part in key.casefold().split("_") if len(part) > 2 and part not in ("is", "has"))
        yes = sum(1 for v in values if v)
        alone = yes * 2 != len(values)
        yield Aggregate(Decimal(yes), None, f"the {name} whose {key} is true", words, (), alone)
        yield Aggregate(Decimal(len(values) - yes), None, f"the {name} whose {key} is false", words, (), alone)
        return
    texts = [v.strip() for v in values if isinstance(v, str)]
    counts: dict[str, int] = {}
    for text in texts:
        counts[text.casefold()] = counts.get(text.casefold(), 0) + 1
    # A state items share ("down", "up"), not a name each has once: some value repeats, or all are one.
    if len(texts) == len(values) and len(counts) <= MAX_DISTINCT and (len(counts) < len(texts) or size == 1):
        tally = list(counts.values())
        for text, count in counts.items():
            if text and len(text) <= 40:
                others = tuple(other for other in counts if other != text)
                alone = tally.count(count) == 1
                yield Aggregate(Decimal(count), None, f"the {name} whose {key} is {text}", text, others, alone)
