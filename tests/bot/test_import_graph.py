"""bot/'s shape, kept by its imports: no cycle among its packages; the store at the bottom, the one place for SQL
and ORM rows; Slack's SDKs only in the Slack package (and the web app that mounts bolt's adapter); Slack's
modules speaking to the store only through the application core; and no ORM row ever leaving the store.

Each unit is a subpackage of bot/ (`bot.slack`, `bot.store`, …) or a top-level module (`bot.assembly`, …); the
graph is `tests/import_graph.py`'s, which counts imports for type checking too.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest

import bot
import bot.store
from bot.store.models import Base, Run
from bot.store.runs import load_run
from tests.import_graph import find_cycle, imported_modules, module_name
from tests.import_graph import unit_graph as package_graph

BOT_DIR = Path(bot.__file__).parent
STORE_DIR = BOT_DIR / "store"
SLACK_DIR = BOT_DIR / "slack"
# The store is the bottom of bot/: everything may use it, it uses nothing of bot/ but itself.
STORE = "bot.store"
SLACK_SDKS = ("slack_sdk", "slack_bolt", "aiohttp")
WEB_APP = BOT_DIR / "web.py"  # mounts bolt's Starlette adapter at /slack/events
ORM_MODULE = Base.__module__  # bot.store.models: the mapped classes


def unit_graph() -> dict[str, set[str]]:
    return package_graph(BOT_DIR)


def modules(directory: Path) -> dict[str, set[str]]:
    """Each module under `directory` and what it imports."""
    return {module_name(path, BOT_DIR): imported_modules(path) for path in sorted(directory.rglob("*.py"))}


def outside(*directories: Path) -> dict[str, set[str]]:
    """Each module of bot/ outside `directories` and what it imports."""
    return {
        module_name(path, BOT_DIR): imported_modules(path)
        for path in sorted(BOT_DIR.rglob("*.py"))
        if not any(directory in path.parents for directory in directories)
    }


def test_find_cycle_finds_a_cycle_and_accepts_a_layered_graph():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_unit_graph_sees_real_arrows():
    graph = unit_graph()
    assert {"bot.slack", "bot.store", "bot.core", "bot.assembly", "bot.cli", "bot.web"} <= set(graph)
    assert "bot.core" in graph["bot.slack"]  # the Slack front end acts through the application core
    assert "bot.store" in graph["bot.core"]


def test_the_packages_of_bot_form_no_cycle():
    cycle = find_cycle(unit_graph())
    assert cycle is None, "bot/ imports in a circle: " + " → ".join(cycle or [])


def test_the_store_imports_nothing_of_bot_above_it():
    assert unit_graph()[STORE] == set()


def test_sql_and_orm_rows_stay_in_the_store():
    leaks = {
        module: sorted(i for i in imported if i.split(".")[0] == "sqlalchemy" or i.startswith("bot.store.models"))
        for module, imported in outside(STORE_DIR).items()
    }
    assert {module: found for module, found in leaks.items() if found} == {}


def test_slack_modules_reach_the_store_only_through_the_core():
    leaks = {
        module: sorted(i for i in imported if i == STORE or i.startswith(STORE + "."))
        for module, imported in modules(SLACK_DIR).items()
    }
    assert {module: found for module, found in leaks.items() if found} == {}


def test_slacks_sdks_are_imported_only_by_the_slack_package_and_the_web_app():
    importers = {
        module
        for module, imported in outside(SLACK_DIR).items()
        if any(i.split(".")[0] in SLACK_SDKS for i in imported)
    }
    assert importers <= {module_name(WEB_APP, BOT_DIR)}


def test_bot_never_imports_the_mcp_sdk():
    """MCP servers are the engine's tools: bot/ reaches them through `agent` (McpServers, their status)."""
    importers = {name for name, imported in modules(BOT_DIR).items() if any(i.split(".")[0] == "mcp" for i in imported)}
    assert importers == set()


def _public_callables() -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for path in sorted(STORE_DIR.rglob("*.py")):
        name = module_name(path, BOT_DIR)
        if name in ("bot.store.models", "bot.store.rows"):  # the rows themselves, and where they are read
            continue
        module = __import__(name, fromlist=["*"])
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or getattr(value, "__module__", None) != name:
                continue
            if inspect.isfunction(value):
                found.append((f"{name}.{attribute}", value))
            elif inspect.isclass(value):
                found.extend(
                    (f"{name}.{attribute}.{method}", function)
                    for method, function in vars(value).items()
                    if inspect.isfunction(function) and not method.startswith("_")
                )
    return found


def orm_named(function: object) -> list[str]:
    """The ORM classes a function's annotations name (what it takes or returns)."""
    return sorted(str(hint) for hint in typing.get_type_hints(function).values() if f"{ORM_MODULE}." in str(hint))


def test_orm_named_sees_a_row_in_an_annotation() -> None:
    def leaky(run_id: str) -> Run | None: ...

    assert orm_named(leaky) == [str(Run | None)]
    assert orm_named(load_run) == []


STORE_CALLABLES = _public_callables()


@pytest.mark.parametrize(("where", "function"), STORE_CALLABLES, ids=[where for where, _ in STORE_CALLABLES])
def test_no_orm_row_leaves_the_store(where: str, function: object) -> None:
    """What a store function returns (and takes) names records, never an ORM class."""
    assert orm_named(function) == [], f"{where} names ORM rows"


EVAL_DIR = BOT_DIR / "eval"


def test_eval_is_below_the_command_line_and_beside_slack():
    """`parley eval`'s package runs cases through the core and the assembly: the command line imports it, it
    imports no front end (neither the command line nor Slack), and reaches the store only by its face."""
    graph = unit_graph()
    assert "bot.eval" in graph["bot.cli"]
    assert not graph["bot.eval"] & {"bot.cli", "bot.slack", "bot.web", "bot.jobs"}
    store_modules = {module_name(path, BOT_DIR) for path in STORE_DIR.rglob("*.py")} - {STORE}
    leaks = {
        module: sorted(i for i in imported if any(i == m or i.startswith(m + ".") for m in store_modules))
        for module, imported in modules(EVAL_DIR).items()
    }
    assert {module: found for module, found in leaks.items() if found} == {}
