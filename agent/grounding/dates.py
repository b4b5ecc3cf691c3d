"""Dates and times as people write them: "2026-11-30", "November 30, 2026", "30. November 2026",
"30/11/2026", "2026年11月30日", "8:15 UTC", "8.15 Uhr", "8:15 PM".

`read_dates` finds them in a text with where they stand, so a checker can ground them against the dates
in tool results (and not mistake their parts for quantities). Month names come from CLDR through Babel,
for the languages Parley is used in; an all-numeric day/month order that is ambiguous keeps both readings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache

from agent.grounding.language import MONTH_LOCALES, QUARTER_ORDINALS, QUARTER_WORDS, ZONES, letter_words

_ANY_DIGIT = re.compile(r"\d")
# "30.11.2026", "2026-11", "11月", "3/7": every form opens with a digit, written once so that the search skips to
# the digits (an alternation of forms is tried at every character).
_NUMERIC_DATE = re.compile(r"\d(?:\d{0,3}[-/.]\d{1,2}[-/.]\d{2,4}|\d{3}-\d{2}|\s*[年월月]|/\d)")
# The same forms but those with 年, 월, 月, each found from its first separator: where `_NUMERIC_DATE` finds one, a
# digit stands right before a separator one of these finds. A pattern that opens with one character skips to it at
# once; one that opens with a class of them (a digit) tests every character of the text.
_SEPARATED_DATES = (
    re.compile(r"\.(?<=\d\.)\d{1,2}[-/.]\d\d"),
    re.compile(r"-(?:(?<=\d-)\d{1,2}[-/.]\d\d|(?<=\d{4}-)\d\d)"),
    re.compile(r"/(?<=\d/)\d"),  # "3/7" (and so "30/11/2026")
)
_CJK_DATE_MARKS = ("年", "월", "月")
_TIME_GATE = re.compile(
    r"\d:\d\d|\d\s*(?:Uhr|uur|o'clock|heures)|\d\s*[ap]\.?\s?m\b|\d\s*[时時点點시]|\d\s?h\s?\d\d", re.IGNORECASE
)
# `_TIME_GATE` found from the character after its digit, one pattern per character: one that opens with a single
# character skips to it at once, where one that opens with a class of them (a digit) tests every character.
_TIME_AFTER_DIGIT = (
    re.compile(r":(?<=\d:)\d\d"),
    *(re.compile(rf"{h}(?:(?<=\d{h})|(?<=\d\s{h}))\s?\d\d") for h in "hH"),
)
# The forms whose word may stand after spaces (`\d\s*`): found as words, then the digit looked for before them.
_TIME_WORDS = tuple(
    re.compile(f"{first}(?i:{tail})")
    for firsts, tail in (("Uu", "hr|ur"), ("Oo", "'clock"), ("Hh", "eures"), ("AaPp", r"\.?\s?m\b"))
    for first in firsts
)
_CJK_HOURS = "时時点點시"
_CJK_HOUR = re.compile(f"[{_CJK_HOURS}]")
_LETTERS = re.compile(r"[^\W\d_]+")
_BEFORE_MONTH, _AFTER_MONTH = 16, 32  # "30. November 2026", "November 30th, 2026 at 08:15": a month's date


Parts = tuple[int | None, int | None, int | None, int | None, int | None]  # year, month, day, hour, minute

_ZONE_AFTER = re.compile(
    r"\s*(?:Uhr\s*|uur\s*|heures\s*)?[（(]?\s*("
    + "|".join(re.escape(z) for z in sorted(ZONES, key=len, reverse=True))
    + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_ZONE_BEFORE = re.compile(
    r"("
    + "|".join(re.escape(z) for z in sorted(ZONES, key=len, reverse=True) if len(z) > 1)
    + r")(?![A-Za-z])[^\d]{0,8}$",
    re.IGNORECASE,
)
_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")


@dataclass(frozen=True)
class WrittenDate:
    """A date or time in a text. Each reading gives the parts it shows (None where it shows none), and
    `offset` the time zone it is written in (minutes east of UTC), when the text names one."""

    text: str
    start: int
    end: int
    readings: tuple[Parts, ...]
    offset: int | None = None

    def matches(self, other: WrittenDate) -> bool:
        """Some reading of this one agrees with some reading of `other` on every part this one shows —
        after putting `other` in this one's time zone, when both zones are known."""
        return any(
            _agrees(mine, theirs)
            for mine in self.readings
            for theirs in other.in_zone(self.offset if other.offset is not None else None)
        )

    def in_zone(self, offset: int | None) -> list[Parts]:
        if offset is None or self.offset is None or offset == self.offset:
            return list(self.readings)
        shift = timedelta(minutes=offset - self.offset)
        moved: list[Parts] = []
        for year, month, day, hour, minute in self.readings:
            if hour is None or minute is None:
                continue  # a date without its time cannot be moved to another zone
            if year is None or month is None or day is None:
                total = (hour * 60 + minute + shift.days * 1440 + shift.seconds // 60) % 1440
                moved.append((None, None, None, total // 60, total % 60))
                continue
            try:
                at = datetime(year, month, day, hour % 24, minute) + shift
            except (ValueError, OverflowError):
                continue  # 30 February, year 0, past 9999: no moment to move
            moved.append((at.year, at.month, at.day, at.hour, at.minute))
        return moved


def _agrees(mine: Parts, theirs: Parts) -> bool:
    shown = [(a, b) for a, b in zip(mine, theirs, strict=True) if a is not None]
    return bool(shown) and all(a == b for a, b in shown)


@cache
def _month_names() -> dict[str, int]:
    """Month names and abbreviations (format and stand-alone) in MONTH_LOCALES, folded, → 1..12."""
    from babel.dates import get_month_names  # imported on first use: a few milliseconds of CLDR data

    names: dict[str, int] = {}
    for locale in MONTH_LOCALES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, locale).items():
                    names.setdefault(name.casefold().rstrip("."), number)
    names["sept"] = 9
    return names


def month_number(word: str) -> int | None:
    """The month a capitalised word names ("November", "Dezember", "Sept"), or None."""
    return _month_names().get(word.casefold().rstrip("."))


@cache
def _abbreviations() -> frozenset[str]:
    """Short month names that are also words ("may", "mar", "out", "set"): a month only when capitalised."""
    from babel.dates import get_month_names

    wide = {name.casefold() for locale in MONTH_LOCALES for name in get_month_names("wide", locale=locale).values()}
    return frozenset(name for name in _month_names() if name not in wide or len(name) <= 3)


# Words after which "15/12" is a day and a month: "le 15/12", "due 15/12", "bis 15/12".
_DATE_WORD_BEFORE = (
    "(?:"
    + "|".join(
        f"(?<=\\b{word} )"
        for word in ("le", "du", "au", "on", "by", "am", "el", "il", "del", "op", "em", "due", "until", "bis", "até")
    )
    + ")"
)


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    # Any word here; `_date_readings` keeps only month names (one small pattern, not an alternation of 300 names).
    month = r"(?P<month>[^\W\d_]{3,12})\.?"
    year = r"(?P<year>\d{4})"
    day = r"(?P<day>\d{1,2})"
    ordinal = r"(?:\.|st|nd|rd|th|er)?"
    time = (
        r"(?:[T\s,]+(?:at\s+|um\s+|à\s+|a las\s+)?(?P<hour>\d{1,2})[:.h](?P<minute>\d{2})(?::\d{2}(?:\.\d+)?)?"
        r"(?P<offset>Z|[+-]\d{2}:?\d{2})?)?"
    )
    return [
        (re.compile(rf"(?<!\d){year}-(?P<m>\d{{1,2}})-{day}{time}(?!\d)"), "ymd"),
        (re.compile(rf"(?<!\d){year}/(?P<m>\d{{1,2}})/{day}(?!\d)"), "ymd"),
        (re.compile(rf"(?<![\d-]){year}-(?P<m>\d{{2}})(?![\d-])"), "ymd"),
        (re.compile(rf"(?<![\d.:/]){day}[./](?P<m>\d{{1,2}})[./](?P<year>\d{{4}}|\d{{2}})(?![\d]|\.\d)"), "dmy?"),
        (re.compile(rf"(?<!\d){year}\s*年\s*(?P<m>\d{{1,2}})\s*月(?:\s*{day}\s*[日号])?"), "ymd"),
        (re.compile(rf"(?<!\d)(?P<m>\d{{1,2}})\s*月\s*{day}\s*[日号]"), "ymd"),
        (re.compile(rf"(?<!\d){year}\s*년\s*(?P<m>\d{{1,2}})\s*월(?:\s*{day}\s*일)?"), "ymd"),
        (re.compile(rf"(?<!\d)(?P<m>\d{{1,2}})\s*월\s*{day}\s*일"), "ymd"),
        (re.compile(r"(?<![\d.])(?P<m>\d{1,2})\s*[月월](?![\d日号일])"), "ymd"),  # "11月", "10月の": a month alone
        # "le 15/12", "due 15/12": a day and month without a year, where words say it is a date (not "3/7 deploys")
        (re.compile(rf"{_DATE_WORD_BEFORE}{day}/(?P<m>\d{{1,2}})(?![\d/])", re.I), "dmy?"),
        (re.compile(rf"(?<![\w]){day}{ordinal}\s+(?:de\s+|of\s+)?{month}(?:\s+(?:de\s+)?{year})?(?!\w)", re.I), "dm"),
        # "im Oktober 1.054 Tickets": a figure after a month is no day of it.
        (re.compile(rf"(?<![\w]){month}\s+{day}(?:st|nd|rd|th)?(?:,?\s+{year})?(?!\w|[.,]\d)", re.I), "dm"),
        (re.compile(rf"(?<![\w]){month}\s+{year}(?!\d)", re.I), "dm"),
    ]  # fmt: skip


_TIME = re.compile(
    r"(?<![\d:.])(?P<hour>\d{1,2})(?::(?P<minute>\d{2})(?::\d{2})?|\.(?P<minute2>\d{2})(?=\s*(?:Uhr|uur)))"
    r"\s*(?P<half>[ap]\.?\s?m\.?(?![a-z]))?(?![\d:])"
    r"|(?<![\w.:])(?P<hour4>\d{1,2})h(?P<minute3>\d{2})(?!\d)"  # "9h15", "às 9h15"
    r"|(?:(?<=à )|(?<=a )|(?<=de )|(?<=vers )|(?<=dès )|(?<=et )|(?<=entre ))"
    r"(?P<hour6>\d{1,2})\s?h\s?(?P<minute5>\d{2})(?!\d)"  # "à 7 h 42": a time; "comptez 3 h 17" is a duration
    r"|(?<![\d:.])(?P<hour2>\d{1,2})\s*(?P<half2>[ap]\.?m\.?)(?![a-z])"
    r"|(?<![\d:.])(?P<hour5>\d{1,2})\s*(?:Uhr|uur|o'clock|heures)(?![\w])"  # "um 9 Uhr": the hour alone
    r"|(?P<half3>午前|午後|上午|下午|晚上|早上|凌晨|오전|오후)?\s*(?<!\d)(?P<hour3>\d{1,2})\s*[时時点點시](?![间間간])"
    r"\s*(?:(?P<minute4>\d{1,2})\s*[分분])?",
    re.IGNORECASE,
)
# A time written right after its date ("30. November 2026 um 08:15", "2026年11月30日 午前5時30分") is one moment.
_DATE_TIME_GAP = re.compile(r"^(?:[\s,，、の]|at|um|à|às|as|le|de|om|alle|a las|kl\.?){0,8}$", re.IGNORECASE)


_ISO = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})(?:-(?P<day>\d{2})(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})(?::\d{2}(?:\.\d+)?)?"
    r"(?P<offset>Z|[+-]\d{2}:?\d{2})?)?)?"
)


def iso_date(text: str) -> WrittenDate | None:
    """A whole string in ISO 8601 form ("2026-10", "2026-11-30T08:15:00Z"): the way APIs write dates."""
    match = _ISO.fullmatch(text)
    if match is None:
        return None
    parts = [int(value) if value else None for value in match.group("year", "month", "day", "hour", "minute")]
    if not 1 <= (parts[1] or 0) <= 12:
        return None
    offset = _offset_minutes(match.group("offset")) if match.group("offset") else None
    return WrittenDate(text, 0, len(text), (tuple(parts),), offset)  # type: ignore[arg-type]


def read_dates(text: str) -> list[WrittenDate]:
    """Every date and time written in `text`, in order, none overlapping."""
    if not _ANY_DIGIT.search(text):
        return []  # every form has a digit: most of a result's strings are done with here
    found: list[WrittenDate] = []
    taken: list[tuple[int, int]] = []
    numeric = _may_be_numeric(text)
    months = _month_names()
    # Dates with a month's name are looked for only around the month names the text has (most have none).
    around = [
        (max(0, start - _BEFORE_MONTH), start + len(word) + _AFTER_MONTH)
        for start, word in letter_words(text)
        if word in months
    ]
    for pattern, order in _patterns():
        if order == "dm":
            matches: Iterable[re.Match[str]] = (
                match for start, end in around for match in pattern.finditer(text, start, end)
            )
        elif numeric:
            matches = pattern.finditer(text)
        else:
            continue  # cheap gates first: the big patterns run only where a date can be
        for match in matches:
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            readings = _date_readings(match, order)
            if readings:
                found.append(WrittenDate(match.group(0).strip(), match.start(), match.end(), readings))
                taken.append((match.start(), match.end()))
    if _may_name_quarter(text):
        for written in _quarters(text):
            if not any(written.start < end and start < written.end for start, end in taken):
                found.append(written)
                taken.append((written.start, written.end))
    for match in _TIME.finditer(text) if _may_tell_time(text) else ():
        if any(match.start() < end and start < match.end() for start, end in taken):
            continue
        reading = _time_reading(match)
        if reading is not None:
            found.append(WrittenDate(match.group(0).strip(), match.start(), match.end(), (reading,)))
            taken.append((match.start(), match.end()))
    found += _range_ends(text, found, taken)
    return [_with_zone(text, written) for written in _joined(text, sorted(found, key=lambda d: d.start))]


def _may_be_numeric(text: str) -> bool:
    """Can `text` hold an all-numeric date (`_NUMERIC_DATE`)?"""
    if any(mark in text for mark in _CJK_DATE_MARKS):
        return _NUMERIC_DATE.search(text) is not None
    return any(pattern.search(text) is not None for pattern in _SEPARATED_DATES)


def _may_tell_time(text: str) -> bool:
    """Can `text` hold a time (`_TIME_GATE`)?"""
    if any(pattern.search(text) is not None for pattern in _TIME_AFTER_DIGIT):
        return True
    words = [*_TIME_WORDS, _CJK_HOUR] if any(hour in text for hour in _CJK_HOURS) else _TIME_WORDS
    return any(_after_digit(text, match.start()) for pattern in words for match in pattern.finditer(text))


def _after_digit(text: str, at: int) -> bool:
    """Does a digit stand before `at`, with nothing but spaces between them?"""
    at -= 1
    while at >= 0 and text[at].isspace():
        at -= 1
    return at >= 0 and text[at].isdecimal()


_RANGE_JOIN = r"(?:-|–|—|~|～|to|through|until|bis|au|al|a|tot|t/m|至|到|から|부터)"
_RANGE_AFTER = re.compile(rf"\s*{_RANGE_JOIN}\s*(\d{{1,2}})(?:\.|日|일)?(?![\d:]|[.,]\d|\s*[°%$€£¥])", re.IGNORECASE)
_RANGE_BEFORE = re.compile(rf"(?<![\d.,:])(\d{{1,2}})(?:\.|日|일)?\s*{_RANGE_JOIN}\s*$", re.IGNORECASE)


def _range_ends(text: str, found: list[WrittenDate], taken: list[tuple[int, int]]) -> list[WrittenDate]:
    """The other end of a range of days written once: "November 23 to 29", "23. bis 29. November",
    "12月1日至3日" — the bare day takes its month and year from the date it is joined to."""
    ends: list[WrittenDate] = []
    for written in found:
        if not all(r[2] is not None and r[3] is None for r in written.readings):
            continue
        after = _RANGE_AFTER.match(text, written.end)
        before = _RANGE_BEFORE.search(text, max(0, written.start - 16), written.start)
        for match in (after, before):
            if match is None or any(match.start(1) < end and start < match.end(1) for start, end in taken):
                continue
            day = int(match.group(1))
            if 1 <= day <= 31:
                readings = tuple(dict.fromkeys((r[0], r[1], day, None, None) for r in written.readings))
                ends.append(WrittenDate(match.group(1), match.start(1), match.end(1), readings))
                taken.append((match.start(1), match.end(1)))
    return ends


# "Q3", "3Q", "3분기", "四半期", "季度", "quarter" …: whether a text can name a quarter at all. Its first character is
# read as one class (what each form opens with, in either case; "\u212a" is the Kelvin sign, a "k" to
# IGNORECASE), so that the search skips to those characters; the rest of each form is checked from there.
_QUARTER_OPENINGS = "".join(sorted({case for word in QUARTER_WORDS for case in (word[0].lower(), word[0].upper())}))
_QUARTER_GATE = re.compile(
    f"[QqTt1-4분四季{_QUARTER_OPENINGS}\u212a](?:(?<=[QqTt])[1-4]|(?<=[1-4])[Qq]|(?<=분)기|(?<=四)半期|(?<=季)度|(?i:"
    + "|".join(f"(?<={word[0]}){word[1:]}" for word in QUARTER_WORDS)
    + "))"
)


def _quarter_gate(first: str) -> re.Pattern[str]:
    """`_QUARTER_GATE` where it opens with `first` ("Q3", "3Q", "quarter"): a pattern that opens with one character
    skips to it at once, where one that opens with a class of them tests every character of the text."""
    forms = ["[1-4]"] if first in "QqTt" else []
    forms += [f"(?<=[1-4]{first})"] if first in "Qq" else []
    forms += [f"(?i:{word[1:]})" for word in QUARTER_WORDS if re.fullmatch(word[0], first, re.IGNORECASE)]
    return re.compile(re.escape(first) + "(?:" + "|".join(forms) + ")")


_QUARTER_GATES = tuple(_quarter_gate(first) for first in dict.fromkeys(f"QqTt{_QUARTER_OPENINGS}\u212a"))
_CJK_QUARTER_WORDS = ("분기", "四半期", "季度")


def _may_name_quarter(text: str) -> bool:
    """Does `text` name a quarter anywhere (`_QUARTER_GATE`)?"""
    return any(word in text for word in _CJK_QUARTER_WORDS) or any(
        gate.search(text) is not None for gate in _QUARTER_GATES
    )


_YEAR_PART = r"(?P<year>\d{4}|'\d{2}|(?<=[QT][1-4][ /-])\d{2}|(?<=[1-4]Q)\d{2})"
_QUARTER_ORDINAL = "|".join(sorted(QUARTER_ORDINALS, key=len, reverse=True))
_QUARTERS = (
    re.compile(r"(?<![\d\w])(?P<year>\d{4})\s*[-/ ]?\s*Q(?P<q>[1-4])(?![\w])"),  # 2026-Q3, 2026 Q3
    re.compile(rf"(?<![\w])[QT](?P<q>[1-4])(?:\s*[-/ ]?\s*{_YEAR_PART})?(?![\w])"),  # Q3 2026, Q3/26, T3 2026
    re.compile(rf"(?<![\w])(?P<q>[1-4])Q\s*{_YEAR_PART}(?![\d])"),  # 3Q26
    re.compile(r"(?<!\d)(?P<q>[1-4])\.\s*Quartal(?:\s+(?P<year>\d{4}))?"),  # 3. Quartal 2026
    re.compile(r"(?:(?P<year>\d{4})\s*[年년]\s*)?第?\s*(?P<q>[1-4一二三四])\s*(?:四半期|季度|분기)"),
    re.compile(
        rf"(?<![\w])(?P<word>{_QUARTER_ORDINAL})\s+(?:{'|'.join(QUARTER_WORDS)})(?:\s+(?:of\s+|de\s+|del\s+)?(?P<year>\d{{4}}))?",
        re.IGNORECASE,
    ),
)
_CJK_QUARTERS = {"一": 1, "二": 2, "三": 3, "四": 4}


def _quarters(text: str) -> list[WrittenDate]:
    """ "Q3 2026", "2026-Q3", "3Q26", "3. Quartal 2026", "2026年第3四半期", "3분기", "third quarter of 2026": the
    three months of a quarter, each a reading (a result's "2026-09-30" or "2026-Q3" agrees with it)."""
    found: list[WrittenDate] = []
    for pattern in _QUARTERS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            if groups.get("word"):
                quarter = QUARTER_ORDINALS[groups["word"].casefold()]
            else:
                quarter = _CJK_QUARTERS.get(groups["q"]) or int(groups["q"])
            year_text = (groups.get("year") or "").lstrip("'")
            year = None if not year_text else int(year_text) + (2000 if len(year_text) == 2 else 0)
            readings = tuple((year, month, None, None, None) for month in range(quarter * 3 - 2, quarter * 3 + 1))
            found.append(WrittenDate(match.group(0).strip(), match.start(), match.end(), readings))
    return found


def quarter_of(written: WrittenDate) -> tuple[int | None, int] | None:
    """The year and quarter a written quarter shows, or None when it is no quarter."""
    months = [r[1] for r in written.readings]
    if len(months) != 3 or any(r[2] is not None for r in written.readings) or None in months:
        return None
    first = months[0]
    if first is None or (first - 1) % 3 or months != [first, first + 1, first + 2]:
        return None
    return written.readings[0][0], (first + 2) // 3


def _joined(text: str, found: list[WrittenDate]) -> list[WrittenDate]:
    """A date followed by its time becomes one moment (so that a time zone moves both)."""
    joined: list[WrittenDate] = []
    for written in found:
        last = joined[-1] if joined else None
        if (
            last is not None
            and all(r[3] is None and r[2] is not None for r in last.readings)
            and all(r[0] is None and r[3] is not None for r in written.readings)
            and _DATE_TIME_GAP.match(text[last.end : written.start])
        ):
            readings = tuple((d[0], d[1], d[2], t[3], t[4]) for d in last.readings for t in written.readings)
            joined[-1] = WrittenDate(text[last.start : written.end].strip(), last.start, written.end, readings)
        else:
            joined.append(written)
    return joined


def _with_zone(text: str, written: WrittenDate) -> WrittenDate:
    """The zone written with a time: an ISO offset, "08:15 UTC", "09:15 Uhr MEZ", "北京时间16:15"."""
    if all(r[3] is None for r in written.readings):
        return written
    offset = _OFFSET.search(written.text)
    if offset is not None:
        return replace(written, offset=_offset_minutes(offset.group(1)))
    after = _ZONE_AFTER.match(text, written.end)
    before = _ZONE_BEFORE.search(text[max(0, written.start - 16) : written.start])
    zone = after.group(1) if after else before.group(1) if before else None
    return replace(written, offset=ZONES[zone.casefold()]) if zone else written


def _offset_minutes(text: str) -> int:
    if text.upper() == "Z":
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:]))


def _date_readings(match: re.Match[str], order: str) -> tuple[tuple, ...]:
    groups = match.groupdict()
    year = int(groups["year"]) if groups.get("year") else None
    if year is not None and year < 100:
        year += 2000
    day = int(groups["day"]) if groups.get("day") else None
    hour = int(groups["hour"]) if groups.get("hour") else None
    minute = int(groups["minute"]) if groups.get("minute") else None
    if groups.get("month"):
        written = groups["month"]
        month = _month_names().get(written.casefold().rstrip("."))
        day_first = day is not None and match.start("day") < match.start("month")  # "3 mai", never "may 3 people"
        if month is None or (written.casefold() in _abbreviations() and not written[0].isupper() and not day_first):
            return ()
        months = [(month, day)]
    elif order == "dmy?":
        assert day is not None  # this order's pattern always has a day
        first, second = day, int(groups["m"])
        months = [(second, first), (first, second)]  # 30/11 (day first) and 11/30 (month first)
    else:
        months = [(int(groups["m"]), day)]
    readings = tuple(
        (year, m, d, hour, minute)
        for m, d in months
        if 1 <= m <= 12 and (d is None or 1 <= d <= 31) and (hour is None or hour <= 24)
    )
    return tuple(dict.fromkeys(readings))


def _time_reading(match: re.Match[str]) -> tuple | None:
    groups = match.groupdict()
    hour_text = (
        groups["hour"] or groups["hour2"] or groups["hour3"] or groups["hour4"] or groups["hour5"] or groups["hour6"]
    )
    minute_text = groups["minute"] or groups["minute2"] or groups["minute3"] or groups["minute4"] or groups["minute5"]
    half = (groups["half"] or groups["half2"] or "").lower().replace(".", "").replace(" ", "")
    if groups["half3"]:
        half = "am" if groups["half3"] in ("午前", "上午", "早上", "凌晨", "오전") else "pm"
    if groups["hour"] and not minute_text:
        return None
    hour, minute = int(hour_text), int(minute_text) if minute_text else 0
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 24 or minute > 59:
        return None
    return (None, None, None, hour, minute)


def minutes_between(first: WrittenDate, second: WrittenDate) -> set[int]:
    """The minutes from one moment to the other, as their readings allow: two datetimes exactly (in one zone
    when both name theirs), two times of day forward from either (a night train from 22:40 to 06:10 takes
    450), two dates in whole days ("from 6 to 30 April": 24 days)."""
    spans: set[int] = set()
    for a in first.readings:
        for b in second.in_zone(first.offset if second.offset is not None else None):
            if a[3] is not None and b[3] is not None:
                at, bt = a[3] * 60 + (a[4] or 0), b[3] * 60 + (b[4] or 0)
                moments = _moment(a), _moment(b)
                if moments[0] is not None and moments[1] is not None:
                    spans.add(abs(int((moments[1] - moments[0]).total_seconds())) // 60)
                elif at != bt:
                    spans.update(((bt - at) % 1440, (at - bt) % 1440))
            elif a[3] is None and b[3] is None and a[2] is not None and b[2] is not None:
                year = b[0] or a[0] or 2000  # a leap year: any day a text names exists in it
                days = _moment((a[0], a[1], a[2], 0, 0), year), _moment((b[0], b[1], b[2], 0, 0), year)
                if days[0] is not None and days[1] is not None and days[0] != days[1]:
                    spans.add(abs((days[1] - days[0]).days) * 1440)
    return spans


def _moment(parts: Parts, year: int | None = None) -> datetime | None:
    """The moment `parts` names when it names a whole date (a day without its year takes `year`)."""
    y, month, day, hour, minute = parts
    y = y if y is not None else year
    if y is None or month is None or day is None:
        return None
    try:
        return datetime(y, month, day, (hour or 0) % 24, minute or 0)
    except ValueError:
        return None


_CJK_WEEKDAYS = {
    **{f"星期{d}": i for i, d in enumerate("一二三四五六日")}, "星期天": 6,
    **{f"周{d}": i for i, d in enumerate("一二三四五六日")}, "周天": 6,
    **{f"{d}曜日": i for i, d in enumerate("月火水木金土日")}, **{f"{d}曜": i for i, d in enumerate("月火水木金土日")},
    **{f"{d}요일": i for i, d in enumerate("월화수목금토일")},
    **{f"({d})": i for i, d in enumerate("月火水木金土日")}, **{f"（{d}）": i for i, d in enumerate("月火水木金土日")},
    **{f"({d})": i for i, d in enumerate("월화수목금토일")},
}  # fmt: skip
_CJK_WEEKDAY = re.compile("|".join(re.escape(w) for w in sorted(_CJK_WEEKDAYS, key=len, reverse=True)))
_WEEKDAY_GAP = re.compile(r"[\s,.，、(（]*(?:(?:den|le|el|il|o|de|the|on)\s+)?$", re.IGNORECASE)
_WEEKDAY_FILLERS = frozenset(
    (
        *("tombe", "est", "sera", "is", "was", "falls", "on", "a", "an", "un", "une", "el", "es", "cae", "en"),
        *("cade", "di", "è", "é", "cai", "num", "numa", "um", "uma", "ist", "ein", "valt", "op", "een", "le", "il"),
        *("o", "de", "that", "which"),
    )
)
_LAST_WORD = re.compile(r"([^\W\d_]{3,})\.?$")
_WEEKDAY_AFTER = re.compile(r"[\s,，]*[(（]?\s*")


@cache
def _weekday_names() -> dict[str, int]:
    from babel.dates import get_day_names

    names: dict[str, int] = {}
    for locale in MONTH_LOCALES:
        for width in ("wide", "abbreviated"):
            for index, name in get_day_names(width, locale=locale).items():
                if len(name.rstrip(".")) >= 3 and not _CJK_WEEKDAY.search(name):
                    names[name.casefold().rstrip(".")] = index
    return names


def said_weekday(text: str, written: WrittenDate) -> int | None:
    """The day of the week a text gives a date ("Montag, den 10. März", "Tuesday, March 10", "3月12日（星期三）",
    "3월 12일(목)"): 0 for Monday, or None when it gives none."""
    window = text[max(0, written.start - 24) : written.start]
    gap = _WEEKDAY_GAP.search(window)
    last = _LAST_WORD.search(window, 0, gap.start() if gap else len(window))
    if last is not None and last.group(1).casefold() in _weekday_names():
        return _weekday_names()[last.group(1).casefold()]
    for _, word in letter_words(text[written.end : written.end + 28]):  # "Le 9 juin tombe un mercredi"
        if word in _weekday_names():
            return _weekday_names()[word]
        if word not in _WEEKDAY_FILLERS:
            break
    # "（星期三）", "(水)" as written, or "星期三" after a space or an opening bracket.
    gap = _WEEKDAY_AFTER.match(text, written.end)
    assert gap is not None  # it matches the empty string
    cjk = _CJK_WEEKDAY.match(text, written.end) or _CJK_WEEKDAY.match(text, gap.end())
    return _CJK_WEEKDAYS[cjk.group(0)] if cjk else None


def weekday_of(written: WrittenDate, stated: WrittenDate) -> int | None:
    """The day of the week of the date `written` agrees with in `stated` (the year from either)."""
    for mine in written.readings:
        for theirs in stated.readings:
            if _agrees(mine, theirs):
                moment = _moment(theirs, mine[0])
                if moment is not None:
                    return moment.weekday()
    return None


def split_moment(written: WrittenDate) -> tuple[WrittenDate, WrittenDate] | None:
    """A date with its time as two ("15 de mayo a las 21:30" → 15 May, 21:30), for results that give them in
    two fields; None when it is not both."""
    if not all(r[2] is not None and r[3] is not None for r in written.readings):
        return None
    day = tuple(dict.fromkeys((y, m, d, None, None) for y, m, d, _, _ in written.readings))
    time = tuple(dict.fromkeys((None, None, None, h, mi) for _, _, _, h, mi in written.readings))
    return replace(written, readings=day), replace(written, readings=time)
