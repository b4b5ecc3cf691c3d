"""A body that says it failed: one rule, whether a built-in returned it or an HTTP API answered it.

The two paths used to read such bodies with two rules that had drifted; the cases below are where they
disagreed (a built-in's `{"error": {"code": 404}}` became code "404", an HTTP API's `{"error": true}` was
data). Both now give the same verdict.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agent import ErrorCode, GradingTable, ToolError, normalise
from agent.reported_failure import REPORTED_FAILURE_CODE, reported_failure
from agent.tools.http_reply import HttpReply, interpret_reply

TABLE = GradingTable()


def over_http(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> ToolError:
    reply = HttpReply(status, "", httpx.Headers(headers or {}), json.dumps(body).encode())
    with pytest.raises(ToolError) as caught:
        interpret_reply(reply, max_bytes=1_000_000)
    return caught.value


@pytest.mark.parametrize(
    ("body", "code"),
    [
        # An `error` that says something without `"ok": true`: a failure, whatever its type (HTTP read it as data).
        ({"error": True, "message": "daily quota used up"}, REPORTED_FAILURE_CODE),
        ({"error": ["city unknown"]}, REPORTED_FAILURE_CODE),
        # A code that is no code (a built-in kept it as the code).
        ({"ok": False, "code": "not a code!"}, REPORTED_FAILURE_CODE),
        ({"error": {"code": " "}}, REPORTED_FAILURE_CODE),
        ({"error": {"code": {"nested": 1}}}, REPORTED_FAILURE_CODE),
        # An HTTP status as the code (a built-in made it code "404").
        ({"error": {"code": 404, "message": "no such city"}}, ErrorCode.NOT_FOUND),
        ({"ok": False, "code": 503}, ErrorCode.UPSTREAM_DOWN),
        # Where they always agreed.
        ({"ok": False}, REPORTED_FAILURE_CODE),
        ({"error": "something broke"}, REPORTED_FAILURE_CODE),
        ({"ok": False, "error": {"code": "city_not_found"}}, ErrorCode.CITY_NOT_FOUND),
    ],
)
def test_reported_failure_same_verdict_from_a_builtin_and_over_http(body: dict[str, Any], code: str):
    observed = normalise(body, TABLE)
    answered = over_http(body)

    assert observed.ok is False and observed.code == code
    assert answered.code == code


@pytest.mark.parametrize(
    "body",
    [
        {"ok": True, "error": "a field named error, under ok: true"},
        {"error": None, "city": "上海"},
        {"error": "", "city": "上海"},
        {"error": False, "city": "上海"},
        {"error": 0, "city": "上海"},
    ],
)
def test_reported_failure_data_that_merely_has_an_error_field_stays_data(body: dict[str, Any]):
    assert reported_failure(body) is None
    assert normalise(body, TABLE).ok is True


def test_reported_failure_keeps_the_body_details_and_reads_the_action_only_when_it_is_text():
    body = {"ok": False, "code": "QUOTA", "message": "used up", "reset_at": "00:00", "suggested_action": 5}
    observed = normalise(body, TABLE)
    answered = over_http(body)

    assert observed.error is not None and observed.error.details == {"reset_at": "00:00"}
    assert answered.details == {"reset_at": "00:00", "http_status": 200}
    assert observed.suggested_action is None and answered.suggested_action is None  # 5 is not an action


def test_reported_failure_over_http_takes_the_status_code_and_retry_after_when_the_body_names_none():
    error = over_http({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "7"})

    assert (error.code, error.message, error.retry_after_s) == (ErrorCode.RATE_LIMIT, "slow down", 7.0)
    assert reported_failure({"error": {"message": "slow down"}}).code == REPORTED_FAILURE_CODE  # no status: no guess


def test_reported_failure_says_who_reported_it_when_the_body_gives_no_message():
    assert reported_failure({"ok": False}).message == "the tool reported a failure"
    assert reported_failure({"ok": False}, status=200).message == "the API reported a failure"
