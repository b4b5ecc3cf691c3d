"""The reading phase's fast paths give what the patterns they replace give: each is pinned here to the slower
pattern, over text built from the characters those patterns turn on (several scripts, odd spaces, signs)."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.grounding import dates, figures

EXAMPLES = int(os.environ.get("PARLEY_HYPOTHESIS_EXAMPLES", "400"))
CHECKS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize="PARLEY_HYPOTHESIS_EXAMPLES" not in os.environ,
)

# Characters and pieces the patterns below turn on: digits (also non-ASCII ones), signs, separators, spaces of
# several widths, letters that open units, scales, quarters and times, CJK date and scale marks.
PIECES = st.sampled_from(
    [
        *"0123456789١٢٣",
        *"-+−.,'’/:\u00a0\u202f\u2009 \n\t",
        *"aApPmMhHqQtTkK\u212aıİſxX_第年월月分기半期季度时時点點시uUoO",
        "Uhr", "UHR", "uur", "O'CLOCK", "Heures", "heureſ", "a.m", "P M", "8 h", "8h", "8 H 15", "8h15", "3\u3000時",
        "Q3", "3Q", "q4", "T2", "2026-Q3", "3Q26", "quarter", "QUARTER", "Trimestre", "quartal", "kwaartaal",
        "Kwaartaal", "\u212awaartaal", "3분기", "第3四半期", "2026年第三季度", "30.11.2026", "2026-11", "2026-11-30",
        "11月", "11 月", "3/7", "12/2026", "8:15", "8.15 Uhr", "9 uur", "8 o'clock", "10 heures", "8 am", "8 p.m",
        "8pm", "5 时", "9h15", "3 h 17", "COVID-19", "ISO-8601", "p50", "v1.2.3", "10.0.0.1", "1,234,567",
        "1.234.567", "1 234 567", "1'234'567", "12,5", "-3", "−4.5", "+1.2", "a-5", "x -5", "5-3", "1,234,5",
        "€1.2 million", "$3", "about 12", "75 %",
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=30).map("".join)

# The patterns as they were before the fast paths.
_OLD_NUMBER = re.compile(
    r"""
    (?=[-+−\d])
    (?<![A-Za-z0-9_])
    (?<![A-Za-z]-)
    (?<![0-9][.,'])
    (?<!第)
    (?P<sign>[-+−](?=\d))?
    (?P<body>
        \d{1,3}(?P<sep>[,.'’\u00a0\u202f\u2009\ ])\d{3}(?:(?P=sep)\d{3})*(?!\d)(?:(?P<dec>[.,])(?P<frac>\d+))?
      | \d+(?:(?P<dec2>[.,])(?P<frac2>\d+))?
    )
    """,
    re.VERBOSE,
)


def _old_numbers(text: str) -> list[tuple[int, int, str | None, str, tuple[str | None, ...]]]:
    return [
        (m.start(), m.end(), m.group("sign"), m.group("body"), m.group("sep", "dec", "frac", "dec2", "frac2"))
        for m in _OLD_NUMBER.finditer(text)
    ]


def _new_numbers(text: str) -> list[tuple[int, int, str | None, str, tuple[str | None, ...]]]:
    found = []
    for m in figures._NUMBER.finditer(text):
        start, sign = m.start(), None
        if text[start - 1 : start] in figures._SIGNS and figures._SIGNED.match(text, start - 1):
            start, sign = start - 1, text[start - 1]
        found.append((start, m.end(), sign, m.group(0), m.groups()))
    return found


@CHECKS
@given(TEXTS)
def test_number_pattern_finds_what_the_look_behind_first_pattern_found(text: str) -> None:
    assert _new_numbers(text) == _old_numbers(text)


@CHECKS
@given(TEXTS)
def test_date_gates_answer_as_the_whole_text_patterns(text: str) -> None:
    assert dates._may_be_numeric(text) == bool(dates._NUMERIC_DATE.search(text))
    assert dates._may_name_quarter(text) == bool(dates._QUARTER_GATE.search(text))
    assert dates._may_tell_time(text) == bool(dates._TIME_GATE.search(text))


def test_time_words_open_with_each_case_of_their_letters() -> None:
    """The time gate finds its words by their first letter as written, in both cases: no other character is that
    letter to a case-insensitive pattern (as "\u212a", the Kelvin sign, is "k")."""
    letters = re.compile("[uohap]", re.IGNORECASE)
    assert {chr(c) for c in range(0x110000) if letters.fullmatch(chr(c))} == set("uohapUOHAP")
    assert all(ch.isspace() == bool(re.fullmatch(r"\s", ch)) for ch in map(chr, range(0x110000)))
    assert all(ch.isdecimal() == bool(re.fullmatch(r"\d", ch)) for ch in map(chr, range(0x110000)))


def test_number_pattern_table() -> None:
    for text in ("a-5 x -5 5-3 −4.5 +1.2 第3 p50 1,234,5 1.2.3 -12,345.6 (−7)", "-1", "+", "--5", "1-2-3"):
        assert _new_numbers(text) == _old_numbers(text), text
