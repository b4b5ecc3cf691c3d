"""The Definition of Done: planned by rules when the LLM cannot, ticked only by evidence."""

from agent.done import DoneChecklist, DoneItem, Evidence, evidence_text, plan_by_rules


def descriptions(checklist: DoneChecklist) -> list[str]:
    return [item.description for item in checklist.items]


def test_done_rules_find_both_cities_comparison_and_advice_in_chinese():
    checklist = plan_by_rules("查上海和北京天气，对比并给穿衣建议。", ["get_weather"])
    assert [i.mentions for i in checklist.items if i.kind == "evidence"] == [["上海"], ["北京"]]
    assert {i.description for i in checklist.items if i.kind == "answer"} == {
        "The answer compares them",
        "The answer gives the advice asked for",
    }


def test_done_rules_in_english_and_for_small_talk():
    checklist = plan_by_rules("Compare the weather in Shanghai and Beijing, what should I wear?", ["w"])
    assert [i.mentions for i in checklist.items if i.kind == "evidence"] == [["Shanghai"], ["Beijing"]]
    assert descriptions(plan_by_rules("hi", ["w"])) == ["The question is answered"]


def test_done_items_are_ticked_only_by_matching_successful_evidence():
    checklist = DoneChecklist(
        [
            DoneItem(description="上海 weather", tool="get_weather", mentions=["上海"]),
            DoneItem(description="x", kind="answer", answer_terms=["建议"]),
        ]
    )
    assert checklist.tick_from([Evidence("calculator", "c0", evidence_text({"e": "上海"}, 1))]) == []
    ticked = checklist.tick_from([Evidence("get_weather", "c1", evidence_text({"city": " 上海"}, {"t": 28}))])
    assert [(item.description, call) for item, call in ticked] == [("上海 weather", "c1")]
    assert checklist.missing("上海 28°C") == ["x"]
    assert checklist.missing("上海 28°C，建议穿短袖") == []
