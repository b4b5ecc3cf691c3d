"""`agent.__all__` is the engine's whole public surface, and it is complete (httpx does the same)."""

import agent


def test_exported_members_all_is_complete():
    public = {name for name in dir(agent) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(agent, name)).__name__ == "module"}
    assert set(agent.__all__) == public - modules
    assert len(agent.__all__) == len(set(agent.__all__))


def test_exported_members_bot_uses_only_the_public_surface():
    import ast
    from pathlib import Path

    offenders = []
    for path in Path(agent.__file__).resolve().parents[1].joinpath("bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent."):
                offenders.append(f"{path.name}: from {node.module}")
    assert offenders == []
