"""The tool set of a run, built from the config's `tools:` list (built-ins and HTTP tools alike)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from agent.config import BuiltinToolEntry, HttpToolEntry, McpServerEntry, ToolEntry
from agent.errors import ConfigError
from agent.policy import ToolPolicy
from agent.tools.base import Tool, ToolSpec
from agent.tools.builtin import BUILTINS
from agent.tools.fallbacks import refuse_unsafe_fallbacks
from agent.tools.http import HttpTool


def build_tools(
    entries: Sequence[ToolEntry],
    *,
    env: Mapping[str, str],
    http: httpx.AsyncClient,
    data_dir: Path,
    policies: Sequence[ToolPolicy] = (),
) -> list[Tool]:
    """One `Tool` per entry, in order. ConfigError (naming the entry) for an unknown built-in, a missing
    `${VAR}`, an unreadable data file, a duplicate tool name, a fallback that names no tool, or a fallback
    that acts or that one of `policies` holds (the run's `policies:`)."""
    tools: list[Tool] = []
    defined_at: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, McpServerEntry):
            continue  # its tools are listed when Parley connects (agent.tools.mcp.McpServers)
        try:
            tool = _build(entry, env=env, http=http, data_dir=data_dir)
        except ConfigError as exc:
            raise ConfigError(f"tools[{index}]: {exc}") from None
        name = tool.spec.name
        if name in defined_at:
            raise ConfigError(
                f"tools[{index}]: a tool named {name!r} is already defined by tools[{defined_at[name]}]; "
                "tool names must be unique"
            )
        defined_at[name] = index
        tools.append(tool)
    for index, entry in enumerate(entries):
        if isinstance(entry, McpServerEntry):
            continue
        unknown = [name for name in entry.fallbacks if name not in defined_at]
        if unknown:
            raise ConfigError(f"tools[{index}]: fallbacks name {', '.join(map(repr, unknown))}, which is not a tool")
    refuse_unsafe_fallbacks(entries, policies)
    return tools


def _build(
    entry: BuiltinToolEntry | HttpToolEntry, *, env: Mapping[str, str], http: httpx.AsyncClient, data_dir: Path
) -> Tool:
    if isinstance(entry, HttpToolEntry):
        return HttpTool(entry, http, env)
    assert isinstance(entry, BuiltinToolEntry)
    factory = BUILTINS.get(entry.builtin)
    if factory is None:
        known = ", ".join(sorted(BUILTINS))
        raise ConfigError(f"unknown builtin {entry.builtin!r}; the built-ins are: {known}")
    tool = factory(entry.options, data_dir)
    return tool if entry.timeout_s is None else _Retimed(tool, entry.timeout_s)


class _Retimed:
    """A tool with the timeout its config entry asks for (wrapping, so every built-in gets it for free)."""

    def __init__(self, tool: Tool, timeout_s: float) -> None:
        self._tool = tool
        self._timeout_s = timeout_s

    @property
    def spec(self) -> ToolSpec:
        return self._tool.spec

    @property
    def timeout_s(self) -> float:
        return self._timeout_s

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self._tool.validate(arguments)

    async def call(self, arguments: dict[str, Any]) -> Any:
        return await self._tool.call(arguments)
