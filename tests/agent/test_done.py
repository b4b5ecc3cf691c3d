"""The Definition of Done: planned from the question's structure, ticked by what really backs each item."""

from agent.done import DoneChecklist, DoneItem, EvidenceLog
from agent.planner import plan_by_rules
from agent.source import Source
from agent.tools.base import ToolSpec

WEATHER = [ToolSpec("get_weather", "Current weather for one city", {"type": "object"})]


def descriptions(checklist: DoneChecklist) -> list[str]:
    return [item.description for item in checklist.items]


def mentions(checklist: DoneChecklist) -> list[list[str]]:
    return [item.mentions for item in checklist.items if item.kind == "evidence"]


def evidence(*sources: Source) -> list:
    log = EvidenceLog()
    return [log.add(source) for source in sources]


def test_done_rules_find_both_cities_comparison_and_advice_in_chinese():
    checklist = plan_by_rules("查上海和北京天气，对比并给穿衣建议。", WEATHER)
    assert mentions(checklist) == [["上海"], ["北京"]]
    assert {i.description for i in checklist.items if i.kind == "answer"} == {
        "The answer compares them",
        "The answer gives the advice asked for",
    }


def test_done_rules_read_enumerations_in_several_languages():
    assert mentions(plan_by_rules("Compare the weather in Shanghai and Beijing, what should I wear?", WEATHER)) == [
        ["Shanghai"],
        ["Beijing"],
    ]
    assert mentions(plan_by_rules("What's the weather in Paris, Berlin and Rome right now?", WEATHER)) == [
        ["Paris"],
        ["Berlin"],
        ["Rome"],
    ]
    assert mentions(plan_by_rules("東京と大阪の天気は？", WEATHER)) == [["東京"], ["大阪"]]
    assert mentions(plan_by_rules("昨天的日活和月活分别是多少？", WEATHER)) == [["日活"], ["月活"]]


def test_done_rules_write_no_item_from_grammar_words_or_german_nouns():
    # One thing asked about: one item that any result backs — not "Wie", "Wetter" or "Cuánto" to look up.
    for question in ("Wie ist das Wetter in Köln?", "¿Cuántos habitantes tiene Madrid?", "Could you check Paris?"):
        assert descriptions(plan_by_rules(question, WEATHER)) == [f"A tool result that answers “{question}”"]
    assert mentions(plan_by_rules("How much did Zephyr Labs spend and what did it buy?", WEATHER)) == [[]]
    # "前年と比べて" compares with last year: neither the year nor the comparing is a thing to look up.
    # "Welche Noten …" asks which grades, not which of two is better: nothing to compare.
    for question in ("Welche Noten hat Lena Hoffmann im Zeugnis?", "¿Cuál es el precio del plan Pro?"):
        assert "The answer compares them" not in descriptions(plan_by_rules(question, WEATHER))
    assert "The answer compares them" in descriptions(
        plan_by_rules("Welche Stadt ist wärmer, Köln oder Bonn?", WEATHER)
    )
    checklist = plan_by_rules("関西支社の今期売上は前年と比べてどう？", WEATHER)
    assert [item.mentions for item in checklist.items if item.kind == "evidence"] == [[]]


def test_done_rules_write_one_item_for_a_name_given_in_two_scripts():
    checklist = plan_by_rules("北京和上海哪个冷？Compare Beijing and Shanghai.", WEATHER)
    assert mentions(checklist) == [["北京"], ["上海"]]  # the pinyin is the same name, not two more items
    checklist = plan_by_rules("Compare Beijing (北京) and Shanghai", WEATHER)
    assert mentions(checklist) == [["Beijing"], ["Shanghai"]]
    assert checklist.aliases["beijing"] == ["北京"]


def test_done_rules_leave_small_talk_without_items():
    for message in ("Thanks!", "Hi there!", "what can you do?", "谢谢！", "Danke dir!"):
        assert plan_by_rules(message, WEATHER).items == []


def test_done_rules_use_a_tools_enum_values_named_in_the_question():
    lookup = ToolSpec("get_metric", "", {"properties": {"metric": {"type": "string", "enum": ["dau", "mau"]}}})
    checklist = plan_by_rules("show me dau for today", [lookup])
    assert [(i.tool, i.mentions) for i in checklist.items] == [("get_metric", ["dau"])]


def test_done_items_are_ticked_only_by_matching_successful_evidence():
    checklist = DoneChecklist(
        [
            DoneItem(description="上海 weather", tool="get_weather", mentions=["上海"]),
            DoneItem(description="x", kind="answer", answer_terms=["建议"]),
        ]
    )
    assert checklist.tick_from(evidence(Source(1, "calculator", "c0", 1, {"e": "上海"}, 1))) == []
    ticked = checklist.tick_from(evidence(Source(1, "get_weather", "c1", 1, {"city": " 上海"}, {"t": 28})))
    assert [(item.description, call) for item, call in ticked] == [("上海 weather", "c1")]
    assert checklist.missing("上海 28°C") == ["x"]
    assert checklist.missing("上海 28°C，建议穿短袖") == []


def test_done_item_in_latin_script_is_ticked_by_a_call_in_chinese():
    checklist = DoneChecklist([DoneItem(description="Weather in Shanghai", tool="get_weather", mentions=["Shanghai"])])
    weather = Source(1, "get_weather", "c1", 1, {"city": "上海"}, {"city": "上海", "temp_c": 28})
    assert [call for _, call in checklist.tick_from(evidence(weather))] == ["c1"]
    # …but a short romanised name does not match inside other words, and another city does not count.
    other = DoneChecklist([DoneItem(description="Weather in Xi'an", mentions=["Xian"])])
    assert other.tick_from(evidence(Source(1, "get_weather", "c1", 1, {"city": "西宁"}, {}))) == []


def test_done_item_is_ticked_through_an_id_carried_from_one_call_to_the_next():
    checklist = DoneChecklist(
        [DoneItem(description="Balance of ACME Corp's main account", tool="get_account", mentions=["ACME Corp"])]
    )
    found = Source(1, "find_account", "c1", 1, {"name": "ACME Corp"}, {"account_id": "acc_9f3"})
    balance = Source(2, "get_account", "c2", 2, {"account_id": "acc_9f3"}, {"balance_eur": 1200})
    unrelated = Source(3, "get_account", "c3", 3, {"account_id": "acc_000"}, {"balance_eur": 5})
    log = evidence(found, unrelated, balance)
    assert checklist.tick_from(log[:2]) == []  # neither the finder nor another account is that balance
    assert [call for _, call in checklist.tick_from(log[2:])] == ["c2"]


def test_done_item_no_result_names_is_ticked_by_the_result_whose_value_the_answer_gives_it():
    checklist = DoneChecklist(
        [
            DoneItem(description="月活", tool="get_metrics", mentions=["月活"]),
            DoneItem(description="日活", tool="get_metrics", mentions=["日活"]),
        ]
    )
    mau = Source(1, "get_metrics", "c1", 1, {"metric": "mau"}, {"metric": "mau", "value": 1200000})
    dau = Source(2, "get_metrics", "c2", 1, {"metric": "dau"}, {"metric": "dau", "value": 340000})
    log = evidence(mau, dau)
    assert checklist.tick_from(log) == []  # the results say "mau" and "dau", never 月活 or 日活
    ticked = checklist.tick_from_values([("月活为120万", mau), ("日活为34万", dau)], log)
    assert [(item.description, call) for item, call in ticked] == [("月活", "c1"), ("日活", "c2")]


def test_done_item_is_never_ticked_by_a_value_of_a_result_about_another_item():
    checklist = DoneChecklist(
        [
            DoneItem(description="Shanghai", tool="get_weather", mentions=["上海"]),
            DoneItem(description="Shenzhen", tool="get_weather", mentions=["深圳"]),
        ]
    )
    shanghai = Source(1, "get_weather", "c1", 1, {"city": "上海"}, {"temp_c": 28})
    log = evidence(shanghai)
    assert [call for _, call in checklist.tick_from(log)] == ["c1"]
    # "Shenzhen 28 °C" with Shanghai's value: the answer's words cannot make Shanghai's result Shenzhen's.
    assert checklist.tick_from_values([("Shenzhen 28°C", shanghai)], log) == []
    assert checklist.open_evidence()[0].description == "Shenzhen"
