"""The `get_weather` HTTP tool entry the HttpTool tests build against the fake API (with a secret header)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agent.config import HttpToolEntry
from agent.errors import ToolError
from agent.tools.http import HttpTool
from tests.fakes.http_api import FakeHttpApi

SECRET = "s3cr3t-weather-token-0123456789"
ENV = {"WEATHER_TOKEN": SECRET}
CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1}, "units": {"type": "string"}},
    "required": ["city"],
}


def weather_entry(
    base_url: str,
    *,
    method: str = "GET",
    url: str = "/v1/current/{city}",
    parameters: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = 5.0,
) -> HttpToolEntry:
    return HttpToolEntry.model_validate(
        {
            "name": "get_weather",
            "description": "Current weather for one city",
            "parameters": parameters or CITY_SCHEMA,
            "http": {
                "method": method,
                "url": base_url + url,
                "headers": {"Authorization": "Bearer ${WEATHER_TOKEN}"} if headers is None else headers,
                "timeout_s": timeout_s,
            },
        }
    )


def weather_tool(http_api: FakeHttpApi, client: httpx.AsyncClient, **options: Any) -> HttpTool:
    max_bytes = options.pop("max_response_bytes", None)
    entry = weather_entry(http_api.base_url, **options)
    if max_bytes is None:
        return HttpTool(entry, client, ENV)
    return HttpTool(entry, client, ENV, max_response_bytes=max_bytes)


async def failure_of(tool: HttpTool, arguments: dict[str, Any]) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await tool.call(arguments)
    return caught.value


def assert_no_secret(error: ToolError) -> None:
    shown = " ".join([str(error), error.message, json.dumps(error.details, ensure_ascii=False, default=str)])
    assert SECRET not in shown
