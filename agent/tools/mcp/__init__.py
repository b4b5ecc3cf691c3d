"""MCP tool servers: a team's existing tools, offered to the model with their own schemas (issue 20).

`McpServers` connects the configured servers (Streamable HTTP, or stdio children Parley starts and stops) and
is a set of `ToolSource`s for the run's `Toolbox`; `PinStore` keeps each tool's definition as first seen. The
MCP SDK is loaded when a server is configured (`McpServer`), not by importing this package.
"""

from agent.tools.mcp.pins import MemoryPins, PinStore, definition_digest
from agent.tools.mcp.servers import McpServer, McpServers, McpServerStatus, McpToolStatus, mcp_status
from agent.tools.mcp.state import ServerState

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
