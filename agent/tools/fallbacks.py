"""Fallbacks: the tools the model is pointed to when a tool's path is down (an L2 or L3 failure).

Only what a team declared — the failed tool's `fallbacks:` — and never a tool that acts (`acting: true`: it
sends, books, pays, files a ticket) or one a policy holds some or all calls of. Trying those because a
lookup failed would do something nobody asked for, so they are neither suggested at run time nor accepted
as a fallback in the configuration.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from agent.config import McpServerEntry, ToolEntry, single_tools
from agent.errors import ConfigError
from agent.policy import ToolPolicy


class Fallbacks:
    """Each tool's declared fallbacks, and the tools that are never suggested whatever was declared."""

    def __init__(
        self, declared: Mapping[str, Sequence[str]] | None = None, *, never: Collection[str] = frozenset()
    ) -> None:
        self._declared = {name: tuple(names) for name, names in (declared or {}).items()}
        self._never = frozenset(never)

    @classmethod
    def from_config(cls, entries: Sequence[ToolEntry], policies: Sequence[ToolPolicy]) -> Fallbacks:
        declared = {entry.tool_name: entry.fallbacks for entry in single_tools(entries) if entry.fallbacks}
        return cls(declared, never=_never_suggested(entries, policies))

    def offered(self, tool: str, *, available: Collection[str]) -> tuple[str, ...]:
        """What to suggest when `tool` failed: its declared fallbacks that this run can still call
        (`available`: known and not disabled), minus acting and held tools; often nothing."""
        return tuple(
            name
            for name in self._declared.get(tool, ())
            if name != tool and name in available and name not in self._never
        )


def _never_suggested(entries: Sequence[ToolEntry], policies: Sequence[ToolPolicy]) -> dict[str, str]:
    """Tool name → why it is never a fallback: it acts, or a policy holds some or all of its calls."""
    why = {policy.tool: f"a policy holds {policy.tool} calls for a person's approval" for policy in policies}
    acting = [entry.tool_name for entry in single_tools(entries) if entry.acting]
    why.update({name: f"{name} is acting (acting: true)" for name in acting})
    return why


def refuse_unsafe_fallbacks(entries: Sequence[ToolEntry], policies: Sequence[ToolPolicy]) -> None:
    """ConfigError (naming the entry and both tools) when a `fallbacks:` list names an acting or held tool."""
    never = _never_suggested(entries, policies)
    for index, entry in enumerate(entries):
        if isinstance(entry, McpServerEntry):
            continue  # an MCP server's tools declare no fallbacks
        for name in entry.fallbacks:
            if name in never:
                raise ConfigError(
                    f"tools[{index}]: {entry.tool_name} cannot fall back to {name}: {never[name]}, "
                    "and a fallback must be a tool the model may try on its own"
                )
