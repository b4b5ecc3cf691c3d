"""Tally: a figure a sentence gives as how many items of a list have some property — "4 of the 6 students
passed", "Quattro treni su cinque", "창가 테이블은 세 개가 비어 있어요" — is checked as that count.

Such a figure is a count by its words: it is counted against a whole ("X of Y", "Y 중 X", "Y个中X个"), or it
carries a counter ("세 개", "三个") where its clause names a state the list's items are in ("창가", "down"). A
value that happens to be equal — an item's 4 minutes, an average of 5.9, a pass mark of 5 — does not back it:
it is one of the counts of a list in a result it rests on, or it is wrong. The counts are those its words may
mean: the list's items (those in the state its clause names, when it names one), and of them the ones in one
state, true or false in one field, or above or below a value the question, the sentence or the result gives
(the pass mark 5.0, "oltre 5 minuti").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from agent.grounding.derivation import MAX_ITEMS, decimal_of, is_state, lists_of_records, says_state
from agent.grounding.figures import Figure, Reading
from agent.grounding.language import COUNTER_AFTER, KOREAN_COUNTERS, OF_FIRST, OF_WORDS, WHOLE_BEFORE, WHOLE_MARKS
from agent.grounding.units import compatible, unit_of_key

MAX_THRESHOLDS = 12  # values tried as the bound of a count ("above 5"): the question's, the sentence's, the result's
# What follows a count: its noun, maybe, and the word that joins it to its whole ("4 of the 6", "Quattro treni su
# cinque"), or a counter ("3개", "三个"). Most figures are followed by neither, which one match tells.
_CUE_AFTER = re.compile(rf"(?P<of>(?:\s+[^\W\d_]+)?{OF_WORDS.pattern})|{COUNTER_AFTER.pattern}")
_NEAR = 24  # characters after a figure that hold its noun and the word for "of"
_KOREAN_COUNTED = re.compile(f"(?:{'|'.join(KOREAN_COUNTERS)})$")
_WHOLE_GAP = 6  # characters between a whole and its count ("5개 중 ", "6人のうち")
_WHOLE_ENDS = frozenset(m[-1] for m in WHOLE_MARKS)  # the last characters of those words, and of what may follow
_COUNTER_CHARS = 3  # between a whole and the word after it: its counter ("5개 중", "6人のうち")


class CountClaim(NamedTuple):
    """A figure its words give as a count of items: `whole`, what it counts against ("of the 6"), when they say;
    `bounds`, the other figures of its clause ("oltre 5 minuti"), which may be what its items are above."""

    reading: Reading  # the count's own
    whole: Reading | None
    bounds: tuple[Reading, ...] = ()


class Tally(NamedTuple):
    """The counts a clause may mean over one list of a result, each with what it counts."""

    name: str
    counts: dict[Decimal, str]


def count_claims(text: str, figures: Sequence[Figure]) -> dict[int, CountClaim]:
    """The figures of `text` (the answer) that its words give as counts — against a whole among `figures`, or
    with a counter — by where each starts. Their `bounds` are left to fill (`bounded`)."""
    claims: dict[int, CountClaim] = {}
    for at, figure in enumerate(figures):
        # Most figures carry a unit, or are too large to count a list's items: only the others are looked at.
        reading = figure.readings[0]
        if reading.unit is None and reading.precision == 1 and 0 <= reading.value <= MAX_ITEMS and not figure.percent:
            claim = _count_claim(text, figure, figures[max(0, at - 1) : at + 2])
            if claim is not None:
                claims[figure.start] = claim
    return claims


def bounded(claim: CountClaim, figures: Sequence[Figure], clause: tuple[int, int]) -> CountClaim:
    """`claim` with the other figures of its clause (`figures` are its sentence's) as what may bound its items."""
    start, end = clause
    whole = claim.whole
    bounds = tuple(
        f.readings[0]
        for f in figures
        if start <= f.start < end and f.readings[0] is not claim.reading and f.readings[0] is not whole
    )
    return claim._replace(bounds=bounds)


def _count_claim(text: str, figure: Figure, neighbours: Sequence[Figure]) -> CountClaim | None:
    """`figure` as a count, when its words give it as one; `neighbours`: it and the figures next to it."""
    end = figure.end
    near = text[end : end + _NEAR]
    # A counter is no ASCII, and a whole is joined by a word for "of" in one of the next two words: the match is
    # made only where one may be.
    plain = near.isascii() and OF_FIRST.isdisjoint(near.split(None, 2)[:2])
    cue = None if plain else _CUE_AFTER.match(text, end)
    at = figure.start
    first = at > 1 and not _WHOLE_ENDS.isdisjoint(text[at - 2 : at])  # "5개 중 3개": its whole may come first
    if cue is None and not first and not ("\uac00" <= figure.text[-1] <= "\ud7a3"):
        return None
    whole: Figure | None = None
    if cue is not None and cue.group("of") is not None:
        whole = next((f for f in neighbours if f.start == cue.end()), None)
        counted = whole is not None
    else:
        counted = cue is not None or bool(_KOREAN_COUNTED.search(figure.text))
    gap = WHOLE_BEFORE.search(text, max(0, at - _WHOLE_GAP), at) if first else None
    if gap is not None:  # "다섯 명 중 두 명", "6人のうち4人": the whole comes first
        whole = next((f for f in neighbours if gap.start() - _COUNTER_CHARS <= f.end <= gap.start()), whole)
        counted = counted or whole is not None
    if not counted:
        return None
    return CountClaim(figure.readings[0], whole.readings[0] if whole is not None else None)


def tallies(data: Any, clause: str, claim: CountClaim, thresholds: Sequence[Reading]) -> Iterator[Tally]:
    """The counts `clause` may mean over each list of records in `data` that `claim` may count: a list of its
    whole (or whose items in the state the clause names are its whole) — or, with no whole, one whose items the
    clause names a state of."""
    said = clause.casefold()
    for name, records in lists_of_records(data):
        items = records[:MAX_ITEMS]
        states = _states(items)
        chosen = {key: named[0] for key, values in states.items() if len(named := _named(values, said)) == 1}
        if claim.whole is None and not chosen:
            continue  # a counter alone ("세 개") counts the items of a list only in a state its clause names
        base = [item for item in items if all(_text(item.get(key)) == value for key, value in chosen.items())]
        if claim.whole is not None and claim.whole.value not in (len(items), len(base)):
            continue
        label = name or "the list"
        where = "".join(f" whose {key} is {value}" for key, value in chosen.items())
        counts = {Decimal(len(items)): f"the number of items in {label}"}
        counts.setdefault(Decimal(len(base)), f"the number of {label}{where}")
        for count, what in _counted(base, said, {k: v for k, v in states.items() if k not in chosen}, thresholds):
            counts.setdefault(Decimal(count), f"the number of {label}{where} {what}")
        yield Tally(label, counts)


def _counted(
    items: list[dict[str, Any]], said: str, states: dict[str, set[str]], thresholds: Sequence[Reading]
) -> Iterator[tuple[int, str]]:
    """How many of `items` are in one state (one its clause names, or the only one with as many), true or false
    in a field, or above or below a threshold."""
    for key, values in states.items():
        tally = {value: sum(1 for item in items if _text(item.get(key)) == value) for value in values}
        named = _named(values, said)
        for value, count in tally.items():
            alone = list(tally.values()).count(count) == 1
            if value in named or (not named and alone):
                yield count, f"whose {key} is {value}"
    if not items:
        return
    for key in items[0]:
        field = [item.get(key) for item in items]
        if all(isinstance(v, bool) for v in field):
            yes = sum(1 for v in field if v)
            yield yes, f"whose {key} is true"
            yield len(field) - yes, f"whose {key} is false"
        elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in field):
            numbers = [decimal_of(v) for v in field if isinstance(v, int | float)]
            unit = unit_of_key(key)[0]
            for bound in thresholds[:MAX_THRESHOLDS]:
                if not compatible(bound.unit, unit):
                    continue
                at = bound.value
                yield sum(1 for n in numbers if n > at), f"whose {key} is above {at}"
                yield sum(1 for n in numbers if n >= at), f"whose {key} is at least {at}"
                yield sum(1 for n in numbers if n < at), f"whose {key} is below {at}"
                yield sum(1 for n in numbers if n <= at), f"whose {key} is at most {at}"


def _states(items: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The fields whose text values are states items share ("down", "창가"), not names each has once."""
    found: dict[str, set[str]] = {}
    for key in items[0] if items else ():
        values = [item.get(key) for item in items]
        if is_state(values):
            found[key] = {_text(v) for v in values}
    return found


def _named(values: set[str], said: str) -> list[str]:
    return sorted(value for value in values if value and says_state(value, said))


def _text(value: Any) -> str:
    return str(value).strip().casefold()
