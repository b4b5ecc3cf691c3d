"""Records: the items one result lists, each with the names it is about and the values it holds.

A batch call or a list endpoint answers for several things at once ("/checkout 912 ms, /search 412 ms";
{"Berlin": {…}, "Paris": {…}}). Which result states a figure then does not say whose it is: the item does.
A figure one item holds, written where the answer names another item of the same list, is swapped within
that result — "/checkout is at 412 ms" with /search's 412.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, NamedTuple

from agent.grounding.facts import MAX_LEAVES, data_leaves, number_key
from agent.grounding.names import identifies, names_in
from agent.source import Source

MAX_RECORDS = 200  # items of a result looked at: the shown observation is small, this bounds odd shapes
_MAX_DEPTH = 6


class Record(NamedTuple):
    """One item of a list in a result."""

    names: frozenset[str]  # what it is about, as its identity fields (or its key in a mapping) say
    values: frozenset[tuple[str, Decimal]]  # its numbers, each with its field


def records_of(source: Source) -> tuple[Record, ...]:
    """The items of the result's lists that name what they are about — two at least, or none."""
    found = source.memo("records", lambda: tuple(_records(source.data, 0)))
    return found if len(found) > 1 else ()


def owners(records: tuple[Record, ...], key: str, value: Decimal) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the items that hold `value` in field `key`, and the names only other items have. Both empty
    when no item, or every item, holds it (a value all share is no one item's)."""
    holding = [r for r in records if (key, value) in r.values]
    if not holding or len(holding) == len(records):
        return frozenset(), frozenset()
    own = frozenset(name for r in holding for name in r.names)
    others = frozenset(name for r in records if (key, value) not in r.values for name in r.names) - own
    return own, others


def _records(data: Any, depth: int) -> Iterator[Record]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, list):
        for item in data[:MAX_RECORDS]:
            if isinstance(item, dict):
                names = frozenset(_item_names(item))
                if names:
                    yield Record(names, _values(item))
            yield from _records(item, depth + 1)
    elif isinstance(data, dict):
        keyed = [(k, v) for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)]
        if len(keyed) > 1 and len(keyed) == len(data):  # {"Berlin": {…}, "Paris": {…}}: each key names its item
            for name, item in keyed[:MAX_RECORDS]:
                names = frozenset((*names_in(name, identifying=True), *_item_names(item)))
                if names:
                    yield Record(names, _values(item))
        for value in data.values():
            yield from _records(value, depth + 1)


def _item_names(item: dict[Any, Any]) -> Iterator[str]:
    for key, value in item.items():
        if identifies(str(key)):
            yield from names_in(value, identifying=True)


def _values(item: dict[Any, Any]) -> frozenset[tuple[str, Decimal]]:
    return frozenset(
        (key, value)
        for key, leaf in data_leaves(item)[:MAX_LEAVES]
        if not isinstance(leaf, str) and (value := number_key(leaf)) is not None
    )
