"""`parley runs show`: one recorded run's whole trace, found by its id or a unique prefix of it.

The text is checked against the same run's `--json` (what the store holds), row by row: every step, every
tool call with its outcome and observation, every Done tick, critique verdict and rejected final, the
final answer, its sources, the escalation and the audit log.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.bot.history.parley_cli import ok, one_line_error
from tests.bot.history.run_rows import bulk_run
from tests.bot.history.stores import REFUSED_QUESTION, Store

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

TRACE_KEYS = {"run", "steps", "tool_calls", "verdicts", "escalations", "audit", "feedback"}
WEATHER_QUESTION = "查上海和北京天气，对比并给穿衣建议。"


def flat(text: str) -> str:
    return " ".join(str(text).split())


def step_blocks(text: str) -> list[str]:
    """The text of each `step N · …` block, in order (up to the final answer)."""
    steps = re.split(r"\n\n(?=Answer:\n|Final \(as the user saw it\):\n)", text)[0]
    return re.split(r"\n\n(?=step \d+ · )", steps)[1:]


def assert_shows_whole_trace(text: str, trace: dict[str, Any]) -> None:
    run = trace["run"]
    assert text.startswith(f"run {run['id']}\n")
    assert f"  status       {run['status']} ({run['termination_reason']})" in text
    assert f"Q: {run['question']}" in text
    blocks = step_blocks(text)
    assert [block.split(" · ")[0] for block in blocks] == [f"step {s['step']}" for s in trace["steps"]]
    for step, block in zip(trace["steps"], blocks, strict=True):
        assert block.startswith(f"step {step['step']} · {step['decision']}")
        if step["decision"] in ("final", "give_up"):
            assert f"  text: {step['text']}" in block
        for call in (c for c in trace["tool_calls"] if c["step"] == step["step"]):
            outcome = "ok" if call["ok"] else f"{call['error_code']} ({call['error_level']})"
            arguments = json.dumps(call["arguments"], ensure_ascii=False)
            assert f"  {call['tool']}({arguments}) → {outcome} · " in block
            assert f" · id {call['tool_call_id']}" in block
            assert "    observation: " + flat(call["observation"])[:200] in block
        for verdict in (v for v in trace["verdicts"] if v["step"] == step["step"]):
            line = {
                "done_tick": f"  ☑ {verdict['item']}",
                "critique": f"  critique {verdict['stage']} ({verdict['source']}, round {verdict['round']}): ",
                "final_rejected": f"  ✗ final not accepted ({verdict['stage']}): ",
            }[verdict["kind"]]
            assert line in block, (verdict, block)
    heading = "Answer:" if run["status"] == "solved" else "Final (as the user saw it):"
    assert f"\n{heading}\n{run['answer']}\n" in text
    for citation in run["citations"]:
        arguments = json.dumps(citation["arguments"], ensure_ascii=False)
        assert f"\n  {citation['marker']} {citation['tool']}({arguments})" in text
    audit = [line.strip().split(" ", 1) for line in text.split("\nAudit:\n")[1].splitlines()]
    assert [(datetime.fromisoformat(at), change) for at, change in audit] == [
        (datetime.fromisoformat(e["at"]), f"{e['actor']}: {e['action']} {e['from_status'] or '-'} → {e['to_status']}")
        for e in trace["audit"]
    ]


def assert_degraded_demo_b(stdout: str, store: Store) -> None:
    trace = json.loads(stdout)
    assert set(trace) == TRACE_KEYS
    run = trace["run"]
    assert (run["id"], run["status"], run["termination_reason"]) == (store.recorded.demo_b, "degraded", "gave_up")
    assert run["asker"] == "cli:alice"
    assert run["brain"] == "replay:demo_b.yaml" and run["replayed"] is True
    assert [s["step"] for s in trace["steps"]] == [1, 2, 3, 4, 5]
    assert trace["steps"][-1]["decision"] == "give_up"
    assert [c["error_code"] for c in trace["tool_calls"]] == ["UPSTREAM_DOWN", "NOT_FOUND"] + ["UPSTREAM_DOWN"] * 2
    assert all(c["run_id"] == run["id"] and not c["ok"] for c in trace["tool_calls"])
    assert all(json.loads(c["observation"])["ok"] is False for c in trace["tool_calls"])
    assert {v["kind"] for v in trace["verdicts"]} == {"plan", "critique"}
    assert [(a["action"], a["to_status"]) for a in trace["audit"]] == [
        ("run_started", "running"),
        ("run_finished", "degraded"),
    ]
    assert trace["escalations"] == []
    assert run["missing"] == ["Zephyr Labs' current market share, from a live source"]


def test_runs_show_prints_every_step_check_and_the_audit_log(store: Store) -> None:
    """The weather demo (rich), the refused ask (escalation) and demo B (degraded) as text and as --json."""
    weather, refused = store.recorded.weather, store.recorded.refused

    by_id, weather_json, refused_text, refused_json, demo_b_json = store.parley.many(
        ["runs", "show", weather],
        ["runs", "show", weather[:8], "--json"],  # by the 8 characters `parley runs list` users copy
        ["runs", "show", refused[:8]],
        ["runs", "show", refused, "--json"],
        ["runs", "show", store.recorded.demo_b, "--json"],
    )

    text = ok(by_id)
    trace = json.loads(ok(weather_json))
    assert set(trace) == TRACE_KEYS
    assert trace["run"]["id"] == weather
    assert_shows_whole_trace(text, trace)
    # What the weather demo recorded (config/demos/weather.yaml), as the reader sees it.
    assert trace["run"]["question"] == WEATHER_QUESTION
    assert [s["decision"] for s in trace["steps"]] == ["tool_calls", "final", "tool_calls", "tool_calls", "final"]
    assert [(c["tool"], c["ok"]) for c in trace["tool_calls"]] == [
        ("get_weather", True),
        ("get_weather", True),
        ("calculator", True),
    ]
    kinds = Counter(v["kind"] for v in trace["verdicts"])
    assert kinds == {"plan": 1, "done_tick": 2, "critique": 2, "final_rejected": 1}
    for line in (
        "  ☑ 已获取上海天气（来自 tool）",
        "  ☑ 已获取北京天气（来自 tool）",
        "  critique closing (rules+llm, round 2): on track",
        "  text: 上海今天 28°C [1]。",
        "Sources:\n  [1] get_weather",
        "Definition of Done:\n  - 已获取上海天气（来自 tool）",
        # which rule grounded each figure of the accepted answer
        "Grounded figures:\n  28°C — exact: 28°C ← 28 (temp_c) in [1]\n  22°C — exact: 22°C ← 22 (temp_c) in [2]",
    ):
        assert line in text
    assert [(g["figure"], g["rule"], g["sources"]) for g in trace["run"]["grounding"]] == [
        ("28°C", "exact", ["[1]"]),
        ("22°C", "exact", ["[2]"]),
        ("6°C", "exact", ["[3]"]),
    ]
    assert "✗ final not accepted (done): 已获取北京天气（来自 tool）" in text
    assert trace["escalations"] == []

    refused_trace = json.loads(ok(refused_json))
    assert_shows_whole_trace(ok(refused_text), refused_trace)
    assert refused_trace["run"]["question"] == REFUSED_QUESTION
    assert '  get_weather({"city": "Atlantis"}) → CITY_NOT_FOUND (L4) · ' in refused_text.stdout
    [escalation] = refused_trace["escalations"]
    assert (escalation["status"], escalation["reason"], escalation["level"]) == ("pending", "policy_violation", "L4")
    assert (escalation["tool"], escalation["arguments"]) == ("get_weather", {"city": "Atlantis"})
    assert f"Escalation (pending): policy_violation L4 — {escalation['message']}" in refused_text.stdout
    assert '  held action: get_weather({"city": "Atlantis"})' in refused_text.stdout
    assert_degraded_demo_b(ok(demo_b_json), store)


def test_runs_show_refuses_unknown_and_ambiguous_prefixes(store: Store) -> None:
    month_ago = datetime.now(UTC) - timedelta(days=30)
    store.rows.insert([bulk_run(month_ago, id="abcdef12" + digit * 24) for digit in "01"])

    ambiguous, unknown = store.parley.many(["runs", "show", "abcdef12"], ["runs", "show", "0123456789abcdef"])

    assert "'abcdef12' names more than one run" in one_line_error(ambiguous)
    assert "no run '0123456789abcdef'" in one_line_error(unknown)


def test_runs_show_takes_a_prefix_literally(store: Store) -> None:
    inside = "%" + store.recorded.weather[10:18]  # matches no id's beginning, but LIKE '%…%' matches one id

    line = one_line_error(store.parley("runs", "show", inside))

    assert f"no run '{inside}'" in line


def test_runs_show_says_which_figures_parley_cited_itself(store: Store) -> None:
    """Seed 003's Demo A as its 8B model ended it: a bare "564 million USD", cited by Parley."""
    text, as_json = store.parley.many(
        ["runs", "show", store.recorded.demo_a_8b], ["runs", "show", store.recorded.demo_a_8b, "--json"]
    )

    trace = json.loads(ok(as_json))
    run = trace["run"]
    assert (run["status"], run["termination_reason"]) == ("solved", "answered")
    assert run["answer"] == "564 million USD [3]"  # the model wrote no tag: Parley attached the calculator's
    assert [c["marker"] for c in run["citations"]] == ["[1]", "[2]", "[3]"]  # the lookups the calculator used
    assert [(g["figure"], g["cited_by"]) for g in run["grounding"]] == [("564 million USD", "parley")]
    assert (
        "Grounded figures:\n  564 million USD — scaled: 564 million USD ← 564 (result) in [3] "
        "(its call used [1], [2]), cited by Parley"
    ) in ok(text)
    final = next(step for step in trace["steps"] if step["decision"] == "final")
    assert final["text"] == "564 million USD"  # the trace keeps what the model wrote
