"""Citations and grounding of a draft answer."""

from agent.finalize import validate_json_output
from agent.grounding import check as check_answer
from agent.source import Source

SOURCES = [
    Source(1, "get_weather", "c1", 1, {"city": "上海"}, {"city": "上海", "temp_c": 28}),
    Source(2, "get_weather", "c2", 2, {"city": "北京"}, {"city": "北京", "temp_c": 22}),
    Source(3, "calculator", "c3", 3, {"expression": "1,000 * 2.5"}, {"result": 2500}),
]


def test_finalize_cited_and_grounded_answer_passes():
    check = check_answer("上海 28°C [1]，北京 22°C [2]。Total 2,500 [3].", SOURCES, "q")
    assert check.ok, check.problems
    assert [c.tool_call_id for c in check.citations] == ["c1", "c2", "c3"]


def test_finalize_seed_style_source_note_counts_as_a_citation():
    check = check_answer("上海 28°C（来源：get_weather）", SOURCES, "q")
    assert check.ok and [c.marker for c in check.citations] == ["[1]"]  # get_weather's call about 上海
    assert check.answer == "上海 28°C [1]（来源：get_weather）"


def test_finalize_number_in_no_result_is_ungrounded_but_question_numbers_are_fine():
    assert "the number 31 appears in no tool result" in check_answer("上海 31°C [1]", SOURCES, "q").problems
    assert check_answer("For 2026: 上海 28°C [1]", SOURCES, "Weather in 2026?").ok


def test_finalize_misattributed_and_unknown_tags():
    problems = check_answer("上海 28°C [2]. See [9].", SOURCES, "q").problems
    assert "the number 28 is not in the result it cites ([2])" in problems
    assert "[9] is not the tag of any successful tool result" in problems


def test_finalize_uncited_answer_is_cited_by_parley_and_list_markers_are_no_figures():
    check = check_answer("1. 上海 28°C\n2. 北京 22°C", SOURCES, "q")
    assert check.ok, check.problems  # list numbering is not a fact
    assert check.answer == "1. 上海 28°C [1]\n2. 北京 22°C [2]"
    assert "the answer cites no tool result" in check_answer("上海比北京热。", SOURCES, "q").problems


def test_finalize_json_output_validation():
    schema = {"type": "object", "properties": {"temp_c": {"type": "number"}}, "required": ["temp_c"]}
    assert validate_json_output('```json\n{"temp_c": 28}\n```', schema) == ({"temp_c": 28}, [])
    assert validate_json_output('{"temp": 28}', schema)[1] == ["(root): 'temp_c' is a required property"]
    assert validate_json_output("not json", schema)[1][0].startswith("not valid JSON")


def test_finalize_reads_numbers_written_right_after_chinese_and_japanese_text():
    revenue = [Source(1, "get_revenue", "r1", 1, {"company": "星辰"}, {"revenue_cny": 12_500_000})]
    assert "the number 1350 appears in no tool result" in check_answer("营收为1350万元[1]", revenue, "q").problems
    assert "the number 31 appears in no tool result" in check_answer("上海今天31°C，晴[1]。", SOURCES, "q").problems
    assert "the number 19 appears in no tool result" in check_answer("東京は19度です[1]。", SOURCES, "q").problems
    assert check_answer("上海今天28°C，多云[1]。", SOURCES, "q").ok
