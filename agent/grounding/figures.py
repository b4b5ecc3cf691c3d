"""Figures: numbers as people write them, read out of text with where they stand.

"1,200,000", "1.200.000", "1 200 000", "1'200'000" and "1,2 Mio." are one value; "120万" and "1.2亿" carry
their scale; "75 %" is also the fraction 0.75; "about 183 ms" says it was rounded. Each `Figure` keeps what
was shown (its precision: the unit of the last digit written) so a checker can tell a rounding of a tool's
value ("183" for 183.4567) from another number ("190").

Which mark is the decimal one is decided for the whole text (`decimal_mark`): by its unambiguous figures
first ("12,5", "1.200.000", "3.14"), then by the language it is written in. A figure that stays ambiguous
("1.200" in a text that says nothing else) keeps both readings.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import NamedTuple

from agent.grounding.language import (
    APPROXIMATIONS_AFTER,
    APPROXIMATIONS_BEFORE,
    GLUED_SCALES,
    LONG_SCALE_BILLIONS,
    LONG_SCALE_ONLY,
    PER,
    PER_OPENINGS,
    SCALE_WORDS,
    SCALES_BEFORE_CURRENCY,
    decimal_mark_by_words,
)
from agent.grounding.units import UNITS, Family, Unit, unit_after, unit_before

# Full-width digits and signs, one character for one (positions in the text stay where they were).
_FULL_WIDTH = str.maketrans("０１２３４５６７８９％－＋．", "0123456789%-+.")
_ANY_FULL_WIDTH = re.compile("[０-９％－＋．]")

# Where a figure may not start: inside a word or a code such as p50, v2, x86; after COVID-, ISO-; in the tail of
# 1.2.3 or 10.0.0.1; after 第 (第3: an ordinal, not a quantity).
_OPENING = r"(?<![A-Za-z0-9_])(?<![A-Za-z]-)(?<![0-9][.,'])(?<!第)"
# A figure's digits. The pattern opens with a digit, so that the search skips to the digits (a pattern opening with a
# look-behind is tried at every character); the look-behinds are checked at that first digit, from behind it. A
# sign before the digits is taken by `_signed`.
_NUMBER = re.compile(
    rf"""
    \d(?<={_OPENING}\d)
    (?:
        \d{{0,2}}(?P<sep>[,.'’\u00a0\u202f\u2009\ ])\d{{3}}(?:(?P=sep)\d{{3}})*(?!\d)(?:(?P<dec>[.,])(?P<frac>\d+))?
      | \d*(?:(?P<dec2>[.,])(?P<frac2>\d+))?
    )
    """,
    re.VERBOSE,
)
_SIGNS = frozenset("-+−")
_SIGNED = re.compile(rf"{_OPENING}[-+−]")  # a sign that opens a figure: "-3 %", "+1.2", "−0.5"
_ANY_DIGIT = re.compile(r"\d")
_IDENTIFIER = re.compile(r"(?<![\w-])[A-Za-z][\w]*-(?:\d+-)+$")  # what precedes the last part of "FAC-2026-131"
MAX_FIGURE_CHARS = 40
# "12億3456万7890円", "5亿6400万": several scaled chunks, largest first, read as one figure.
_SMALL = r"\d[천千](?:\s?\d[백百])?(?:\s?\d{1,2})?|\d[백百](?:\s?\d{1,2})?"  # "2천", "4千5百", "3백"
_PART = rf"(?:{_SMALL}|\d{{1,4}}(?:,\d{{3}})*(?:\.\d+)?)"
_SMALL_SCALES = {"천": 1000, "千": 1000, "백": 100, "百": 100}
_NEXT = r"(?:\s(?=\d))?"  # "12억 3,457만": Korean spaces the parts
_CJK_COMPOUND = re.compile(
    rf"(?<![0-9.,])(?=(?:{_PART}[兆億亿万萬조억만]{_NEXT}){{1,3}}\d|(?:{_PART}[兆億亿万萬조억만]{_NEXT}){{2}}"
    rf"|(?:{_SMALL})[兆億亿万萬조억만])"
    rf"(?:(?P<t>{_PART})[兆조]{_NEXT})?(?:(?P<y>{_PART})[億亿억]{_NEXT})?(?:(?P<w>{_PART})[万萬만]{_NEXT})?"
    rf"(?P<rest>{_SMALL}|\d+)?"
)
_CJK_SCALES = "兆億亿万萬조억만"
_CJK_SCALE = re.compile(rf"[\d千百천백][{_CJK_SCALES}]")
_DIGIT_FRACTION = re.compile(r"(?<![\d.,])(\d{1,3})\s*分[之の]\s*(\d{1,3})(?![\d.,])")
FRACTION_PRECISION = Decimal("0.01")  # "two thirds", "三分の二" is 66–67 %
_COMPOUND_SCALES = {"t": Decimal(10) ** 12, "y": Decimal(10) ** 8, "w": Decimal(10) ** 4}
# "1機あたり", "1人当たり": "per one", not a quantity someone could get wrong.
_PER_ONE = re.compile(r"[^\d\s]{0,2}(?:あたり|当たり|当り)")

# "1 USD = 0,92 €", "1ドル＝149.5円", "1欧元兑7.86元", "1 USD vaut": the one a rate is given for.
_RATE_EQUALS = re.compile(
    r"\s*(?:=|＝|兑|兌|→|:|vaut|vale|equals|entspricht|is worth|was worth|corresponde|equivale|è pari)"
    r"|\s+(?=[$€£¥]?\s?\d)",  # "entspricht 1 USD 0,922 €": the rate follows the one it is for
    re.I,
)

_TEN = Decimal(10)
_SCALES: list[tuple[str, Decimal]] = [(word, _TEN**power) for word, power in SCALE_WORDS]
_GLUED_SCALES = {word: _TEN**power for word, power in GLUED_SCALES.items()}
_SCALE_WORDS: dict[str, re.Pattern[str]] = {}
for _first in {word[0] for word, _ in _SCALES}:
    _SCALE_WORDS[_first] = re.compile(
        "|".join(
            re.escape(word) + (r"(?![A-Za-zÀ-ÿ])" if word[-1].isalpha() and word[-1].isascii() else "")
            for word, _ in sorted(_SCALES, key=lambda s: len(s[0]), reverse=True)
            if word[0] == _first
        )
    )
_SCALE_VALUES = dict(_SCALES)
_GLUED_SCALE = re.compile(r"(bn|[kKMBm])(?![A-Za-z])")
_SCALE_BEFORE_CURRENCY = re.compile(
    r"[ \u00a0\u202f\u2009]?("
    + "|".join(sorted(SCALES_BEFORE_CURRENCY, key=len, reverse=True))
    + r")\.?(?=[ \u00a0\u202f]?(?:[€$£¥]|(?:EUR|USD|GBP|CHF|JPY|CNY)(?![A-Za-z])))"
)
# The characters the two patterns above can open with (`_scale` tries a pattern only after one of them).
_GLUED_FIRST = frozenset(word[0] for word in GLUED_SCALES)
_BEFORE_CURRENCY_FIRST = frozenset(word[0] for word in SCALES_BEFORE_CURRENCY)
_SPACES = frozenset(" \u00a0\u202f\u2009")  # the optional space before a scale and its currency
_UNSCALED = Decimal(1)
_GLUED_DEGREES = re.compile(r"[CF](?![\w°])")
_DEGREE_LETTERS = frozenset("CF")
_DURATION_JOIN = re.compile(r"\s*(?:and|und|et|e|y|en|i|,)?\s*")
_PERCENT_PREFIX = re.compile(r"百分之\s*$")


class Approximation(StrEnum):
    """What the words around a figure say about how it relates to the exact value."""

    EXACT = "exact"  # as shown: rounded or truncated to its last digit
    ABOUT = "about"  # rounded to its significant digits ("about 1,200,000", "约1200万")
    AT_LEAST = "at_least"  # "over 180", "超过180", "mehr als 180"
    AT_MOST = "at_most"  # "nearly 190", "不到190", "knapp 190"


_APPROXIMATIONS = {Approximation(kind): words for kind, words in APPROXIMATIONS_BEFORE.items()}
_APPROXIMATIONS_AFTER = {Approximation(kind): words for kind, words in APPROXIMATIONS_AFTER.items()}
_BEFORE = re.compile(
    r"(?:^|[\s(（:：,，])(?:"
    + "|".join(
        f"(?P<{kind.name}>" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"
        for kind, words in _APPROXIMATIONS.items()
    )
    + r")\s*$",
    re.IGNORECASE,
)


_LONGEST_BEFORE = max(len(word) for words in _APPROXIMATIONS.values() for word in words)
# Read for every figure: `Enum.MEMBER` costs a class lookup each time in Python 3.11.
_EXACT, _PERCENT, _CURRENCY, _DURATION = Approximation.EXACT, Family.PERCENT, Family.CURRENCY, Family.DURATION
_AFTER_FIRST = frozenset(word[0] for words in _APPROXIMATIONS_AFTER.values() for word in words)
_LAST_WORDS = frozenset(w.split()[-1].casefold() for words in _APPROXIMATIONS.values() for w in words)
_CJK_LAST = tuple(w for words in _APPROXIMATIONS.values() for w in words if not w.isascii())
_CJK_LAST_ENDS = frozenset(w[-1] for w in _CJK_LAST)  # each word's last character: most figures follow none


class Reading(NamedTuple):
    """One way to read a figure: a value, the unit of its last shown digit, and its unit."""

    value: Decimal
    precision: Decimal
    unit: Unit | None = None


class Figure(NamedTuple):
    """A number as written in a text: where it stands, and every way it can be read (the first is the
    figure as the writer most likely meant it)."""

    text: str
    start: int
    end: int
    readings: tuple[Reading, ...]
    approximation: Approximation = Approximation.EXACT
    percent: bool = False
    number: str = ""  # the digits as written, without unit or scale: what a message about it quotes
    per: Unit | None = None  # a rate's unit it is counted per: "1.0832 USD per EUR" is per EUR

    @property
    def value(self) -> Decimal:
        return self.readings[0].value

    @property
    def unit(self) -> Unit | None:
        return self.readings[0].unit


def plain(value: Decimal) -> str:
    """A value for people and traces: no exponent, no trailing zeros, at most 4 decimals when computed."""
    shown = str(value)
    whole, point, decimals = shown.partition(".")
    if len(shown) <= _PLAIN_DIGITS and whole.isdigit() and (not point or _plain_decimals(decimals)):
        return shown  # already so (most values a result returns): what the rest gives for it
    if value != value.to_integral_value() and value.as_tuple().exponent < -4 and abs(value) < 10**20:  # type: ignore[operator]
        value = value.quantize(Decimal("0.0001"))
    return format(value.normalize(), "f")


_PLAIN_DIGITS = 28  # the decimal context's precision: `normalize` rounds a longer value


def _plain_decimals(decimals: str) -> bool:
    return decimals.isdigit() and len(decimals) <= 4 and decimals[-1] != "0"


def normalise_digits(text: str) -> str:
    """Full-width digits, percent and signs as ASCII; the length and every position stay the same."""
    return text.translate(_FULL_WIDTH) if _ANY_FULL_WIDTH.search(text) else text


# --- which mark is the decimal one ---------------------------------------------------------------------

_DECISIVE = re.compile(r"\d(?<![\d.,]\d)[\d.,]*[.,]\d+")  # a digit first, none of "\d.," before it: see `openings`
_AMBIGUOUS = re.compile(r"\d[.,]\d{3}(?!\d)")
_GROUPED = re.compile(r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*")  # thousands grouped by one mark


def reads_by_mark(text: str) -> bool:
    """Can a figure of `text` read otherwise by the text's decimal mark? Only three digits grouped after a point
    or a comma can ("1.200", "3,017"): most texts need no mark decided."""
    return _AMBIGUOUS.search(text) is not None


def decimal_mark(text: str) -> str | None:
    """ "." or "," as the text's decimal mark, or None when the text does not tell."""
    votes = {".": 0, ",": 0}
    for match in _DECISIVE.finditer(text):
        token = match.group(0)
        dots, commas = token.count("."), token.count(",")
        if dots and commas:
            votes[token[max(token.rfind("."), token.rfind(","))]] += 1
        elif dots > 1 or commas > 1:
            if _GROUPED.fullmatch(token):  # "1.200.000"; "5.1.3" and "10.0.0.1" group nothing: no vote
                votes["," if dots > 1 else "."] += 1
        else:
            tail = len(token) - max(token.rfind("."), token.rfind(",")) - 1
            if tail != 3:
                votes["." if dots else ","] += 1
    if votes["."] != votes[","]:
        return "." if votes["."] > votes[","] else ","
    if not _AMBIGUOUS.search(text):
        return None  # no figure whose reading depends on it: the language need not be guessed
    return decimal_mark_by_words(text)


# --- reading figures -------------------------------------------------------------------------------------


def read_figures(text: str, *, mark: str | None = None, trillion_is_billion: bool = True) -> list[Figure]:
    """Every figure in `text` (already normalised with `normalise_digits`), in order.

    `mark` is the text's decimal mark (`decimal_mark`); None keeps both readings of an ambiguous figure.
    `trillion_is_billion`: English "billion" (10⁹); False for German "Billion" (10¹²).
    """
    if not _ANY_DIGIT.search(text):
        return []
    percent_words = "百分之" in text
    # A scale after digits ("1.2亿", "564万") is rare: its characters are looked for before the pattern runs.
    scaled = any(scale in text for scale in _CJK_SCALES) and _CJK_SCALE.search(text) is not None
    figures = [_compound(match, text) for match in _CJK_COMPOUND.finditer(text)] if scaled else []
    if "分" in text:  # "4分の3", "3分之2": a fraction in digits, the denominator first
        figures += [_digit_fraction(match, text) for match in _DIGIT_FRACTION.finditer(text)]
    taken = [(f.start, f.end) for f in figures]
    durations = bool(figures)  # whether a figure may open "1 hour 30 minutes" (`_joined_durations`)
    rate_per: Unit | None = None
    read_to = 0
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        if text[start - 1 : start] in _SIGNS and _SIGNED.match(text, start - 1):
            start -= 1
            number = text[start:end]
            negative = number[0] != "+"
        else:
            number = match.group(0)
            negative = False
        if taken and any(begin <= start < stop for begin, stop in taken):
            continue
        if start < read_to:
            continue  # the "1" of "0,918 € pour 1 USD": part of the figure before
        following = text[end : end + 3]
        if following[:1] in (".", ",") and following[1:2].isdigit():
            continue  # 1.2.3, 10.0.0.1: a version or an address
        if following[:2] in ("st", "nd", "rd", "th") and not following[2:3].isalpha():
            continue  # 1st, 2nd: an ordinal
        if number == "1" and _PER_ONE.match(text, end):
            continue
        base = _rate_base(text, end) if number == "1" else None
        if base is not None:
            rate_per = base  # the next figure is counted per one of it: "1 USD = 0,92 €" is 0,92 € per USD
            continue
        if end - start > MAX_FIGURE_CHARS:
            continue  # a 40-digit run is an identifier or a hash, not a quantity anyone states
        if text[start - 1 : start] == "-" and _IDENTIFIER.search(text, max(0, start - 24), start):
            continue  # FAC-2026-131, INC-2026-0042: the tail of an identifier
        mantissas = _mantissas(match, mark)
        if not mantissas:
            continue
        # Multiplying by one rounds only a value longer than the decimal context's precision: most are taken as read.
        short = end - start <= _PLAIN_DIGITS
        scale, end = _scale(text, end, trillion_is_billion)
        unit, used = unit_after(text[end : end + 24])
        if unit is not None and _glued_letters(text, end, used):
            unit, used = None, 0  # "5G", "3D": not a unit
        elif unit is None and text[end : end + 1] in _DEGREE_LETTERS and _GLUED_DEGREES.match(text, end):
            unit, used = UNITS[f"°{text[end]}"], 1  # "31C", "88F": how terse answers write temperatures
        elif unit is None and end < len(text) and text[end].isascii() and text[end].isalpha():
            continue  # "2FA", "4K" without a scale: a name, not a quantity
        if percent_words and _PERCENT_PREFIX.search(text[max(0, start - 6) : start]):
            unit = UNITS["%"]
        end += used
        if unit is None and start > 0:
            unit = unit_before(text[max(0, start - 4) : start])
        per, end = _per(text, end) if unit is not None else (None, end)
        if per is None and unit is not None and unit.family is _CURRENCY:
            per = rate_per or _per_before(text, start)
            per = per if per != unit else None
        rate_per = None
        durations = durations or (unit is not None and unit.family is _DURATION)
        approximation = _approximation(text, start, end)
        readings = _readings(mantissas, None if short and scale is _UNSCALED else scale, unit, negative, approximation)
        figures.append(
            Figure(
                text[start:end].strip(),
                start,
                end,
                readings,
                approximation,
                unit is not None and unit.family is _PERCENT,
                number,
                per,
            )
        )
        read_to = end
    if taken:  # the figures in digits were found in order, after those read before them
        figures.sort(key=lambda f: f.start)
    return _joined_durations(figures, text) if durations else figures


_ONE = re.compile(r"1\s?(?=[^\d\s.,])")

_PER_BEFORE = re.compile(r"([^\W\d_]{1,3})당\s*$")  # "달러당 1,385원": per dollar


def _per_before(text: str, start: int) -> Unit | None:
    window = max(0, start - 8)
    found = _PER_BEFORE.search(text, window, start) if "당" in text[window:start] else None
    unit = unit_after(found.group(1))[0] if found else None
    return unit if unit is not None and unit.family is _CURRENCY else None


def _rate_base(text: str, end: int) -> Unit | None:
    """The currency of a "1" a rate is given for ("1 USD = 0,92 €"), or None."""
    unit, used = unit_after(text[end : end + 16])
    if unit is None or unit.family is not Family.CURRENCY or not _RATE_EQUALS.match(text, end + used):
        return None
    return unit


def _joined_durations(figures: list[Figure], text: str) -> list[Figure]:
    """ "1 hour 30 minutes", "2 h 15 min", "1時間30分", "3 h 17": one duration, in its smaller unit (90 min)."""
    joined: list[Figure] = []
    for figure in figures:
        last = joined[-1] if joined else None
        small = _smaller_part(last, figure, text) if last is not None else None
        if last is None or small is None:
            joined.append(figure)
            continue
        big = last.readings[0].unit
        assert big is not None
        value = last.value * big.factor / small.factor + figure.value
        reading = Reading(value, figure.readings[0].precision, small)
        joined[-1] = Figure(
            text[last.start : figure.end], last.start, figure.end, (reading,), last.approximation,
            number=text[last.start : figure.end],
        )  # fmt: skip
    return joined


def _smaller_part(last: Figure, figure: Figure, text: str) -> Unit | None:
    """The unit of `figure` when it continues the duration `last` ("2 h" + "15 min"), or None. Two bare
    digits after hours are its minutes ("3 h 17", "11 h 30")."""
    big, small = last.readings[0].unit, figure.readings[0].unit
    if big is None or big.family is not Family.DURATION or not _DURATION_JOIN.fullmatch(text, last.end, figure.start):
        return None
    if small is None:
        bare = big.code == "h" and len(figure.text) == 2 and figure.text.isdigit() and figure.value < 60
        return UNITS["min"] if bare and text[last.end : figure.start].isspace() else None
    return small if small.family is Family.DURATION and big.factor > small.factor else None


def _per(text: str, end: int) -> tuple[Unit | None, int]:
    """ "… USD per EUR", "… €/kg": the unit a rate is counted per, and where it ends."""
    at = end
    while at < len(text) and text[at].isspace():
        at += 1
    # Most figures end a clause or meet a word no rate is written with: `PER` runs only where it can start.
    joint = PER.match(text, end) if text[at : at + 1].casefold() in PER_OPENINGS else None
    if joint is None:
        return None, end
    after = joint.end()
    one = _ONE.match(text, after)  # "0,918 € pour 1 USD"
    after = one.end() if one else after
    unit, used = unit_after(text[after : after + 24])
    if unit is None or _glued_letters(text, after, used):
        return None, end
    return unit, after + used


def word_figure(
    text: str, start: int, end: int, value: Decimal, precision: Decimal, words: str, *, unit: Unit | None = None
) -> Figure:
    """A figure written in words ("twelve", "三分之二"; `agent.grounding.words`), read as one in digits is: with
    the unit written after it (or the one its words say: "百分之七十五") and the approximation before it."""
    used = 0
    if unit is None:
        unit, used = unit_after(text[end : end + 24])
        if unit is not None and _glued_letters(text, end, used):
            unit, used = None, 0
    end += used
    approximation = _approximation(text, start, end)
    readings = [Reading(value, precision, unit)]
    percent = unit is not None and unit.family is _PERCENT
    if percent:
        readings.append(Reading(value / 100, precision / 100, None))
    return Figure(text[start:end].strip(), start, end, tuple(readings), approximation, percent, words)


def _digit_fraction(match: re.Match[str], text: str) -> Figure:
    denominator, numerator = Decimal(match.group(1)), Decimal(match.group(2))
    value = numerator / denominator if denominator else Decimal(0)
    return word_figure(text, match.start(), match.end(), value, FRACTION_PRECISION, match.group(0))


def _compound(match: re.Match[str], text: str) -> Figure:
    value = Decimal(0)
    step = Decimal(1)
    for name, scale in _COMPOUND_SCALES.items():
        if match.group(name):
            part, part_step = _part_value(match.group(name))
            value += part * scale
            step = part_step * scale
    if match.group("rest"):
        value, step = value + (rest := _part_value(match.group("rest")))[0], rest[1]
    end = match.end()
    unit, used = unit_after(text[end : end + 24])
    end += used
    reading = Reading(value, step, unit)
    return Figure(
        text=text[match.start() : end].strip(),
        start=match.start(),
        end=end,
        readings=(reading,),
        approximation=_approximation(text, match.start(), end),
        number=match.group(0),
    )


def _part_value(part: str) -> tuple[Decimal, Decimal]:
    """ "3,457" → 3457 (step 1), "2천" → 2000 (step 1000), "4千5百" → 4500 (step 100)."""
    if not any(scale in part for scale in _SMALL_SCALES):
        return Decimal(part.replace(",", "")), Decimal(1)
    value, step, digits = Decimal(0), Decimal(1), ""
    for char in part:
        if char.isdigit():
            digits += char
        elif char in _SMALL_SCALES:
            step = Decimal(_SMALL_SCALES[char])
            value, digits = value + Decimal(digits or 1) * step, ""
    if digits:
        value, step = value + Decimal(digits), Decimal(1)
    return value, step


def _mantissas(match: re.Match[str], mark: str | None) -> list[tuple[Decimal, int]]:
    """The figure's digits (`_NUMBER`) as (value, decimals shown), one per plausible reading, the likeliest first."""
    body = match.group(0)
    sep, dec, frac, dec2, frac2 = match.groups()
    if sep is None:  # "12", "12.5", "12,5": one mark at most, the decimal one
        if dec2 is None:
            return _decimal(body, None)
        return _written(body if dec2 == "." else body.replace(",", "."), len(frac2))
    if dec is not None:
        if dec == sep:
            return []  # "1,234,5": no reading of that is a number
        return _decimal(body[: -len(frac) - 1].replace(sep, ""), frac)
    if sep in ",." and body.count(sep) == 1:
        whole, _, tail = body.partition(sep)
        grouped = _decimal(whole + tail, None)
        decimal = _decimal(whole, tail)
        if mark == sep:
            return decimal
        if mark is not None:
            return grouped
        return grouped + decimal
    if sep in ",." and mark == sep:
        return []  # "1.200.000" in a text whose decimal mark is "."
    return _decimal(body.replace(sep, ""), None)


def _decimal(whole: str, frac: str | None) -> list[tuple[Decimal, int]]:
    return _written(f"{whole}.{frac}" if frac else whole, len(frac) if frac else 0)


def _written(number: str, decimals: int) -> list[tuple[Decimal, int]]:
    """`number` ("12.5": a point, if any, as the decimal mark) as a value, with its `decimals` shown."""
    try:
        return [(Decimal(number), decimals)]
    except InvalidOperation:
        return []


def _scale(text: str, end: int, english: bool) -> tuple[Decimal, int]:
    # Most figures have no scale: the first characters after them rule out each pattern before it runs.
    first, second = text[end : end + 1], text[end + 1 : end + 2]
    glued = _GLUED_SCALE.match(text, end) if first in _GLUED_FIRST else None
    if glued is not None:
        word = glued.group(1)
        currency = bool(re.search(r"[$€£¥]\s?[\d.,]*$", text[max(0, end - 16) : end]))
        if word != "m" or currency:
            return _GLUED_SCALES[word], glued.end()
    opens = first in _BEFORE_CURRENCY_FIRST or (first in _SPACES and second in _BEFORE_CURRENCY_FIRST)
    before_currency = _SCALE_BEFORE_CURRENCY.match(text, end) if opens else None
    if before_currency is not None:
        return _TEN ** SCALES_BEFORE_CURRENCY[before_currency.group(1)], before_currency.end()
    spaced = text[end : end + 16]
    stripped = spaced.lstrip(" \u00a0\u202f\u2009")
    pattern = _SCALE_WORDS.get(stripped[:1])
    match = pattern.match(stripped) if pattern is not None else None
    if match is None:
        return _UNSCALED, end
    word = match.group(0)
    scale = _SCALE_VALUES[word]
    if word in LONG_SCALE_ONLY or (word in LONG_SCALE_BILLIONS and not english):
        scale = _TEN**12
    return scale, end + len(spaced) - len(stripped) + match.end()


def _glued_letters(text: str, end: int, used: int) -> bool:
    """A unit is real when no further letter follows it ("5 km" yes, "5Gbps"-like codes no)."""
    after = end + used
    return after < len(text) and text[after].isascii() and text[after].isalpha()


def _approximation(text: str, start: int, end: int) -> Approximation:
    before = text[max(0, start - 24) : start].rstrip()
    if before.endswith(("$", "€", "£", "¥")):
        before = before[:-1].rstrip()
    last = before.rsplit(None, 1)[-1].casefold() if before else ""
    # Most figures follow no approximation word: one set lookup decides before any pattern runs.
    if last in _LAST_WORDS or (last[-1:] in _CJK_LAST_ENDS and last.endswith(_CJK_LAST)):
        # The words end where `before` ends: no match starts earlier than the longest word and its boundary.
        match = _BEFORE.search(before, max(0, len(before) - _LONGEST_BEFORE - 1))
        if match is not None:
            return Approximation[match.lastgroup or "EXACT"]
    after = text[end : end + 4].lstrip()
    if after[:1] in _AFTER_FIRST:
        for kind, words in _APPROXIMATIONS_AFTER.items():
            if after.startswith(words):
                return kind
    return Approximation.EXACT


def _readings(
    mantissas: list[tuple[Decimal, int]],
    scale: Decimal | None,
    unit: Unit | None,
    negative: bool,
    approximation: Approximation,
) -> tuple[Reading, ...]:
    """`scale` None: unscaled, and taken as read (no digits past the context's precision to round away)."""
    readings: list[Reading] = []
    percent = unit is not None and unit.family is _PERCENT
    for mantissa, decimals in mantissas:
        value = -mantissa if negative else mantissa
        step = _precision(mantissa, decimals, approximation)
        if scale is None:
            readings.append(Reading(value, step, unit))
        else:
            readings.append(Reading(value * scale, step * scale, unit))
            if scale != 1:
                readings.append(Reading(value, step, unit))  # "12 million USD" where the tool counts in millions
        if percent:
            readings.append(Reading(value / 100, step / 100, None))  # 75 % is 0.75
    return tuple(readings)


_DECIMAL_STEPS = tuple(Decimal(1).scaleb(-decimals) for decimals in range(12))  # 0.1, 0.01, …: made once


def _precision(mantissa: Decimal, decimals: int, approximation: Approximation) -> Decimal:
    """The unit of the last digit that carries meaning: shown digits, or significant ones when approximate."""
    if decimals:
        return _DECIMAL_STEPS[decimals] if decimals < len(_DECIMAL_STEPS) else Decimal(1).scaleb(-decimals)
    if approximation is _EXACT or mantissa == 0:
        return Decimal(1)
    digits = mantissa.as_tuple().digits
    zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return Decimal(1).scaleb(zeros)
