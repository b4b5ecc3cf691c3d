"""bot/'s import graph: its packages and top-level modules form no cycle, and the store imports nothing above it.

Each unit is a subpackage of bot/ (`bot.slack`, `bot.store`, …) or a top-level module (`bot.runs`,
`bot.assembly`, …); the graph is `tests/import_graph.py`'s.
"""

from __future__ import annotations

from pathlib import Path

import bot
from tests.import_graph import find_cycle
from tests.import_graph import unit_graph as package_graph

BOT_DIR = Path(bot.__file__).parent
# The store is the bottom of bot/: everything may use it, it uses nothing of bot/ but itself.
STORE = "bot.store"


def unit_graph() -> dict[str, set[str]]:
    return package_graph(BOT_DIR)


def test_find_cycle_finds_a_cycle_and_accepts_a_layered_graph():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_unit_graph_sees_real_arrows():
    graph = unit_graph()
    assert {"bot.slack", "bot.store", "bot.runs", "bot.assembly", "bot.cli"} <= set(graph)
    assert "bot.runs" in graph["bot.slack"]  # the Slack adapters act through the run service
    assert "bot.store" in graph["bot.runs"]


def test_the_packages_of_bot_form_no_cycle():
    cycle = find_cycle(unit_graph())
    assert cycle is None, "bot/ imports in a circle: " + " → ".join(cycle or [])


def test_the_store_imports_nothing_of_bot_above_it():
    assert unit_graph()[STORE] == set()
