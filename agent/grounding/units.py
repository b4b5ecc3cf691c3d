"""Units: what a figure measures, as written after it ("28 °C", "183 ms", "1,2 Mio. €") or in a result's key
("temp_c", "p50_ms", "revenue_eur"), and the exact conversions between units of one family.

A closed vocabulary: a unit nobody listed is unknown, and an unknown unit is compatible with every unit
(we only refuse what we can tell is wrong: 28 °F where the tool said 28 °C).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache

from agent.grounding.language import UNIT_WORDS


class Family(StrEnum):
    TEMPERATURE = "temperature"
    DURATION = "duration"
    LENGTH = "length"
    MASS = "mass"
    PERCENT = "percent"
    CURRENCY = "currency"
    DATA = "data"


@dataclass(frozen=True)
class Unit:
    """One unit: `factor` converts to the family's base unit (temperature converts through `to_base`)."""

    code: str
    family: Family
    factor: Decimal = Decimal(1)

    def __eq__(self, other: object) -> bool:
        # Compared for every figure against every fact: mostly the very same unit of UNITS, told at once.
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Unit)
        return (self.code, self.family, self.factor) == (other.code, other.family, other.factor)

    def __hash__(self) -> int:
        return hash((self.code, self.family, self.factor))

    def to_base(self, value: Decimal) -> Decimal:
        if self.code == "°F":
            return (value - 32) * 5 / 9
        if self.code == "K":
            return value - Decimal("273.15")
        return value * self.factor

    def from_base(self, value: Decimal) -> Decimal:
        if self.code == "°F":
            return value * 9 / 5 + 32
        if self.code == "K":
            return value + Decimal("273.15")
        return value / self.factor


def _units(family: Family, spec: dict[str, str]) -> dict[str, Unit]:
    return {code: Unit(code, family, Decimal(factor)) for code, factor in spec.items()}


UNITS: dict[str, Unit] = {
    # "°" is a temperature whose scale the text does not say ("28°", "12 degrees warmer"): never converted.
    **_units(Family.TEMPERATURE, {"°": "1", "°C": "1", "°F": "1", "K": "1"}),
    **_units(Family.DURATION, {"ms": "0.001", "s": "1", "min": "60", "h": "3600", "d": "86400"}),
    **_units(Family.LENGTH, {"mm": "0.001", "cm": "0.01", "m": "1", "km": "1000", "ft": "0.3048", "mi": "1609.344"}),
    **_units(
        Family.MASS, {"mg": "0.001", "g": "1", "kg": "1000", "t": "1000000", "oz": "28.349523125", "lb": "453.59237"}
    ),
    **_units(Family.DATA, {"KB": "1000", "MB": "1000000", "GB": "1000000000", "TB": "1000000000000"}),
    **_units(Family.PERCENT, {"%": "1"}),
    # Currencies are never converted into each other (rates change); each is its own unit of one family.
    **{code: Unit(code, Family.CURRENCY, Decimal(1)) for code in ("USD", "EUR", "CNY", "JPY", "GBP", "CHF", "KRW")},
}

# Read for every figure against every value: `Enum.MEMBER` costs a class lookup each time in Python 3.11.
_CURRENCY = Family.CURRENCY

_WRITTEN = UNIT_WORDS  # how each unit is written, in the languages Parley reads
# A unit's last letter ends a word: "5 min" but not "5 minutes", "3 m" but not "3 m'a dit" or "s'élève" (elided).
_LATIN_WORD_END = r"(?![A-Za-zÀ-ÿ]|['’][A-Za-zÀ-ÿ])"


def _by_first_char(words: list[str]) -> dict[str, re.Pattern[str]]:
    """One small pattern per first character: a figure is followed by a unit, or by a word no unit starts with."""
    groups: dict[str, list[str]] = {}
    for word in sorted(words, key=len, reverse=True):
        groups.setdefault(word[0].casefold(), []).append(word)
    return {
        first: re.compile(
            "|".join(re.escape(w) + (_LATIN_WORD_END if w[-1].isascii() and w[-1].isalpha() else "") for w in group),
            re.IGNORECASE,
        )
        for first, group in groups.items()
    }


_WRITTEN_PATTERNS = _by_first_char(list(_WRITTEN))
# Written before a figure: "$12", "€ 1,2 Mio.", "US$3 billion", "USD 12", "¥1,200".
_CURRENCY_SIGNS = frozenset("$€£¥")
_PREFIX = re.compile(r"(US\$|\$|€|£|¥|USD|EUR|GBP|CHF|CNY|JPY|RMB)\s?$")

# Key words of a result's field that say its unit: "temp_c", "p50_ms", "revenue_eur", "distance_km".
_KEY_UNITS: dict[str, str] = {
    "c": "°C", "celsius": "°C", "f": "°F", "fahrenheit": "°F", "ms": "ms", "millis": "ms", "s": "s",
    "sec": "s", "secs": "s", "seconds": "s", "min": "min", "minutes": "min", "h": "h", "hours": "h",
    "days": "d", "mm": "mm", "cm": "cm", "km": "km", "meters": "m", "metres": "m", "kg": "kg", "mi": "mi",
    "miles": "mi", "ft": "ft", "feet": "ft", "lb": "lb", "lbs": "lb", "oz": "oz", "kb": "KB", "mb": "MB",
    "gb": "GB", "tb": "TB",
    "grams": "g", "pct": "%", "percent": "%", "percentage": "%", "usd": "USD", "eur": "EUR",
    "cny": "CNY", "rmb": "CNY", "jpy": "JPY", "gbp": "GBP", "chf": "CHF", "krw": "KRW",
}  # fmt: skip
# Key words that say the field is counted in a scale: "cost_musd" (million USD), "revenue_mn", "users_k".
_KEY_SCALES: dict[str, Decimal] = {
    "k": Decimal(10) ** 3, "thousands": Decimal(10) ** 3, "mn": Decimal(10) ** 6, "mio": Decimal(10) ** 6,
    "million": Decimal(10) ** 6, "millions": Decimal(10) ** 6, "musd": Decimal(10) ** 6, "meur": Decimal(10) ** 6,
    "bn": Decimal(10) ** 9, "billion": Decimal(10) ** 9, "billions": Decimal(10) ** 9, "busd": Decimal(10) ** 9,
    "wan": Decimal(10) ** 4, "万": Decimal(10) ** 4, "亿": Decimal(10) ** 8,
}  # fmt: skip
_KEY_CURRENCY_SCALED = {"musd": "USD", "meur": "EUR", "busd": "USD"}
_KEY_WORD = re.compile(r"[a-z]+|[^\x00-\x7f]+")


def unit_after(text: str) -> tuple[Unit | None, int]:
    """The unit written at the start of `text` (after optional spaces), and how many characters it took."""
    stripped = text.lstrip(" \u00a0\u202f\u2009")
    pattern = _WRITTEN_PATTERNS.get(stripped[:1].casefold())
    match = pattern.match(stripped) if pattern is not None else None
    if match is None:
        return None, 0
    unit = UNITS[_WRITTEN[match.group(0).lower()]]
    return unit, len(text) - len(stripped) + match.end()


def unit_before(text: str) -> Unit | None:
    """A currency written right before a figure ("$12", "€ 3")."""
    tail = text.rstrip()
    if not tail[-3:].isupper() and _CURRENCY_SIGNS.isdisjoint(tail):
        return None  # no currency sign and no code such as USD right before the figure
    match = _PREFIX.search(text)
    if match is None or (match.group(1) == "$" and text[: match.start()][-1:].isalpha()):
        return None  # R$, C$, HK$: a dollar of its own, not the US one
    return UNITS[_WRITTEN.get(match.group(1).lower(), match.group(1).upper())]


@lru_cache(maxsize=1024)
def unit_of_key(key: str) -> tuple[Unit | None, Decimal | None]:
    """The unit and scale a result's field name says its numbers are in (None where it says nothing)."""
    words = _KEY_WORD.findall(key.lower())
    unit: Unit | None = None
    scale: Decimal | None = None
    if "per" in words[1:] and any(w in _KEY_UNITS for w in words[: words.index("per")]):
        words = words[: words.index("per")]  # "usd_per_eur" counts USD (per EUR); "cost_per_item_usd" counts USD
        return (UNITS[_KEY_UNITS[next(w for w in reversed(words) if w in _KEY_UNITS)]], None)
    for word in words[1:] if len(words) > 1 else words[-1:]:
        if word in _KEY_SCALES:
            scale = _KEY_SCALES[word]
        if word in _KEY_CURRENCY_SCALED:
            unit = UNITS[_KEY_CURRENCY_SCALED[word]]
        elif word in _KEY_UNITS and (len(word) > 1 or word == words[-1]):
            unit = UNITS[_KEY_UNITS[word]]
    return unit, scale


def compatible(a: Unit | None, b: Unit | None) -> bool:
    """Unknown is compatible with anything; known units must be of one family (and one currency)."""
    if a is None or b is None:
        return True
    if a.family is _CURRENCY or b.family is _CURRENCY:
        return a == b
    return a.family is b.family


def convert(value: Decimal, source: Unit, target: Unit) -> Decimal | None:
    """`value` in `source` expressed in `target`, exactly; None when they are not of one family."""
    if source == target or (source.family is target.family and "°" in (source.code, target.code)):
        return value
    if source.family is not target.family or source.family in (Family.CURRENCY, Family.PERCENT):
        return None
    return target.from_base(source.to_base(value))
