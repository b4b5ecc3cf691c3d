"""The reading phase's fast paths give what the patterns they replace give: each is pinned here to the slower
pattern, over text built from the characters those patterns turn on (several scripts, odd spaces, signs)."""

from __future__ import annotations

import re
from decimal import Decimal
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding import citations, dates, figures, structure
from agent.grounding.language import CJK_CLAUSE_JOINS, CLAUSE_JOINS
from agent.source import Source
from tests.examples import checks

CHECKS = checks(400)

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


LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "- **Berlin**: revenue",
                "Sources: get_weather",
                "**Quellen**:",
                "> SOURCE :",
                "来源：get_weather",
                "数据来源: x",
                "refs*: [1]",
                "- _Via_ : a",
                "ſources: x",
                "SOURCES：",
                "1. item",
                "  12) item",
                "- **3.** bold",
                "* 4、 x",
                "http://x.y/1.2",
                "https://a.b",
                "\n",
                " ",
                "\t",
                ":",
                "：",
                "*",
                "_",
                "#",
                "而且",
                "但是",
                "에 비해",
                " and ",
                " y ",
                "，",
                "、",
                "(",
                ")",
                ";",
                ",",
                "1,234",
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=25,
).map("".join)


def _old_blanked(text: str) -> str:
    marker = re.compile(r"^[ \t]*(?:[-*+>#•·]+[ \t]*|\*\*)*\d{1,2}[.)、](?:\*\*)?[ \t]", re.M)
    spans = [m.span() for m in marker.finditer(text)] + [m.span() for m in re.finditer(r"https?://\S+", text)]
    return structure.mask(text, spans, 0, None) if spans else text


def _old_clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [start]
    for match in structure._CLAUSE_MARK.finditer(text, start, end):
        if match.group(0) == "," and structure._inside_figure(text, match.start()):
            continue
        cuts += [match.start(), match.end()]
    for joins in (CLAUSE_JOINS, CJK_CLAUSE_JOINS):
        for match in joins.finditer(text, start, end):
            cuts += [match.start(), match.end()]
    cuts.append(end)
    cuts.sort()
    spans = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if text[a:b].strip()]
    return spans or [(start, end)]


@CHECKS
@given(LINES, st.integers(0, 30), st.integers(0, 30))
def test_layout_fast_paths_read_as_the_patterns(text: str, start: int, length: int) -> None:
    assert structure.blanked(text) == _old_blanked(text)
    for line in text.split("\n"):
        assert structure._lists_sources(line) == bool(structure._SOURCES.match(line)), line
    start = min(start, len(text))
    end = min(len(text), start + length)
    assert structure.clauses(text, start, end) == _old_clauses(text, start, end)


def test_cjk_clause_joins_are_words_as_written() -> None:
    words = CJK_CLAUSE_JOINS.pattern.split("|")
    assert all(not set(word) & set("\\[](){}.*+?^$") and CJK_CLAUSE_JOINS.fullmatch(word) for word in words)


def _old_plain(value: Decimal) -> str:
    if value != value.to_integral_value() and value.as_tuple().exponent < -4 and abs(value) < 10**20:  # type: ignore[operator]
        value = value.quantize(Decimal("0.0001"))
    return format(value.normalize(), "f")


VALUES = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=True),
    st.integers(-(10**40), 10**40).map(Decimal),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: Decimal(repr(f))),
    st.sampled_from(["0", "-0", "0.0", "5.0", "1.87", "1200", "1.2E+3", "0.00010", "1.23456", "9" * 28, "9" * 29]).map(
        Decimal
    ),
)


@CHECKS
@given(VALUES)
def test_plain_shows_values_as_before(value: Decimal) -> None:
    assert figures.plain(value) == _old_plain(value)


@CHECKS
@given(LINES)
def test_lines_are_where_the_line_pattern_finds_them(text: str) -> None:
    found = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"^.*$", text, re.M)]
    assert structure._lines(text) == found


NUMBERS = st.tuples(
    st.text("0123456789", min_size=1, max_size=40),
    st.one_of(st.none(), st.text("0123456789", min_size=1, max_size=12)),
    st.booleans(),
    st.booleans(),
    st.sampled_from(list(figures.Approximation)),
)


@CHECKS
@given(NUMBERS)
def test_unscaled_figures_read_as_multiplied_by_one(
    number: tuple[str, str | None, bool, bool, figures.Approximation],
) -> None:
    """`read_figures` takes an unscaled figure of up to 28 characters as read: what multiplying it by one gave
    (digits past the context's precision would have been rounded by it; those keep the multiplication)."""
    whole, frac, negative, percent, approximation = number
    digits = f"{whole}.{frac}" if frac else whole
    match = figures._NUMBER.search(digits)
    assert match is not None
    mantissas = figures._mantissas(match, None)  # "1.000" may be a thousand or one, as in the text
    unit = figures.UNITS["%"] if percent else None
    if len(digits) <= figures._PLAIN_DIGITS:
        multiplied = figures._readings(mantissas, figures._UNSCALED, unit, negative, approximation)
        assert figures._readings(mantissas, None, unit, negative, approximation) == multiplied
    read = figures.read_figures(f"It is {'-' if negative else ''}{digits}{' %' if percent else ''} today.")
    if len(read) == 1 and read[0].readings[0].unit == unit:  # a bare "0042" may be read as a code, not a figure
        shown = figures._readings(mantissas, figures._UNSCALED, unit, negative, read[0].approximation)
        assert [(str(r.value), str(r.precision)) for r in read[0].readings] == [
            (str(r.value), str(r.precision)) for r in shown
        ]


@CHECKS
@given(TEXTS)
def test_figures_come_in_order_with_every_duration_joined(text: str) -> None:
    """`read_figures` sorts and joins durations only when the text may need it: what it gives is in order, and
    joining again finds nothing left to join."""
    found = figures.read_figures(text)
    assert [f.start for f in found] == sorted(f.start for f in found)
    assert figures._joined_durations(list(found), text) == found


TOOLS = ("get_weather", "get_region", "天气")
NAMING = st.lists(
    st.one_of(
        PIECES,
        st.text(max_size=6),
        st.sampled_from(
            [*TOOLS, "GET_WEATHER", "Get_Region", "get-weather", "xget_weather", "get_weathers", "(source: ",
             "（来源：", ")", "）", "according to ", ". ", "。", "\n- ", "\n\nSources: ", "[^1]", "\n[^1]: ", "[1]"]
        ),
    ),
    max_size=30,
).map("".join)  # fmt: skip


@CHECKS
@given(NAMING)
def test_a_text_naming_no_tool_is_not_scanned_sentence_by_sentence(text: str) -> None:
    """`read_citations` skips the per-sentence scan for tool names when the whole text names none: it reads
    the same citations as the scan over every sentence does."""
    sources = [Source(n, tool, f"call_{n}", 1, {}, {"n": n}) for n, tool in enumerate(TOOLS, start=1)]
    blank = structure.blanked(text)
    read = citations.read_citations(blank, structure.layout(blank), sources)
    with patch.object(citations, "_tool_names", lambda tools: re.compile("")):  # "named somewhere", always
        scanned = citations.read_citations(blank, structure.layout(blank), sources)
    assert read == scanned
