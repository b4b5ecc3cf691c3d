"""Comparisons: what an answer says of one item against the others of its kind, where the quantity compared is
no single field of the results.

"Harbor Street Garage is the fullest, with 571 of its 620 spaces taken (92 %)": "fullest" compares
occupied / capacity, a ratio of two fields of each garage, and Elm Row Deck's 402 / 410 is larger, though its
402 is not. "Le plus cher au m²" compares price / surface, even where the answer writes the price alone. "Late
trips fell to 221 last week", after 189 the week before: a direction between two results of one tool, asked
for two periods, in the order of their periods.

The items compared are those a superlative over a field compares (`backing`): the items of the result's list,
or the results of the same tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache

from agent.grounding.facts import returned
from agent.grounding.language import FALL, FROM, RISE
from agent.grounding.records import records_of
from agent.grounding.superlatives import Direction
from agent.source import Source

MAX_PEER_VALUES = 64  # values of each result read as one item's fields

# "second highest", "zweitgrößte", "la deuxième plus chère", "第二高", "二番目に高い": a rank, not the extreme.
RANKED = re.compile(
    r"\b(?:second|third|fourth|next|runner|zweit|dritt|deuxième|troisième|segund[oa]|tercer[oa]?|terz[oa]"
    r"|tweede|derde)\w*|第[二三四]|[二三]番目|두\s?번째|세\s?번째",
    re.IGNORECASE,
)
# "not the fullest", "nicht gesunken", "n'a pas baissé", "no bajó", "没有下降", "下がっていない": a denial.
DENIED = re.compile(
    r"\b(?:not|never|nicht|nie|kein\w*|pas|jamais|no|nunca|non|mai|não|nunca|niet|geen)\b|n't|没有|沒有|并非|不是"
    r"|ではな|じゃな|ていない|なかった|않|아니|없",
    re.IGNORECASE,
)

# "per m²", "au mètre carré", "pro Kopf", "人均": a superlative that compares an amount per one of something —
# and the words in the field names of what it is counted per.
_PER_AREA = (
    r"(?:\b(?:per|a|au|à|al|por|pro|je|par|p\.?)\s+(?:m²|m2|sqm|sq\.?\s?(?:ft|m)|square\s+(?:met(?:re|er)|foot|feet)"
    r"|mètre\s+carré|metro\s+(?:cuadrado|quadrato)|quadratmeter|vierkante\s+meter)|/\s?m²|/\s?m2\b"
    r"|\bquadratmeterpreis|平方米|平米|㎡|제곱미터당|평당)"
)
_PER_HEAD = (
    r"(?:\b(?:per|pro|par|por)\s+(?:capita|head|person|inhabitant|resident|kopf|einwohner|habitant|habitante|persona"
    r"|cápita)|人均|每人|一人当たり|一人あたり|1人当たり|1人あたり|1인당|인당)"
)
PER_UNITS = re.compile(rf"(?P<area>{_PER_AREA})|(?P<head>{_PER_HEAD})", re.IGNORECASE)
_PER_WORDS = {
    "area": ("m2", "sqm", "sqft", "area", "surface", "size", "flaeche", "superficie"),
    "head": ("population", "inhabitants", "residents", "people", "persons", "headcount", "einwohner", "habitants"),
}
_KEY_WORDS = re.compile(r"[a-z0-9]+")

# What a result's call asked for that orders two results in time: "2026-W14", "2026-04", "2025", "2026Q1".
_PERIOD = re.compile(r"\d{4}(?:-?W\d{2}|-?Q[1-4]|-\d{2}(?:-\d{2})?)?")


def peers(
    source: Source, sources: Sequence[Source], held: Sequence[tuple[str, Decimal]]
) -> tuple[tuple[Mapping[str, Decimal], ...], int] | None:
    """The items an item of `source` holding every field and value of `held` is one of, and which one it is: the
    items of its list (when one of them holds them all), else the results of the same tool (two at least), each
    as its fields. None when there is nothing to compare it with."""
    records = records_of(source)
    holding = [at for at, record in enumerate(records) if all(pair in record.values for pair in held)]
    if len(holding) == 1:
        return tuple(dict(record.values) for record in records), holding[0]
    if holding:
        return None  # several items hold them all: which one the answer means is not said
    tool = [s for s in sources if s.tool == source.tool]
    if len(tool) < 2:
        return None
    items = tuple({f.key: f.returned for f in returned(s, MAX_PEER_VALUES, items=False)} for s in tool)
    own = tool.index(source)
    if not all(items[own].get(key) == value for key, value in held):
        return None
    return items, own


def is_extreme(
    items: Sequence[Mapping[str, Decimal]], own: int, numerator: str, denominator: str, wants: Direction
) -> bool:
    """Is the item `own` the largest (or smallest, or either) of `numerator / denominator` over the items that
    hold both? An item tied with the extreme is one; a quantity with nothing to compare is never wrong."""
    ratios = {
        at: item[numerator] / item[denominator] for at, item in enumerate(items) if _holds(item, numerator, denominator)
    }
    if own not in ratios or len(ratios) < 2:
        return True
    low, high = min(ratios.values()), max(ratios.values())
    allowed = {Direction.LARGEST: (high,), Direction.SMALLEST: (low,)}.get(wants, (low, high))
    return ratios[own] in allowed


def _holds(item: Mapping[str, Decimal], numerator: str, denominator: str) -> bool:
    return numerator in item and bool(item.get(denominator))


def per_unit(statement: str) -> tuple[str, ...]:
    """What an amount is counted per where the words say "per m²", "pro Kopf", "人均": the words that name it in a
    field's name ("m2", "surface", "population") — none where they say no such thing."""
    found = PER_UNITS.search(statement)
    return _PER_WORDS[found.lastgroup or ""] if found is not None else ()


def per_unit_key(item: Mapping[str, Decimal], numerator: str, words: Sequence[str]) -> str | None:
    """The one field of the item, besides `numerator`, whose name holds one of `words` ("surface_m2"), or None."""
    named = [key for key in item if key != numerator and any(w in _KEY_WORDS.findall(key.casefold()) for w in words)]
    return named[0] if len(named) == 1 else None


# What stands between the two figures of "from 189 to 221", "von 189 auf 221", "从189降至221" — after a "from"
# before the first — or of "189件から221件に", "189건에서 221건으로", where it is the "from" and a "to" follows
# the second ("4億2,000万円から3,570万円増えた" says by how much, not to what).
_TO = re.compile(
    r"\s*(?:to|auf|à|a|al|hasta|naar|tot|para|→|->)\s*|[^\d\s]{0,3}[至到]\s*|(?P<after>[^\d\s]{0,2}(?:から|에서)\s*)",
    re.IGNORECASE,
)
_TO_AFTER = re.compile(r"[^\d\s]{0,2}?(?:に|へ|まで|으로|로|까지)")


_TO_WORDS = (
    *(" to ", " auf ", " à ", " a ", " al ", " hasta ", " naar ", " tot ", " para "),
    *("→", "->", "至", "到", "から", "에서"),
)


def may_say_from_to(text: str) -> bool:
    """Does `text` hold a word `from_to` needs? Most answers have none: one look at the whole spares each pair."""
    for word in _TO_WORDS:  # noqa: SIM110 (a loop, not `any`: no generator for every check)
        if word in text:
            return True
    return False


def from_to(text: str, start: int, end: int, then: int, then_end: int) -> bool:
    """Are the figures at `start`–`end` and `then`–`then_end` in `text` written as the two ends of a change?"""
    gap = _TO.match(text, end, then)
    if gap is None or gap.end() != then:
        return False
    if gap.group("after") is not None:
        return _TO_AFTER.match(text, then_end) is not None
    return FROM.search(text, max(0, start - 24), start) is not None


@lru_cache(maxsize=1024)
def said_change(words: str) -> bool | None:
    """Do these words say something rose (True) or fell (False)? None when they say neither, both, or deny it."""
    up, down = RISE.search(words) is not None, FALL.search(words) is not None
    if up == down or DENIED.search(words):  # (most words say neither: the denial is looked for after)
        return None
    return up


def periods(sources: Sequence[Source]) -> dict[str, tuple[Source, Source]]:
    """The tools called exactly twice for the same thing but for two periods ("2026-W14", "2026-W15"), each with
    its two results, earlier period first."""
    found: dict[str, tuple[Source, Source]] = {}
    if len(sources) != 2 and all(source.tool == sources[0].tool for source in sources):
        return found  # one tool, called once or for many things (a batch of regions): no two periods
    by_tool: dict[str, list[Source]] = {}
    for source in sources:
        by_tool.setdefault(source.tool, []).append(source)
    for tool, made in by_tool.items():
        if len(made) != 2 or made[0].arguments.keys() != made[1].arguments.keys():
            continue
        first, second = made[0].arguments, made[1].arguments
        differ = [(str(first[k]), str(second[k])) for k in first if first[k] != second[k]]
        if len(differ) != 1:
            continue
        a, b = differ[0]
        if len(a) == len(b) and _PERIOD.fullmatch(a) and _PERIOD.fullmatch(b):
            found[tool] = (made[0], made[1]) if a < b else (made[1], made[0])
    return found


def value_of(source: Source, key: str) -> Decimal | None:
    """The value of `key` outside the result's lists, or None."""
    return next((f.returned for f in returned(source, MAX_PEER_VALUES, items=False) if f.key == key), None)
