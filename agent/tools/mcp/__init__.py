"""MCP tool servers: a team's existing tools, offered to the model with their own schemas (issue 20).

`McpServers` connects the configured servers (Streamable HTTP, or stdio children Parley starts and stops) and
is a set of `ToolSource`s for the run's `Toolbox`; `PinStore` keeps each tool's definition as first seen.
"""

from agent.tools.mcp.connection import ServerState
from agent.tools.mcp.pins import MemoryPins, PinStore, definition_digest
from agent.tools.mcp.servers import McpServer, McpServers, McpServerStatus, McpToolStatus, mcp_status

__all__ = [
    "McpServer",
    "McpServerStatus",
    "McpServers",
    "McpToolStatus",
    "MemoryPins",
    "PinStore",
    "ServerState",
    "definition_digest",
    "mcp_status",
]
