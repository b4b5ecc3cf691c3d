"""A package's import graph, unit by unit: each unit is a subpackage (`bot.slack`, `agent.grounding`) or a
top-level module (`bot.runs`, `agent.loop`). An arrow A → B means a module of A imports a module of B, at run time
or for type checking alike: a cycle there is a cycle in the design, whether Python happens to tolerate it or not.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path


def unit_of(module: str, root: str) -> str | None:
    """`bot.slack.review.desk` → `bot.slack`; `bot.runs` → `bot.runs`; anything outside `root` → None."""
    parts = module.split(".")
    if parts[0] != root or len(parts) < 2:
        return None
    return ".".join(parts[:2])


def module_name(path: Path, package_dir: Path) -> str:
    relative = path.relative_to(package_dir.parent).with_suffix("")
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


def unit_graph(package_dir: Path) -> dict[str, set[str]]:
    root = package_dir.name
    graph: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        source = unit_of(module_name(path, package_dir), root)
        if source is None:
            continue
        targets = graph.setdefault(source, set())
        for module in imported_modules(path):
            target = unit_of(module, root)
            if target is not None and target != source and _exists(package_dir, target):
                targets.add(target)
    return graph


def _exists(package_dir: Path, unit: str) -> bool:
    name = unit.split(".")[1]
    return (package_dir / name).is_dir() or (package_dir / f"{name}.py").is_file()


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
