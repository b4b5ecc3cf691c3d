"""Pins: the definition of each MCP tool as Parley first saw it, so a changed definition is noticed.

A server may change a tool's description or schema after it was trusted (the "rug pull" of the OWASP MCP Top
10): the new text goes to the model as if it were the one people approved. The first sighting of a tool is
pinned (a hash of its name, description and input schema); a later listing whose hash differs is not offered,
and a call to it is refused, until an operator trusts it again (`parley mcp trust SERVER [TOOL]`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcp.types import Tool


def definition_digest(tool: Tool) -> str:
    """sha256 of the tool's name, description and input schema, as canonical JSON."""
    canonical = json.dumps(
        {"name": tool.name, "description": tool.description or "", "inputSchema": tool.input_schema},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class PinStore(Protocol):
    """Where pins are kept (the database for `parley serve` and `parley ask`; memory in tests)."""

    async def pinned(self, server: str) -> Mapping[str, str]:
        """Tool name (the server's own) → pinned digest."""
        ...

    async def pin_new(self, server: str, digests: Mapping[str, str]) -> None:
        """Pin the tools that have no pin yet; an existing pin is never overwritten here."""
        ...

    async def trust(self, server: str, digests: Mapping[str, str]) -> None:
        """An operator trusts these definitions: their pins become these digests."""
        ...


class MemoryPins:
    """Pins kept for the life of the process."""

    def __init__(self) -> None:
        self._pins: dict[str, dict[str, str]] = {}

    async def pinned(self, server: str) -> Mapping[str, str]:
        return dict(self._pins.get(server, {}))

    async def pin_new(self, server: str, digests: Mapping[str, str]) -> None:
        pins = self._pins.setdefault(server, {})
        for tool, digest in digests.items():
            pins.setdefault(tool, digest)

    async def trust(self, server: str, digests: Mapping[str, str]) -> None:
        self._pins.setdefault(server, {}).update(digests)
