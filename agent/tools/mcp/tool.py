"""McpTool: one tool of an MCP server, offered to the model with the server's own description and schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.types import Tool as McpDefinition

from agent.errors import ToolError
from agent.tools.arguments import ArgumentSchema
from agent.tools.base import ToolSpec
from agent.tools.mcp.connection import McpConnection
from agent.tools.mcp.failures import translate
from agent.tools.mcp.result import result_data

Redact = Callable[[Any], Any]


class McpTool:
    """Calls `definition.name` on its server. `safe_to_repeat`: read-only or declared idempotent, so a timeout or
    a dropped connection is retried; on any other tool the outcome is unknown and the call is never repeated."""

    def __init__(
        self,
        connection: McpConnection,
        definition: McpDefinition,
        *,
        offered_as: str,
        schema: ArgumentSchema,
        safe_to_repeat: bool,
        redact: Redact,
    ) -> None:
        self._connection = connection
        self.definition = definition
        self._schema = schema
        self.safe_to_repeat = safe_to_repeat
        self._redact = redact
        description = definition.description or definition.title or definition.name
        self._spec = ToolSpec(offered_as, description, dict(definition.input_schema))

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def timeout_s(self) -> float:
        # The executor's outer bound: waiting for a reconnection, then the call, each within the server's
        # timeout; the call's own timeout is graded here (it may be OUTCOME_UNKNOWN, not TIMEOUT).
        return 2 * self._connection.spec.timeout_s + 1

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self._schema.check(arguments)

    async def call(self, arguments: dict[str, Any]) -> Any:
        server = self._connection.name
        try:
            result = await self._connection.call(
                self.definition.name, arguments, timeout_s=self._connection.spec.timeout_s
            )
            data = result_data(result, server=server)
        except ToolError as reported:
            raise self._scrubbed(reported) from None
        except Exception as exc:
            translated = translate(
                exc,
                server=server,
                safe_to_repeat=self.safe_to_repeat,
                http_status=self._connection.last_http_error,
            )
            raise self._scrubbed(translated) from None
        return self._redact(data)

    def _scrubbed(self, error: ToolError) -> ToolError:
        """A server may echo our headers: no configured secret reaches the model, the trace or the log."""
        return error.redacted(self._redact)
