"""McpServers: the configured MCP servers, their tools as the model sees them, and each server's state.

Each server is a `ToolSource` for the run's `Toolbox`: what it offers changes when it connects, reconnects or
re-lists. A listing is filtered (`allow` / `block`), checked against the pins (a changed definition is withdrawn
and refused by name), prefixed (`crm_lookup_order`) and checked for names another source already offers.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.config import McpServerEntry, McpSpec, ToolEntry
from agent.errors import ConfigError, ErrorCode, ToolError
from agent.tools.arguments import ArgumentSchema, InvalidSchema
from agent.tools.base import Tool
from agent.tools.http import redact, resolve_headers, substitute_env
from agent.tools.mcp.pins import PinStore, definition_digest
from agent.tools.mcp.state import DEFAULT_REFRESH_S, ServerState
from agent.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from mcp.types import Tool as McpDefinition

    from agent.tools.mcp.tool import McpTool

log = logging.getLogger(__name__)

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what every LLM API accepts as a function name


@dataclass(frozen=True)
class McpToolStatus:
    """One tool a server lists, as `parley tools` shows it."""

    name: str  # as offered to the model
    server_tool: str  # the server's own name
    offered: bool
    held: bool  # destructive: waits for a person unless a policy says otherwise
    changed: bool  # its definition differs from its pin
    why_not: str | None = None  # filtered, a name conflict, an unusable schema


@dataclass(frozen=True)
class McpServerStatus:
    """A server's state for operators (`/healthz`, `parley tools`, the App Home)."""

    server: str
    transport: str  # "http" or "stdio"
    state: ServerState
    problem: str | None
    tools: tuple[McpToolStatus, ...]

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(tool.server_tool for tool in self.tools if tool.changed)


class McpServer:
    """One configured server as a `ToolSource`."""

    def __init__(
        self, spec: McpSpec, *, env: Mapping[str, str], pins: PinStore, names: _Names, refresh_s: float
    ) -> None:
        self.spec = spec
        where = f"mcp server {spec.server!r}"
        headers, secrets = resolve_headers(spec.headers, env, where=where)
        child_env: dict[str, str] = {}
        for key, template in spec.env.items():
            child_env[key], used = substitute_env(template, env, where=f"{where}: env {key}")
            secrets.extend(used)
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))
        self._pins = pins
        self._names = names
        # The SDK (~0.5 s to import) is loaded here, for a configured server, not by every process that imports
        # the engine: the command line without MCP servers starts without it.
        from agent.tools.mcp.connection import McpConnection

        self.connection = McpConnection(
            spec, headers=headers, env=child_env, on_listing=self._take_listing, refresh_s=refresh_s
        )
        self._offered: dict[str, McpTool] = {}
        self._changed: dict[str, str] = {}  # offered name → why it is refused
        self._statuses: tuple[McpToolStatus, ...] = ()
        self.digests: dict[str, str] = {}  # the server's own tool name → digest of its current definition
        self.conflicts: list[str] = []

    @property
    def name(self) -> str:
        return self.spec.server

    def tools(self) -> Sequence[Tool]:
        # A server that was up once keeps its tools offered while it reconnects: a call waits for it (within
        # its timeout) rather than finding the tool gone. One never reached offers nothing.
        return list(self._offered.values())

    def refusal(self, name: str) -> ToolError | None:
        why = self._changed.get(name)
        return None if why is None else ToolError(ErrorCode.TOOL_CHANGED, why, retryable=False)

    def hold_reason(self, name: str) -> str | None:
        tool = self._offered.get(name)
        if tool is None or not _destructive(tool.definition):
            return None
        return f"{name} is marked destructive by the MCP server {self.name}; a person must approve each call"

    def status(self) -> McpServerStatus:
        return McpServerStatus(
            server=self.name,
            transport="http" if self.spec.url is not None else "stdio",
            state=self.connection.state,
            problem=self.connection.problem,
            tools=self._statuses,
        )

    async def _take_listing(self, definitions: list[McpDefinition]) -> None:
        pinned = await self._pins.pinned(self.name)
        digests = {d.name: definition_digest(d) for d in definitions}
        await self._pins.pin_new(self.name, {n: d for n, d in digests.items() if n not in pinned})
        offered: dict[str, McpTool] = {}
        changed: dict[str, str] = {}
        statuses: list[McpToolStatus] = []
        for definition in definitions:
            name = f"{self.spec.name}_{definition.name}" if self.spec.name else definition.name
            why_not = self._filtered(definition.name)
            if why_not is not None:
                statuses.append(McpToolStatus(name, definition.name, False, False, False, why_not))
                continue
            if definition.name in pinned and pinned[definition.name] != digests[definition.name]:
                changed[name] = (
                    f"the definition of {definition.name} on the MCP server {self.name} changed since it was "
                    f"trusted; it is not called until an operator runs `parley mcp trust {self.name} "
                    f"{definition.name}`"
                )
                statuses.append(McpToolStatus(name, definition.name, False, False, True, "changed since pinned"))
                continue
            tool, why_not = self._tool(definition, name)
            if tool is None:
                statuses.append(McpToolStatus(name, definition.name, False, False, False, why_not))
                continue
            offered[name] = tool
            statuses.append(McpToolStatus(name, definition.name, True, _destructive(definition), False))
        for name in changed:
            log.warning("MCP server %s: %s", self.name, changed[name])
        self._offered, self._changed, self._statuses = offered, changed, tuple(statuses)
        self.digests = digests

    def _filtered(self, tool: str) -> str | None:
        if self.spec.allow is not None and tool not in self.spec.allow:
            return "not in allow"
        if tool in self.spec.block:
            return "in block"
        return None

    def _tool(self, definition: McpDefinition, name: str) -> tuple[McpTool | None, str | None]:
        if not _TOOL_NAME.match(name):
            log.warning("MCP server %s: tool %r is not offered: its name is not a valid tool name", self.name, name)
            return None, "not a valid tool name"
        conflict = self._names.claim(name, f"the MCP server {self.name}")
        if conflict is not None:
            self.conflicts.append(conflict)
            log.error("MCP server %s: %s", self.name, conflict)
            return None, conflict
        try:
            schema = ArgumentSchema(definition.input_schema)
        except InvalidSchema as exc:
            log.warning("MCP server %s: tool %r is not offered: its input schema is invalid: %s", self.name, name, exc)
            return None, "invalid input schema"
        from agent.tools.mcp.tool import McpTool  # with the connection's SDK, loaded by now

        annotations = definition.annotations
        declared = self.spec.idempotent
        safe = bool(annotations and annotations.read_only_hint) or (
            declared is True or (isinstance(declared, list) and definition.name in declared)
        )
        tool = McpTool(
            self.connection,
            definition,
            offered_as=name,
            schema=schema,
            safe_to_repeat=safe,
            redact=self._redact,
        )
        return tool, None

    def _redact(self, value: Any) -> Any:
        return redact(value, self._secrets)


class _Names:
    """Which source offers each tool name: two tools never share one."""

    def __init__(self, fixed: Collection[str]) -> None:
        self._owner = {name: "the tools: list" for name in fixed}

    def claim(self, name: str, source: str) -> str | None:
        owner = self._owner.setdefault(name, source)
        if owner == source:
            return None
        return f"two tools are named {name!r}: one from {owner}, one from {source}"


class McpServers:
    """Every `- mcp:` entry of the configuration; `start()` connects them, `stop()` closes them (no orphan)."""

    def __init__(
        self,
        specs: Sequence[McpSpec],
        *,
        env: Mapping[str, str],
        pins: PinStore,
        fixed_names: Collection[str] = (),
        refresh_s: float = DEFAULT_REFRESH_S,
    ) -> None:
        names = _Names(fixed_names)
        self.servers = [McpServer(spec, env=env, pins=pins, names=names, refresh_s=refresh_s) for spec in specs]
        seen: dict[str, int] = {}
        for index, server in enumerate(self.servers):
            if server.name in seen:
                raise ConfigError(f"two mcp servers are named {server.name!r}; give one of them another name")
            seen[server.name] = index

    @classmethod
    def from_config(
        cls, entries: Sequence[ToolEntry], *, env: Mapping[str, str], pins: PinStore, fixed_names: Collection[str]
    ) -> McpServers:
        specs = [entry.mcp for entry in entries if isinstance(entry, McpServerEntry)]
        return cls(specs, env=env, pins=pins, fixed_names=fixed_names)

    async def start(self) -> None:
        """Connect every server (each within its timeout). A server that is down is reported and retried in
        the background; two tools with one name are a ConfigError."""
        await asyncio.gather(*(server.connection.start(wait_s=server.spec.timeout_s) for server in self.servers))
        conflicts = [conflict for server in self.servers for conflict in server.conflicts]
        if conflicts:
            await self.stop()
            raise ConfigError("; ".join(conflicts))

    async def stop(self) -> None:
        await asyncio.gather(*(server.connection.stop() for server in self.servers))

    async def __aenter__(self) -> McpServers:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def status(self) -> list[McpServerStatus]:
        return [server.status() for server in self.servers]

    def named(self, server: str) -> McpServer | None:
        return next((candidate for candidate in self.servers if candidate.name == server), None)

    def down(self) -> list[McpServerStatus]:
        """The servers that are not connected now, with why."""
        return [status for status in self.status() if status.state != ServerState.UP]


def _destructive(definition: McpDefinition) -> bool:
    annotations = definition.annotations
    return bool(annotations and annotations.destructive_hint is True and not annotations.read_only_hint)


def mcp_status(toolbox: Toolbox) -> list[McpServerStatus]:
    """The state of every MCP server among a toolbox's sources."""
    return [source.status() for source in toolbox.sources if isinstance(source, McpServer)]
