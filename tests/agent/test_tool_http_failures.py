"""HttpTool when things break on the way: timeouts, refused connections, every httpx exception, and secrets."""

from __future__ import annotations

import inspect
import socket
import time

import httpx
import pytest

from agent.errors import ConfigError, ErrorCode
from agent.tools.http import HttpTool, translate_http_error
from tests.agent.weather_api import ENV, SECRET, assert_no_secret, failure_of, weather_entry, weather_tool
from tests.fakes.http_api import ApiReply, FakeHttpApi

# --- transport failures --------------------------------------------------------------------------------------


async def test_http_tool_slow_server_is_timeout(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({"temp_c": 28}).after(5.0))
    tool = weather_tool(http_api, http_client, timeout_s=0.2)

    started = time.monotonic()
    error = await failure_of(tool, {"city": "上海"})

    assert error.code == ErrorCode.TIMEOUT
    assert "0.2 s" in error.message
    assert time.monotonic() - started < 2.0


async def test_http_tool_refused_connection_is_connection_error(http_client: httpx.AsyncClient):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends: nothing listens there
    tool = HttpTool(weather_entry(f"http://127.0.0.1:{port}"), http_client, ENV)

    error = await failure_of(tool, {"city": "上海"})

    assert error.code == ErrorCode.CONNECTION_ERROR


def _httpx_exception_classes() -> list[type[Exception]]:
    return [
        obj for name in httpx.__all__ if inspect.isclass(obj := getattr(httpx, name)) and issubclass(obj, Exception)
    ]


def _instance(cls: type[Exception], request: httpx.Request) -> Exception:
    if issubclass(cls, httpx.HTTPStatusError):
        return cls("boom", request=request, response=httpx.Response(503, request=request))
    if issubclass(cls, httpx.RequestError):
        return cls("boom", request=request)
    try:
        return cls("boom")
    except TypeError:
        return cls()


@pytest.mark.parametrize(
    "exc_class", [*_httpx_exception_classes(), TimeoutError, ConnectionResetError], ids=lambda c: c.__name__
)
async def test_http_tool_translates_every_client_exception(exc_class: type[Exception]):
    def explode(request: httpx.Request) -> httpx.Response:
        raise _instance(exc_class, request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(explode)) as client:
        tool = HttpTool(weather_entry("http://weather.internal"), client, ENV)
        error = await failure_of(tool, {"city": "上海"})

    assert error.code in set(ErrorCode)
    assert_no_secret(error)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ConnectTimeout("t"), ErrorCode.TIMEOUT),
        (httpx.ReadTimeout("t"), ErrorCode.TIMEOUT),
        (httpx.ConnectError("c"), ErrorCode.CONNECTION_ERROR),
        (httpx.ReadError("r"), ErrorCode.CONNECTION_ERROR),
        (httpx.RemoteProtocolError("r"), ErrorCode.CONNECTION_ERROR),
        (httpx.TooManyRedirects("r"), ErrorCode.BAD_RESPONSE),
        (httpx.DecodingError("d"), ErrorCode.BAD_RESPONSE),
        (httpx.UnsupportedProtocol("u"), ErrorCode.TOOL_CRASHED),
        (httpx.InvalidURL("u"), ErrorCode.INVALID_ARGS),
        (TimeoutError(), ErrorCode.TIMEOUT),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_translate_http_error_maps_exception_to_code(exc: Exception, code: ErrorCode):
    assert translate_http_error(exc, timeout_s=1.0).code == code


# --- secrets -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        ApiReply.with_json(
            {"error": {"code": "UNAUTHORIZED", "message": f"token Bearer {SECRET} expired"}}, status=401
        ),
        ApiReply.with_json({"ok": False, "message": f"bad key {SECRET}", "echo": {"authorization": SECRET}}),
        ApiReply.with_bytes(f"invalid token {SECRET}".encode(), status=403, content_type="text/plain"),
        ApiReply.with_json({"detail": f"you sent {SECRET}"}, status=500),
        ApiReply.with_bytes(f"<html>{SECRET}</html>".encode(), content_type="text/html"),
    ],
    ids=["error-body", "ok-false", "text-403", "json-500", "html-200"],
)
async def test_http_tool_error_messages_never_contain_secret(
    http_api: FakeHttpApi, http_client: httpx.AsyncClient, reply: ApiReply
):
    http_api.route("/v1/current/上海", reply)

    error = await failure_of(weather_tool(http_api, http_client), {"city": "上海"})

    assert_no_secret(error)
    assert http_api.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_http_tool_timeout_message_never_contains_secret(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/v1/current/上海", ApiReply.with_json({}).after(5.0))

    error = await failure_of(weather_tool(http_api, http_client, timeout_s=0.1), {"city": "上海"})

    assert_no_secret(error)


def test_http_tool_config_errors_never_contain_secret(http_client: httpx.AsyncClient):
    entry = weather_entry("http://127.0.0.1:9", headers={"Authorization": "Bearer ${WEATHER_TOKEN}"})

    with pytest.raises(ConfigError) as caught:
        HttpTool(entry, http_client, {"WEATHER_TOKEN": SECRET + "\n"})

    assert SECRET not in str(caught.value)
    assert "Authorization" in str(caught.value)
