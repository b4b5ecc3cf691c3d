"""HttpTool against a real local HTTP server: the request it sends, every status mapping, bodies that lie."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from agent.errors import ConfigError, ErrorCode, ToolError
from agent.reported_failure import REPORTED_FAILURE_CODE
from agent.tools.http import MAX_REDIRECTS, HttpTool
from tests.agent.weather_api import CITY_SCHEMA, ENV, SECRET, failure_of, weather_entry, weather_tool
from tests.fakes.http_api import ApiReply, FakeHttpApi

# --- the request ---------------------------------------------------------------------------------------------


async def test_http_tool_get_percent_encodes_cjk_in_url(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({"city": "上海", "temp_c": 28}))
    tool = weather_tool(http_api, http_client)

    result = await tool.call({"city": "上海"})

    assert result == {"city": "上海", "temp_c": 28}
    (request,) = http_api.requests
    assert request.target == "/v1/current/%E4%B8%8A%E6%B5%B7"


async def test_http_tool_get_keeps_slash_and_query_chars_in_one_segment(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient
):
    http_api.route("/v1/current/a/b?c#d e", ApiReply.with_json({"ok": True}))
    tool = weather_tool(http_api, http_client)

    await tool.call({"city": "a/b?c#d e"})

    (request,) = http_api.requests
    assert request.target == "/v1/current/a%2Fb%3Fc%23d%20e"
    assert request.query == {}


async def test_http_tool_get_sends_other_arguments_as_query(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "units": {"type": "string"},
            "days": {"type": "integer"},
            "alerts": {"type": "boolean"},
            "fields": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city"],
    }
    http_api.route("/v1/current/北京", ApiReply.with_json({"temp_c": 22}))
    tool = weather_tool(http_api, http_client, parameters=schema)

    await tool.call({"city": "北京", "units": "公制", "days": 3, "alerts": True, "fields": ["temp", "wind"]})

    (request,) = http_api.requests
    assert request.method == "GET"
    assert request.path == "/v1/current/北京"
    assert request.query == {"units": ["公制"], "days": ["3"], "alerts": ["true"], "fields": ["temp", "wind"]}
    assert request.body == b""


async def test_http_tool_post_sends_other_arguments_as_json_body(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({"accepted": True}))
    tool = weather_tool(http_api, http_client, method="post")

    result = await tool.call({"city": "上海", "units": "metric"})

    assert result == {"accepted": True}
    (request,) = http_api.requests
    assert request.method == "POST"
    assert request.query == {}
    assert request.headers["content-type"] == "application/json"
    assert request.json == {"units": "metric"}


async def test_http_tool_substitutes_env_variable_in_header(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({"temp_c": 28}))
    tool = weather_tool(http_api, http_client)

    await tool.call({"city": "上海"})

    assert http_api.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_http_tool_missing_env_variable_is_config_error_naming_it(http_client: httpx.AsyncClient):
    entry = weather_entry("http://127.0.0.1:9", headers={"X-Api-Key": "${MISSING_TOKEN}"})

    with pytest.raises(ConfigError, match="MISSING_TOKEN"):
        HttpTool(entry, http_client, ENV)


async def test_http_tool_invalid_args_fail_before_any_request(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    tool = weather_tool(http_api, http_client)

    with pytest.raises(ToolError) as caught:
        tool.validate({"city": 3})
    error = await failure_of(tool, {"units": "metric"})

    assert caught.value.code == ErrorCode.INVALID_ARGS
    assert "city" in caught.value.message and "string" in caught.value.message
    assert error.code == ErrorCode.INVALID_ARGS
    assert "'city' is a required property" in error.message
    assert http_api.requests == []


async def test_http_tool_follows_redirects(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply(302, headers=(("Location", "/v2/current/shanghai"),)))
    http_api.route("/v2/current/shanghai", ApiReply.with_json({"temp_c": 28}))
    tool = weather_tool(http_api, http_client)

    assert await tool.call({"city": "上海"}) == {"temp_c": 28}


async def test_http_tool_does_not_follow_redirect_to_another_origin(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient
):
    with FakeHttpApi() as elsewhere:
        elsewhere.route("/steal", ApiReply.with_json({"temp_c": 28}))
        http_api.route("/v1/current/上海", ApiReply(302, headers=(("Location", elsewhere.url("/steal")),)))

        error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

        assert error.code == ErrorCode.BAD_RESPONSE
        assert "302" in error.message
        assert elsewhere.requests == []


async def test_http_tool_redirect_loop_is_bad_response(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply(307, headers=(("Location", "/v1/current/%E4%B8%8A%E6%B5%B7"),)))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.BAD_RESPONSE
    assert len(http_api.requests) == MAX_REDIRECTS + 1


async def test_http_tool_keeps_query_of_url_template(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({"temp_c": 28}))
    tool = weather_tool(http_api, http_client, url="/v1/current/{city}?format=json")

    await tool.call({"city": "上海", "units": "metric"})

    assert http_api.requests[0].query == {"format": ["json"], "units": ["metric"]}


# --- status codes --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, ErrorCode.INVALID_ARGS),
        (422, ErrorCode.INVALID_ARGS),
        (404, ErrorCode.NOT_FOUND),
        (401, ErrorCode.FORBIDDEN),
        (403, ErrorCode.FORBIDDEN),
        (451, ErrorCode.POLICY_VIOLATION),
        (429, ErrorCode.RATE_LIMIT),
        (500, ErrorCode.UPSTREAM_DOWN),
        (502, ErrorCode.UPSTREAM_DOWN),
        (503, ErrorCode.UPSTREAM_DOWN),
        (504, ErrorCode.UPSTREAM_DOWN),
        (507, ErrorCode.UPSTREAM_DOWN),
    ],
)
async def test_http_tool_maps_status_to_code(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient, status: int, code: ErrorCode
):
    http_api.route("/v1/current/上海", ApiReply.with_json({"detail": "nope"}, status=status))
    tool = weather_tool(http_api, http_client)

    error = await failure_of(tool, {"city": "上海"})

    assert error.code == code
    assert str(status) in error.message
    assert error.details["http_status"] == status


async def test_http_tool_html_error_page_maps_by_status(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    page = b"<!DOCTYPE html><html><body><h1>503 Service Unavailable</h1></body></html>"
    http_api.route("/v1/current/上海", ApiReply.with_bytes(page, status=503, content_type="text/html"))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.UPSTREAM_DOWN
    assert "body" not in error.details  # an HTML page is no use to the model


async def test_http_tool_rate_limit_reads_retry_after_seconds(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({}, status=429, headers={"Retry-After": "7"}))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.RATE_LIMIT
    assert error.retry_after_s == 7


async def test_http_tool_rate_limit_reads_retry_after_http_date(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    http_api.route("/v1/current/上海", ApiReply.with_json({}, status=429, headers={"Retry-After": when}))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.retry_after_s is not None and 20 < error.retry_after_s <= 30


# --- bodies that say they failed ----------------------------------------------------------------------------


async def test_http_tool_ok_false_with_200_is_failure_with_its_code(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient
):
    body = {"ok": False, "code": "QUOTA_EXCEEDED", "message": "daily quota used up", "reset_at": "00:00"}
    http_api.route("/v1/current/上海", ApiReply.with_json(body))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == "QUOTA_EXCEEDED"
    assert error.message == "daily quota used up"
    assert error.details["reset_at"] == "00:00"


async def test_http_tool_ok_false_without_code_is_reported_failure(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient
):
    http_api.route("/v1/current/上海", ApiReply.with_json({"ok": False}))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == REPORTED_FAILURE_CODE


@pytest.mark.parametrize("status", [200, 404, 500])
async def test_http_tool_error_body_code_wins_whatever_status(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient, status: int
):
    body = {
        "error": {
            "code": "CITY_NOT_FOUND",
            "message": "unknown city 上嗨",
            "suggestions": ["上海"],
            "suggested_action": "retry_with_pinyin",
        }
    }
    http_api.route("/v1/current/上嗨", ApiReply.with_json(body, status=status))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上嗨"})

    assert error.code == ErrorCode.CITY_NOT_FOUND
    assert error.message == "unknown city 上嗨"
    assert error.details["suggestions"] == ["上海"]
    assert error.details["http_status"] == status
    assert error.suggested_action == "retry_with_pinyin"


async def test_http_tool_error_message_without_code_takes_status_code(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient
):
    http_api.route("/v1/current/上海", ApiReply.with_json({"error": {"message": "slow down"}}, status=429))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.RATE_LIMIT
    assert error.message == "slow down"


# --- bodies that are not what was asked for -----------------------------------------------------------------


async def test_http_tool_html_with_200_is_bad_response(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    page = b"<html><head><title>Login</title></head><body>Please sign in</body></html>"
    http_api.route("/v1/current/上海", ApiReply.with_bytes(page, content_type="text/html; charset=utf-8"))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.BAD_RESPONSE
    assert "HTML" in error.message


async def test_http_tool_plain_text_with_200_is_bad_response(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_bytes("晴 28°C".encode(), content_type="text/plain"))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.BAD_RESPONSE
    assert "not JSON" in error.message


async def test_http_tool_invalid_utf8_is_bad_response(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_bytes(b'{"city": "\xff\xfe\xfd"}'))

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert error.code == ErrorCode.BAD_RESPONSE
    assert "UTF-8" in error.message


async def test_http_tool_declared_charset_is_honoured(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    body = json.dumps({"city": "上海"}, ensure_ascii=False).encode("gbk")
    http_api.route("/v1/current/上海", ApiReply.with_bytes(body, content_type="application/json; charset=GBK"))

    assert await weather_tool(http_api, http_client).call({"city": "上海"}) == {"city": "上海"}


async def test_http_tool_accepts_nan_in_json(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_bytes(b'{"temp_c": NaN, "wind_kph": Infinity}'))

    result = await weather_tool(http_api, http_client).call({"city": "上海"})

    assert math.isnan(result["temp_c"]) and result["wind_kph"] == math.inf


async def test_http_tool_accepts_5mb_json_body(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    readings = [{"hour": i, "note": "x" * 100} for i in range(45_000)]
    reply = ApiReply.with_json({"readings": readings})
    assert len(reply.body) > 5_000_000
    http_api.route("/v1/current/上海", reply)

    result = await weather_tool(http_api, http_client).call({"city": "上海"})

    assert len(result["readings"]) == 45_000


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_http_tool_body_over_cap_is_bad_response(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient, chunked: bool
):
    reply = ApiReply.with_json({"padding": "x" * 200_000})
    http_api.route("/v1/current/上海", reply.in_chunks() if chunked else reply)
    tool = weather_tool(http_api, http_client, max_response_bytes=100_000)

    error = await failure_of(tool, {"city": "上海"})

    assert error.code == ErrorCode.BAD_RESPONSE
    assert "100000 byte cap" in error.message
    said = f"{len(reply.body)} bytes announced" if not chunked else "more than 100000 bytes read"
    assert said in error.message


async def test_http_tool_empty_204_returns_none(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply(204))

    assert await weather_tool(http_api, http_client, method="DELETE").call({"city": "上海"}) is None


# --- the entry itself ----------------------------------------------------------------------------------------


def test_http_tool_invalid_schema_is_config_error(http_client: httpx.AsyncClient):
    entry = weather_entry("http://127.0.0.1:9", parameters={"type": "object", "properties": {"city": {"type": 5}}})

    with pytest.raises(ConfigError, match="JSON Schema"):
        HttpTool(entry, http_client, ENV)


def test_http_tool_undeclared_url_placeholder_is_config_error(http_client: httpx.AsyncClient):
    entry = weather_entry("http://127.0.0.1:9", url="/v1/{region}/{city}")

    with pytest.raises(ConfigError, match="region"):
        HttpTool(entry, http_client, ENV)


def test_http_tool_relative_url_is_config_error(http_client: httpx.AsyncClient):
    entry = weather_entry("", url="/v1/current/{city}")

    with pytest.raises(ConfigError, match="absolute"):
        HttpTool(entry, http_client, ENV)


def test_http_tool_spec_is_the_entry(http_client: httpx.AsyncClient):
    tool = HttpTool(weather_entry("http://127.0.0.1:9", timeout_s=3), http_client, ENV)

    assert tool.spec.name == "get_weather"
    assert tool.spec.parameters == CITY_SCHEMA
    assert tool.timeout_s == 3
