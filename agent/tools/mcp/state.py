"""ServerState: where an MCP server's connection stands, as operators are shown it.

Apart from the connection itself (`connection.py`), so that naming a state — `parley tools`, `/healthz`, a
configuration without MCP servers — does not load the MCP SDK.
"""

from __future__ import annotations

from enum import StrEnum

DEFAULT_REFRESH_S = 60.0  # how often a connected server's tools are listed again (drift is noticed then)


class ServerState(StrEnum):
    CONNECTING = "connecting"
    UP = "up"
    DOWN = "down"  # the last attempt failed; another follows after a backoff
    STOPPED = "stopped"
