"""bot/'s import graph: its packages and top-level modules form no cycle, and the store imports nothing above it.

Each unit is a subpackage of bot/ (`bot.slack`, `bot.store`, …) or a top-level module (`bot.runs`,
`bot.assembly`, …). An arrow A → B means a module of A imports a module of B, at run time or for type
checking alike: a cycle there is a cycle in the design, whether Python happens to tolerate it or not.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import bot

BOT_DIR = Path(bot.__file__).parent
# The store is the bottom of bot/: everything may use it, it uses nothing of bot/ but itself.
STORE = "bot.store"


def unit_of(module: str) -> str | None:
    """`bot.slack.review` → `bot.slack`; `bot.runs` → `bot.runs`; anything outside bot/ → None."""
    parts = module.split(".")
    if parts[0] != "bot" or len(parts) < 2:
        return None
    return ".".join(parts[:2])


def module_name(path: Path) -> str:
    relative = path.relative_to(BOT_DIR.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Every absolute module a file imports (`from bot.x import y` counts as bot.x and bot.x.y)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def unit_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(BOT_DIR.rglob("*.py")):
        source = unit_of(module_name(path))
        if source is None:
            continue
        targets = graph.setdefault(source, set())
        for module in imported_modules(path):
            target = unit_of(module)
            if target is not None and target != source and _exists(target):
                targets.add(target)
    return graph


def _exists(unit: str) -> bool:
    name = unit.split(".")[1]
    return (BOT_DIR / name).is_dir() or (BOT_DIR / f"{name}.py").is_file()


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None (depth-first, three colours)."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle is not None:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle is not None:
                return cycle
    return None


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
