"""build_tools: the config's `tools:` list becomes the run's tool set, or a ConfigError that names the entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agent.config import AgentConfig, ToolEntry
from agent.errors import ConfigError, ErrorCode, ToolError
from agent.policy import ToolPolicy
from agent.tools.base import Tool
from agent.tools.http import HttpTool
from agent.tools.registry import build_tools
from tests.fakes.http_api import ApiReply, FakeHttpApi

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"


def entries(*specs: dict[str, Any]) -> list[ToolEntry]:
    return AgentConfig.model_validate({"tools": list(specs)}).tools


def http_entry(name: str, url: str, **http: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} over HTTP",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "http": {"url": url, **http},
    }


def build(
    http_client: httpx.AsyncClient,
    *specs: dict[str, Any],
    env: dict[str, str] | None = None,
    data_dir: Path = CONFIG_DIR,
) -> list[Tool]:
    return build_tools(entries(*specs), env=env or {}, http=http_client, data_dir=data_dir)


async def test_registry_builds_the_shipped_tool_set(http_client: httpx.AsyncClient):
    shipped = yaml.safe_load((CONFIG_DIR / "parley.yaml").read_text(encoding="utf-8"))["tools"]

    tools = build(http_client, *shipped)

    assert [t.spec.name for t in tools] == ["calculator", "knowledge_lookup", "web_search", "get_weather"]


async def test_registry_builtin_and_http_tools_keep_entry_order(http_api: FakeHttpApi, http_client: httpx.AsyncClient):
    http_api.route("/forecast/上海", ApiReply.with_json({"tomorrow": "rain"}))
    tools = build(
        http_client,
        {"builtin": "calculator"},
        http_entry(
            "get_forecast",
            http_api.url("/forecast/{city}"),
            headers={"X-Api-Key": "${FORECAST_KEY}"},
        ),
        env={"FORECAST_KEY": "key-123456"},
    )

    assert [t.spec.name for t in tools] == ["calculator", "get_forecast"]
    assert isinstance(tools[1], HttpTool)
    assert await tools[1].call({"city": "上海"}) == {"tomorrow": "rain"}
    assert http_api.requests[0].headers["x-api-key"] == "key-123456"


async def test_registry_unknown_builtin_lists_the_known_ones(http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError) as caught:
        build(http_client, {"builtin": "calculator"}, {"builtin": "stock_price"})

    message = str(caught.value)
    assert message.startswith("tools[1]:")
    assert "'stock_price'" in message
    for known in ("calculator", "get_weather", "knowledge_lookup", "web_search"):
        assert known in message


async def test_registry_builtin_timeout_overrides_default(http_client: httpx.AsyncClient):
    (default,) = build(http_client, {"builtin": "get_weather"})
    (custom,) = build(http_client, {"builtin": "get_weather", "timeout_s": 0.5})

    assert default.timeout_s == 5
    assert custom.timeout_s == 0.5
    assert custom.spec == default.spec
    assert (await custom.call(custom.validate({"city": "北京"})))["temp_c"] == 22


async def test_registry_duplicate_builtin_is_config_error(http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError, match=r"tools\[1\].*'calculator'.*tools\[0\]"):
        build(http_client, {"builtin": "calculator"}, {"builtin": "calculator"})


async def test_registry_http_tool_shadowing_builtin_is_config_error(http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError, match="get_weather"):
        build(http_client, {"builtin": "get_weather"}, http_entry("get_weather", "http://weather.internal/{city}"))


async def test_registry_missing_env_variable_names_entry_and_variable(http_client: httpx.AsyncClient):
    spec = http_entry("get_forecast", "http://forecast.internal/{city}", headers={"Authorization": "${TOKEN}"})

    with pytest.raises(ConfigError, match=r"tools\[0\].*TOKEN"):
        build(http_client, spec)


async def test_registry_options_name_a_data_file_in_data_dir(tmp_path: Path, http_client: httpx.AsyncClient):
    city = "{name: 火星基地, aliases: [Mars Base], temp_c: -60, condition: dusty, humidity: 0, wind_kph: 40}"
    (tmp_path / "mars.yaml").write_text(f"cities:\n  - {city}\n", encoding="utf-8")
    (tool,) = build(http_client, {"builtin": "get_weather", "options": {"file": "mars.yaml"}}, data_dir=tmp_path)

    result = await tool.call(tool.validate({"city": "mars base"}))

    assert result["city"] == "火星基地"
    assert result["temp_c"] == -60


async def test_registry_missing_data_file_is_config_error(tmp_path: Path, http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError, match=r"weather\.yaml"):
        build(http_client, {"builtin": "get_weather"}, data_dir=tmp_path)


async def test_registry_bad_data_file_is_config_error(tmp_path: Path, http_client: httpx.AsyncClient):
    (tmp_path / "knowledge.yaml").write_text("facts: [not, a, mapping\n", encoding="utf-8")

    with pytest.raises(ConfigError, match=r"knowledge\.yaml"):
        build(http_client, {"builtin": "knowledge_lookup"}, data_dir=tmp_path)


async def test_registry_fallback_naming_no_tool_is_config_error(http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError, match="'search_v2'"):
        build(http_client, {"builtin": "web_search", "fallbacks": ["search_v2"]})


async def test_registry_fallback_to_an_acting_tool_is_config_error(http_client: httpx.AsyncClient):
    with pytest.raises(ConfigError) as caught:
        build(
            http_client,
            {"builtin": "get_weather", "fallbacks": ["web_search", "create_ticket"]},
            {"builtin": "web_search"},
            {**http_entry("create_ticket", "http://tickets.internal/{city}", method="POST"), "acting": True},
        )

    assert str(caught.value) == (
        "tools[0]: get_weather cannot fall back to create_ticket: create_ticket is acting (acting: true), "
        "and a fallback must be a tool the model may try on its own"
    )


async def test_registry_fallback_to_a_tool_a_policy_holds_is_config_error(http_client: httpx.AsyncClient):
    config = AgentConfig.model_validate(
        {
            "tools": [
                {"builtin": "calculator"},
                {"builtin": "web_search", "fallbacks": ["transfer_funds"]},
                http_entry("transfer_funds", "http://bank.internal/{city}", method="POST"),
            ],
            "policies": [{"tool": "transfer_funds", "hold_when": [{"argument": "amount", "above": 1000}]}],
        }
    )

    with pytest.raises(ConfigError) as caught:
        build_tools(config.tools, env={}, http=http_client, data_dir=CONFIG_DIR, policies=config.policies)

    assert str(caught.value) == (
        "tools[1]: web_search cannot fall back to transfer_funds: a policy holds transfer_funds calls for a "
        "person's approval, and a fallback must be a tool the model may try on its own"
    )


async def test_registry_acting_tool_with_fallbacks_of_its_own_is_accepted(http_client: httpx.AsyncClient):
    ticket = {**http_entry("create_ticket", "http://tickets.internal/{city}", method="POST"), "acting": True}
    held = [ToolPolicy(tool="create_ticket", requires_approval=True)]

    tools = build_tools(
        entries({**ticket, "fallbacks": ["web_search"]}, {"builtin": "web_search"}),
        env={},
        http=http_client,
        data_dir=CONFIG_DIR,
        policies=held,
    )

    assert [t.spec.name for t in tools] == ["create_ticket", "web_search"]


async def test_registry_search_outage_option_reaches_the_backend(http_client: httpx.AsyncClient):
    (tool,) = build(http_client, {"builtin": "web_search", "options": {"outage": True}})

    with pytest.raises(ToolError) as caught:
        await tool.call(tool.validate({"query": "Zephyr Labs market share"}))

    assert caught.value.code == ErrorCode.UPSTREAM_DOWN
