"""`agent.__all__` is the engine's whole public surface, and it is complete (httpx does the same)."""

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

import agent
import agent.grounding


def test_exported_members_all_is_complete():
    public = {name for name in dir(agent) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(agent, name)).__name__ == "module"}
    assert set(agent.__all__) == public - modules
    assert len(agent.__all__) == len(set(agent.__all__))


def test_exported_members_bot_uses_only_the_public_surface():
    offenders = []
    for path in Path(agent.__file__).resolve().parents[1].joinpath("bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent."):
                offenders.append(f"{path.name}: from {node.module}")
    assert offenders == []


@pytest.mark.parametrize("package", [agent, agent.grounding], ids=lambda package: package.__name__)
def test_exported_members_load_from_the_modules_the_type_checker_reads(package: ModuleType):
    """A package's face is loaded when first used, from `_MODULES`; its imports for the type checker say the same."""
    tree = ast.parse(Path(package.__file__ or "").read_text(encoding="utf-8"))
    [checked] = [
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "_typing.TYPE_CHECKING"
    ]
    imported = {
        node.module: tuple(alias.name for alias in node.names)
        for node in checked.body
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported == package._MODULES
    assert sorted(name for names in imported.values() for name in names) == sorted(package.__all__)
    for module, names in package._MODULES.items():
        for name in names:
            assert getattr(package, name) is getattr(importlib.import_module(module), name)
