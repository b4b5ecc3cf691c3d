"""The one mapping from what the MCP SDK raises (and what a server answers with) to coded `ToolError`s.

The SDK reports transport faults through anyio task groups, so an exception may arrive wrapped in
`ExceptionGroup`s; the first leaf decides. A call that was sent and whose connection then stopped (a timeout,
a dropped stream, a killed stdio server) may have run: on a tool that is not safe to repeat it is
`OUTCOME_UNKNOWN`, never retried. Nothing here reads message text to grade.
"""

from __future__ import annotations

import anyio
import httpx2
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
)
from pydantic import ValidationError

from agent.errors import ErrorCode, ToolError, code_for_status
from agent.text import clip

_MESSAGE_CHARS = 300


def leaf(exc: BaseException) -> BaseException:
    """The first exception inside any nesting of exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def translate(exc: BaseException, *, server: str, safe_to_repeat: bool, http_status: int | None = None) -> ToolError:
    """A coded `ToolError` for a failed call. `http_status` is the last error status the server's HTTP endpoint
    answered (the SDK turns it into a generic JSON-RPC error, so it is recorded where responses arrive)."""
    exc = leaf(exc)
    sent_and_lost = _lost_in_flight(exc)
    if sent_and_lost is not None:
        if safe_to_repeat:
            return ToolError(sent_and_lost, f"{server}: {_lost_wording(sent_and_lost)}")
        return ToolError(
            ErrorCode.OUTCOME_UNKNOWN,
            f"{server}: {_lost_wording(sent_and_lost)}; the call may or may not have run, so it is not repeated",
            retryable=False,
        )
    error = _coded(exc, server=server, http_status=http_status)
    if not safe_to_repeat:
        error.retryable = False  # an acting tool is never called twice for one decision
    return error


def _lost_in_flight(exc: BaseException) -> ErrorCode | None:
    """TIMEOUT or CONNECTION_ERROR when the request may have reached the server and its answer was lost."""
    match exc:
        case TimeoutError() | httpx2.TimeoutException():
            return ErrorCode.TIMEOUT
        case MCPError() if exc.code == REQUEST_TIMEOUT:
            return ErrorCode.TIMEOUT
        case MCPError() if exc.code == CONNECTION_CLOSED:
            return ErrorCode.CONNECTION_ERROR
        case anyio.ClosedResourceError() | anyio.BrokenResourceError() | anyio.EndOfStream():
            return ErrorCode.CONNECTION_ERROR
        case httpx2.RemoteProtocolError() | httpx2.ReadError() | httpx2.WriteError():
            return ErrorCode.CONNECTION_ERROR
        case _:
            return None


def connection_lost(exc: BaseException) -> bool:
    """The connection itself stopped (not merely a slow answer): it must be made again."""
    return _lost_in_flight(exc) == ErrorCode.CONNECTION_ERROR


def _lost_wording(code: ErrorCode) -> str:
    return "no answer within the timeout" if code == ErrorCode.TIMEOUT else "the connection stopped during the call"


def _coded(exc: BaseException, *, server: str, http_status: int | None) -> ToolError:
    kind = type(exc).__name__
    match exc:
        case NotConnected():
            return ToolError(ErrorCode.CONNECTION_ERROR, f"{server}: {exc}")
        case MCPError() if exc.code == INVALID_PARAMS:
            return ToolError(ErrorCode.INVALID_ARGS, f"{server}: {clip(exc.message, _MESSAGE_CHARS)}")
        case MCPError() if exc.code == INTERNAL_ERROR and http_status is not None:
            code = code_for_status(http_status)
            return ToolError(code, f"{server} answered HTTP {http_status}", details={"http_status": http_status})
        case MCPError() if exc.code in (METHOD_NOT_FOUND, PARSE_ERROR, INVALID_REQUEST):
            return ToolError(ErrorCode.BAD_RESPONSE, f"{server} did not answer as an MCP server ({exc.code})")
        case MCPError():
            return ToolError(
                ErrorCode.TOOL_REPORTED_FAILURE, f"{server} reported error {exc.code}: {clip(exc.message, 200)}"
            )
        case ValidationError():
            return ToolError(ErrorCode.BAD_RESPONSE, f"{server} answered with something that is not an MCP result")
        case httpx2.HTTPStatusError():
            status = exc.response.status_code
            details = {"http_status": status}
            return ToolError(code_for_status(status), f"{server} answered HTTP {status}", details=details)
        case httpx2.ConnectError() | httpx2.NetworkError() | OSError():
            return ToolError(ErrorCode.CONNECTION_ERROR, f"could not talk to {server} ({kind})")
        case _:
            return ToolError(ErrorCode.TOOL_CRASHED, f"the MCP client failed talking to {server} ({kind})")


def describe(exc: BaseException, *, server: str, http_status: int | None = None) -> str:
    """One line for an operator: why a server could not be reached or listed."""
    return translate(exc, server=server, safe_to_repeat=True, http_status=http_status).message


class NotConnected(Exception):
    """The server is not connected now (down at start, or restarting); nothing was sent."""
