"""Toolbox: every tool a run may call, behind one face, whether it is fixed at start or comes and goes.

Built-ins and HTTP tools are fixed when the configuration is read. A `ToolSource` (an MCP server's tools) may
change while Parley runs: a server that was down at start comes up, a changed definition is withdrawn. The
engine asks the toolbox at each step and never knows where a tool came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agent.errors import ToolError
from agent.tools.base import Tool


@runtime_checkable
class ToolSource(Protocol):
    """A set of tools that may change while Parley runs."""

    def tools(self) -> Sequence[Tool]:
        """The tools offered now, in order."""
        ...

    def refusal(self, name: str) -> ToolError | None:
        """Why a call to `name`, which is not offered, is refused (None: this source does not know it)."""
        ...

    def hold_reason(self, name: str) -> str | None:
        """Why a call to `name` waits for a person when no `policies:` entry names it (None: it does not)."""
        ...


class Toolbox:
    """Fixed tools first, then each source's tools of the moment; a source's tool never shadows a fixed one."""

    def __init__(self, tools: Sequence[Tool] = (), sources: Sequence[ToolSource] = ()) -> None:
        self._fixed = {tool.spec.name: tool for tool in tools}
        self._sources = tuple(sources)

    @property
    def sources(self) -> tuple[ToolSource, ...]:
        return self._sources

    def _current(self) -> dict[str, Tool]:
        current = dict(self._fixed)
        for source in self._sources:
            for tool in source.tools():
                current.setdefault(tool.spec.name, tool)
        return current

    @property
    def names(self) -> list[str]:
        return list(self._current())

    def get(self, name: str) -> Tool | None:
        return self._fixed.get(name) or self._current().get(name)

    def refusal(self, name: str) -> ToolError | None:
        return next((refused for source in self._sources if (refused := source.refusal(name))), None)

    def hold_reason(self, name: str) -> str | None:
        return next((reason for source in self._sources if (reason := source.hold_reason(name))), None)
