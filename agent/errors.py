"""Error codes: the closed vocabulary every failure is graded by (never by message text)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Well-known failure codes. Tools and HTTP back-ends may report others; those grade by the table."""

    TIMEOUT = "TIMEOUT"
    RATE_LIMIT = "RATE_LIMIT"
    CONNECTION_ERROR = "CONNECTION_ERROR"
    INVALID_ARGS = "INVALID_ARGS"
    NOT_FOUND = "NOT_FOUND"
    CITY_NOT_FOUND = "CITY_NOT_FOUND"
    MATH_ERROR = "MATH_ERROR"
    INVALID_RESPONSE = "INVALID_RESPONSE"
    UPSTREAM_DOWN = "UPSTREAM_DOWN"
    BAD_RESPONSE = "BAD_RESPONSE"
    TOOL_CRASHED = "TOOL_CRASHED"
    FORBIDDEN = "FORBIDDEN"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    TOOL_DISABLED = "TOOL_DISABLED"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    TOOL_REPORTED_FAILURE = "TOOL_REPORTED_FAILURE"
    OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN"
    TOOL_CHANGED = "TOOL_CHANGED"


def code_for_status(status: int) -> ErrorCode:
    """The error code of a non-success HTTP status."""
    match status:
        case 429:
            return ErrorCode.RATE_LIMIT
        case 400 | 409 | 413 | 414 | 422:
            return ErrorCode.INVALID_ARGS
        case 404 | 410:
            return ErrorCode.NOT_FOUND
        case 401 | 403 | 407:
            return ErrorCode.FORBIDDEN
        case 408:
            return ErrorCode.TIMEOUT
        case 451:
            return ErrorCode.POLICY_VIOLATION
        case _ if status >= 500:
            return ErrorCode.UPSTREAM_DOWN
        case _:
            return ErrorCode.BAD_RESPONSE


class ToolError(Exception):
    """Raised by a tool to report a failure with a code; the observation layer grades it.

    `retryable` overrides the grading table only towards caution: a `False` here is never auto-retried.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
        suggested_action: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = str(code)
        self.message = message
        self.retryable = retryable
        self.details = details or {}
        self.suggested_action = suggested_action
        self.retry_after_s = retry_after_s

    def redacted(self, redact: Callable[[Any], Any]) -> ToolError:
        """The same error with its message and details passed through `redact` (a tool's secrets hidden)."""
        return ToolError(
            self.code,
            redact(self.message),
            retryable=self.retryable,
            details=redact(self.details),
            suggested_action=self.suggested_action,
            retry_after_s=self.retry_after_s,
        )


class InvalidQuestion(ValueError):
    """The question cannot be run (empty, too long): a user error, reported in one line."""


class ConfigError(ValueError):
    """The configuration is unusable; the message names the setting and what to do."""
