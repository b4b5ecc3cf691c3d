"""The built-in tools over the shipped demo data: calculator, knowledge_lookup, web_search, get_weather."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent import GradingTable, normalise
from agent.errors import ConfigError, ErrorCode, ToolError
from agent.tools.base import Tool
from agent.tools.builtin import BUILTINS
from agent.tools.builtin.calculator import MAX_EXPRESSION_CHARS, evaluate
from agent.tools.builtin.search import CorpusSearchBackend, SearchBackendError, SearchResult, terms, web_search_tool

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"


def builtin(name: str, **options: Any) -> Tool:
    return BUILTINS[name](options, CONFIG_DIR)


async def run(tool: Tool, arguments: dict[str, Any]) -> Any:
    """As the executor does it: validate, then call."""
    return await tool.call(tool.validate(arguments))


async def failure_of(tool: Tool, arguments: dict[str, Any]) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await run(tool, arguments)
    return caught.value


# --- calculator ----------------------------------------------------------------------------------------------


async def test_calculator_multiplies_seed_003_numbers():
    result = await run(builtin("calculator"), {"expression": "47 * 12"})

    assert result == {"expression": "47 * 12", "result": 564}
    assert isinstance(result["result"], int)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(1 + 2) * 3 - 4 / 2", 7),
        ("7 // 2 + 7 % 2", 4),
        ("-2 ** 2", -4),
        ("+3", 3),
        ("2 ** -1", 0.5),
        ("0.1 + 0.2", 0.3),
        ("abs(-3.5)", 3.5),
        ("round(2.5)", 3),
        ("round(2.675, 2)", 2.68),
        ("min(3, 1, 2) + max(3, 1, 2)", 4),
        ("sqrt(16)", 4),
        ("47 × 12", 564),
        ("４７＊１２", 564),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, value: float):
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os')",
        "__import__('os').system('echo hi')",
        "(1).real",
        "x + 1",
        "pow(2, 3)",
        "'a' * 3",
        "[1, 2]",
        "lambda: 1",
        "1 < 2",
        "True + 1",
        "2 ^ 3",
        "round(2.5, ndigits=1)",
        "47 *",
    ],
)
def test_calculator_rejects_non_arithmetic(expression: str):
    with pytest.raises(ToolError) as caught:
        evaluate(expression)

    assert caught.value.code == ErrorCode.INVALID_ARGS


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("9 ** 9 ** 9", "exponent"),
        ("10 ** 5000", "too large"),
        ("2.0 ** 5000", "too large"),
        ("1e308 * 10", "too large"),
        ("(10 ** 200) * (10 ** 200)", "too large"),
        ("sqrt(-1)", "negative"),
        ("(-8) ** 0.5", "not a real number"),
    ],
)
def test_calculator_reports_math_errors(expression: str, said: str):
    with pytest.raises(ToolError) as caught:
        evaluate(expression)

    assert caught.value.code == ErrorCode.MATH_ERROR
    assert said in caught.value.message


async def test_calculator_rejects_overlong_expression_before_evaluating():
    error = await failure_of(builtin("calculator"), {"expression": "1+" * MAX_EXPRESSION_CHARS + "1"})

    assert error.code == ErrorCode.INVALID_ARGS


def test_calculator_rejects_deep_nesting_as_invalid_args():
    with pytest.raises(ToolError) as caught:
        evaluate("(" * 240 + "1" + ")" * 240)

    assert caught.value.code == ErrorCode.INVALID_ARGS


# --- knowledge_lookup ----------------------------------------------------------------------------------------


async def test_knowledge_lookup_finds_satellites_launched():
    result = await run(builtin("knowledge_lookup"), {"key": "satellites_launched"})

    assert result["value"] == 47
    assert result["entity"] == "Zephyr Labs"
    assert result["source"] == "Zephyr Labs fact sheet"


async def test_knowledge_lookup_returns_cost_with_its_unit():
    result = await run(builtin("knowledge_lookup"), {"key": "  Cost_Per_Satellite_MUSD "})

    assert result == {
        "key": "cost_per_satellite_musd",
        "value": 12,
        "unit": "million USD per satellite",
        "entity": "Zephyr Labs",
        "source": "Zephyr Labs fact sheet",
    }


async def test_knowledge_lookup_unit_key_is_not_found_with_suggestions():
    error = await failure_of(builtin("knowledge_lookup"), {"key": "cost_per_satellite_musd_unit"})

    assert error.code == ErrorCode.NOT_FOUND
    assert "no such key" in error.message
    assert "million USD per satellite" in error.message
    assert error.details["closest_keys"][0] == "cost_per_satellite_musd"


async def test_knowledge_lookup_has_no_market_share():
    error = await failure_of(builtin("knowledge_lookup"), {"key": "market_share"})

    assert error.code == ErrorCode.NOT_FOUND
    assert not any("share" in key for key in error.details["available_keys"])


async def test_knowledge_lookup_reads_options_file(tmp_path: Path):
    (tmp_path / "facts.yaml").write_text("entity: Acme\nfacts:\n  widgets: 3\n", encoding="utf-8")
    tool = BUILTINS["knowledge_lookup"]({"file": "facts.yaml"}, tmp_path)

    result = await run(tool, {"key": "widgets"})

    assert result == {"key": "widgets", "value": 3, "entity": "Acme", "source": "Acme fact sheet"}


# --- web_search ----------------------------------------------------------------------------------------------


async def test_web_search_returns_ranked_results():
    result = await run(builtin("web_search"), {"query": "Zephyr Labs satellite cost"})

    first = result["results"][0]
    assert set(first) == {"title", "snippet", "url"}
    assert "12 million" in first["title"]
    assert len(result["results"]) <= 3


async def test_web_search_matches_chinese_by_bigrams():
    result = await run(builtin("web_search"), {"query": "北京天气怎么样", "max_results": 1})

    assert result["results"][0]["url"] == "https://weather.example/cn/beijing"


async def test_web_search_corpus_has_no_market_share():
    tool = builtin("web_search")

    result = await run(tool, {"query": "Zephyr Labs market share", "max_results": 10})

    assert not any("market share" in (r["title"] + r["snippet"]).lower() for r in result["results"])


async def test_web_search_without_matches_is_not_found():
    error = await failure_of(builtin("web_search"), {"query": "xyzzy plugh"})

    assert error.code == ErrorCode.NOT_FOUND


async def test_web_search_outage_is_upstream_down():
    error = await failure_of(builtin("web_search", outage=True), {"query": "Zephyr Labs market share"})

    assert error.code == ErrorCode.UPSTREAM_DOWN
    assert "503" in error.message
    assert error.details == {"http_status": 503}


@pytest.mark.parametrize(
    ("status", "code"),
    [(429, ErrorCode.RATE_LIMIT), (500, ErrorCode.UPSTREAM_DOWN), (403, ErrorCode.FORBIDDEN), (400, "BAD_RESPONSE")],
)
async def test_web_search_translates_backend_errors(status: int, code: str):
    class FailingBackend:
        async def search(self, query: str, *, limit: int) -> list[SearchResult]:
            raise SearchBackendError(status)

    error = await failure_of(web_search_tool(FailingBackend()), {"query": "anything"})

    assert error.code == code


def test_search_terms_split_words_and_cjk_bigrams():
    assert terms("What is Zephyr Labs' 上海天气?") == ["zephyr", "labs", "上海", "海天", "天气"]


def test_search_corpus_without_documents_is_config_error():
    with pytest.raises(ConfigError, match="documents"):
        CorpusSearchBackend.from_data({"docs": []}, origin="test")


# --- get_weather ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("city", ["上海", " 上海 ", "Shanghai", "SHANGHAI", "shang hai", "上海市"])
async def test_get_weather_finds_shanghai_by_any_name(city: str):
    result = await run(builtin("get_weather"), {"city": city})

    assert result == {"city": "上海", "temp_c": 28, "condition": "cloudy", "humidity": 78, "wind_kph": 14}


async def test_get_weather_beijing_is_sunny():
    result = await run(builtin("get_weather"), {"city": "Beijing"})

    assert (result["city"], result["temp_c"], result["condition"]) == ("北京", 22, "sunny")


async def test_get_weather_typo_is_city_not_found_with_did_you_mean():
    error = await failure_of(builtin("get_weather"), {"city": "上嗨"})

    assert error.code == ErrorCode.CITY_NOT_FOUND
    assert error.details["did_you_mean"] == "上海"


async def test_get_weather_unknown_cjk_city_suggests_pinyin():
    error = await failure_of(builtin("get_weather"), {"city": "火星"})

    assert error.code == ErrorCode.CITY_NOT_FOUND
    assert error.suggested_action == "retry_with_pinyin"
    assert "did_you_mean" not in error.details


async def test_get_weather_latin_typo_suggests_the_latin_name():
    error = await failure_of(builtin("get_weather"), {"city": "Shanghia"})

    assert error.details["did_you_mean"] == "Shanghai"


async def test_get_weather_blank_city_is_invalid_args():
    error = await failure_of(builtin("get_weather"), {"city": "   "})

    assert error.code == ErrorCode.INVALID_ARGS


async def test_get_weather_latency_simulates_a_slow_provider():
    tool = builtin("get_weather", latency_s=5)

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run(tool, {"city": "上海"}), timeout=0.05)


async def test_get_weather_slow_calls_makes_only_the_first_calls_slow():
    """A provider that times out once and then answers: the fault `parley eval --suite seeds` switches on."""
    tool = builtin("get_weather", latency_s=5, slow_calls=1)

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run(tool, {"city": "上海"}), timeout=0.05)
    answered = await asyncio.wait_for(run(tool, {"city": "上海"}), timeout=5)
    assert answered["temp_c"] == 28


async def test_web_search_login_wall_answers_an_html_page_that_the_observation_refuses():
    page = await run(builtin("web_search", login_wall=True), {"query": "Zephyr Labs"})

    observed = normalise(page, GradingTable())
    assert not observed.ok and observed.error is not None and observed.error.code == ErrorCode.BAD_RESPONSE


def test_get_weather_unknown_option_is_config_error():
    with pytest.raises(ConfigError, match="unknown option 'latncy_s'; its options are: file, latency_s"):
        builtin("get_weather", latncy_s=1)


# --- all of them ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtin_spec_describes_every_argument(name: str):
    tool = builtin(name)

    assert tool.spec.name == name
    assert tool.spec.description
    assert 0 < tool.timeout_s <= 10
    for prop in tool.spec.parameters["properties"].values():
        assert prop.get("description")


@pytest.mark.parametrize("name", sorted(BUILTINS))
async def test_builtin_wrong_argument_type_is_invalid_args(name: str):
    tool = builtin(name)

    with pytest.raises(ToolError) as caught:
        tool.validate({"nonsense": [1, 2, 3]})

    assert caught.value.code == ErrorCode.INVALID_ARGS
