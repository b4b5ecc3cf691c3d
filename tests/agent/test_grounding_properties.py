"""Property tests of the fact-checker: whatever a model writes and a tool returns, checking never raises,
and a figure no result states is never grounded."""

from __future__ import annotations

import re
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding import check as check_answer
from agent.grounding.dates import read_dates
from agent.grounding.figures import read_figures
from agent.grounding.language import CJK_CLAUSE_JOINS, CLAUSE_JOINS
from agent.grounding.names import NamedText, aliases_in
from agent.planner import plan_by_rules
from agent.small_talk import is_small_talk
from agent.source import Source
from agent.tools.base import ToolSpec
from tests.examples import checks

CHECKS = checks(150)

# Text that looks like answers: figures in many forms, citation tags, dates, CJK, odd characters.
PIECES = st.sampled_from(
    [
        "28 °C", "1,200,000", "1.200.000", "1 200 000", "1'200'000", "12,5", "1,2 Mio.", "120万", "1.2亿",
        "12億3456万7890円", "75%", "0.75", "about 183 ms", "over 180", "[1]", "[2]", "[1, 2]", "[99]",
        "（来源：get_weather）",
        "2026-11-30", "November 30, 2026", "30.11.2026", "2026年11月30日", "8:15 UTC", "北京时间16:15", "第3",
        "COVID-19", "v1.2.3", "$1.2M", "−5 °C", "1e400", "9" * 400, "\ud800", "\x00", "上海", "Shanghai", "。", ". ",
        "\n", "; ", "，", " and ", " 和 ", "(", ")", "1機あたり", "百分之75", "12 km", "0.18 s", "Mrd.", "…",
    ]
)  # fmt: skip
ANSWERS = st.lists(st.one_of(PIECES, st.text(max_size=20)), max_size=40).map("".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    PIECES,
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(st.one_of(st.text(max_size=12), PIECES), children, max_size=5)
    ),
    max_leaves=25,
)
SOURCES = st.lists(
    st.tuples(st.dictionaries(st.text(max_size=8), SCALARS, max_size=3), JSON), min_size=0, max_size=6
).map(lambda results: [Source(n, "tool", f"c{n}", 1, args, data) for n, (args, data) in enumerate(results, 1)])


@CHECKS
@given(answer=ANSWERS, sources=SOURCES, question=ANSWERS)
def test_grounding_check_never_raises_and_every_grounded_figure_names_a_cited_source(answer, sources, question):
    check = check_answer(answer, sources, question)
    tags = {source.tag for source in check.cited}
    for grounded in check.grounded:
        assert set(grounded.sources) <= tags | {source.tag for source in sources}
    for sentence in check.sentences:
        for start, end, why in sentence.unbacked:
            assert 0 <= start <= end <= len(sentence.text) and why
        assert sentence.without_unbacked() is not None


@CHECKS
@given(value=st.integers(min_value=1, max_value=10**9), data=JSON)
def test_grounding_never_grounds_a_figure_that_no_result_or_question_states(value, data):
    # A figure far from every number anywhere in the result cannot be a rounding, a scale or a derivation.
    source = Source(1, "tool", "c1", 1, {}, data)
    figures = {r.value for f in read_figures(str(data)) for r in f.readings}
    odd = Decimal(value) * 1000 + Decimal("0.123")
    if any(abs(odd - v) < 1000 for v in figures if v.is_finite()):
        return
    check = check_answer(f"The total is {odd} [1].", [source], "q")
    assert not check.ok


@CHECKS
@given(text=ANSWERS)
def test_reading_figures_dates_names_and_small_talk_never_raises(text):
    read_figures(text)
    read_dates(text)
    is_small_talk(text)
    aliases_in(text)
    NamedText(text).names("Shanghai")
    question = text.encode("utf-8", "replace").decode("utf-8")  # as `check_question` hands it on
    plan_by_rules(question, [ToolSpec("get_weather", "", {"type": "object"})])


# The clause joins as one pattern, as they were written before they were split in two for speed.
_ONE_PATTERN_OF_JOINS = re.compile(
    r"\s(?:and|while|whereas|but|though|although|und|während|wohingegen|aber|jedoch|et|mais|alors que|tandis que"
    r"|y|pero|mientras|e|ma|mentre|en|maar|terwijl)\s|而且|而|但是|但|然而|同时|另外|一方|一方で|에 비해",
    re.IGNORECASE,
)
JOIN_PIECES = st.sampled_from(
    [
        " ", "\n", "\u3000", "and", "AND", "e", "E", "y", "en", "alors que", "WÄHREND", "mentre", "x", "1", ",",
        "而", "且", "但", "是", "然", "同", "时", "另", "外", "一", "方", "で", "에", " 비해", "\u212a", "ſ", "İ",
    ]
)  # fmt: skip


@CHECKS
@given(
    pieces=st.lists(st.one_of(JOIN_PIECES, st.text(max_size=3)), max_size=14),
    bounds=st.tuples(st.integers(0, 60), st.integers(0, 60)),
)
def test_the_two_clause_join_patterns_find_what_one_pattern_of_both_finds(pieces, bounds):
    text = "".join(pieces)
    start, end = min(bounds), max(bounds)
    found = sorted(m.span() for joins in (CLAUSE_JOINS, CJK_CLAUSE_JOINS) for m in joins.finditer(text, start, end))
    assert found == [m.span() for m in _ONE_PATTERN_OF_JOINS.finditer(text, start, end)]


def test_the_clause_joins_look_ahead_at_every_first_letter_their_words_may_open_with():
    words = CLAUSE_JOINS.pattern.split("(?:", 1)[1].split(")")[0].split("|")
    every_character = "".join(map(chr, range(0x110000)))
    admitted = set(re.findall(r"[abejmptuwy]", every_character, re.IGNORECASE))
    opening = {char for word in words for char in re.findall(re.escape(word[0]), every_character, re.IGNORECASE)}
    assert admitted == opening
