"""normalise / serialise: the shape every tool result takes before the model sees it."""

import json

import pytest

from agent import ErrorLevel, GradingTable, ToolError, normalise, serialise
from agent.observation import with_hint

TABLE = GradingTable()


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"ok": False}, "TOOL_REPORTED_FAILURE"),
        ({"ok": False, "error": {"code": "CITY_NOT_FOUND", "message": "no"}}, "CITY_NOT_FOUND"),
        ({"error": {"code": "QUOTA", "message": "used up"}}, "QUOTA"),
        ({"error": "something broke"}, "TOOL_REPORTED_FAILURE"),
        ("<!DOCTYPE html><html><body>500</body></html>", "BAD_RESPONSE"),
        ("  <html><head><title>Error</title>", "BAD_RESPONSE"),
        (b"\xff\xfe", "BAD_RESPONSE"),
        (TimeoutError(), "TIMEOUT"),
        (RuntimeError("boom"), "TOOL_CRASHED"),
    ],
)
def test_observation_failures_are_never_data(raw, code):
    obs = normalise(raw, TABLE)
    assert obs.ok is False and obs.code == code


def test_observation_unknown_code_is_l1_and_not_retryable():
    obs = normalise({"error": {"code": "QUOTA", "retryable": True}}, TABLE)
    assert (obs.level, obs.error.retryable) == (ErrorLevel.L1, False)


def test_observation_tool_cannot_make_a_non_retryable_code_retryable_but_can_forbid():
    assert normalise(ToolError("INVALID_ARGS", "x", retryable=True), TABLE).error.retryable is False
    assert normalise(ToolError("TIMEOUT", "x", retryable=False), TABLE).error.retryable is False
    assert normalise(ToolError("TIMEOUT", "x"), TABLE).error.retryable is True


def test_observation_ok_envelope_is_unwrapped_and_data_kept():
    assert normalise({"ok": True, "data": {"t": 1}}, TABLE).data == {"t": 1}
    assert normalise({"ok": True, "data": 1, "extra": 2}, TABLE).data == {"ok": True, "data": 1, "extra": 2}
    assert normalise("plain text", TABLE).data == "plain text"


def test_observation_serialise_is_short_json_with_cite_and_suggestion():
    ok = json.loads(serialise(normalise({"city": "上海"}, TABLE), cite="[1]"))
    assert ok == {"ok": True, "data": {"city": "上海"}, "cite": "[1]"}
    failed = json.loads(serialise(normalise(ToolError("CITY_NOT_FOUND", "no city"), TABLE)))
    assert failed["error"]["level"] == "L1" and failed["suggested_action"] == "retry_with_pinyin"
    quiet = json.loads(serialise(normalise(ToolError("CITY_NOT_FOUND", "no"), TABLE), include_suggested_action=False))
    assert "suggested_action" not in quiet


def test_observation_hint_only_when_enabled():
    obs = with_hint(normalise({"city": "上海"}, TABLE), "get_weather")
    assert "_hint" not in json.loads(serialise(obs))
    assert json.loads(serialise(obs, include_hint=True))["_hint"].startswith("get_weather succeeded")


@pytest.mark.parametrize("budget", [200, 500, 2000])
def test_observation_cut_respects_the_budget_and_says_what_was_cut(budget):
    big = {"items": [{"n": i, "text": "字" * 300} for i in range(1000)], "note": "x" * 50_000}
    text = serialise(normalise(big, TABLE), max_chars=budget)
    body = json.loads(text)
    assert len(text) <= budget
    assert body["ok"] is True and "_truncated" in body
