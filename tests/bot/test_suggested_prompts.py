"""Suggested prompts drawn from the tools: a plain question per tool that gives an example, never one made up."""

from __future__ import annotations

from agent import ToolSpec
from bot.suggested_prompts import AssistantConfig, SuggestedPrompt, drawn_from_tools, prompt_set


def spec(name: str, description: str, properties: dict, required: list[str] | None = None) -> ToolSpec:
    parameters = {"type": "object", "properties": properties, "required": required or list(properties)}
    return ToolSpec(name, description, parameters)


def test_a_teams_http_tool_gets_a_prompt_from_its_schema_example():
    tool = spec(
        "get_order",
        "Status of one customer order. Returns its state and ETA.",
        {"order_id": {"type": "string", "examples": ["A-1042"]}},
    )

    assert drawn_from_tools([tool]) == (
        SuggestedPrompt(title="Status of one customer order", message="Status of one customer order: A-1042"),
    )


def test_an_example_in_the_argument_description_is_used_and_identifiers_read_as_words():
    tool = spec(
        "knowledge_lookup",
        "Look up one fact.",
        {"key": {"type": "string", "description": "The fact's key, e.g. `cost_per_satellite_musd` or `ceo`."}},
    )

    [prompt] = drawn_from_tools([tool])

    assert prompt.message == "Look up cost per satellite musd in the knowledge base."


def test_a_tool_without_an_example_gets_no_prompt():
    tool = spec("web_search", "Search the web.", {"query": {"type": "string", "description": "What to search."}})

    assert drawn_from_tools([tool]) == ()
    assert drawn_from_tools([ToolSpec("ping", "Ping.", {"type": "object"})]) == ()


def test_at_most_four_prompts_and_configured_ones_win():
    tools = [spec(f"tool_{n}", f"Tool {n}.", {"x": {"type": "string", "enum": [f"v{n}"]}}) for n in range(6)]
    mine = (SuggestedPrompt(title="Mine", message="My question?"),)

    assert len(prompt_set(AssistantConfig(), tools).prompts) == 4
    assert prompt_set(AssistantConfig(prompts=mine), tools).prompts == mine
    assert prompt_set(AssistantConfig(prompts=()), tools).prompts == ()
