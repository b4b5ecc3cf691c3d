"""A reported failure: a result whose own body says it failed, whatever the transport or the status said.

One rule for every tool (a built-in's return value in `normalise`, an HTTP API's body in `interpret_reply`):
`{"ok": false, …}`, `{"error": {…}}`, or an `error` that says something (`"quota used up"`, `true`, a list)
without `"ok": true` beside it. Its code is the one the body names when it looks like a code (an HTTP status
number is mapped like the status), else the HTTP status's, else `TOOL_REPORTED_FAILURE`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent.errors import ErrorCode, ToolError, code_for_status

# The code of a body that says it failed without naming a code.
REPORTED_FAILURE_CODE = ErrorCode.TOOL_REPORTED_FAILURE

_CODE_SHAPE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_SPEC_KEYS = {"code", "message", "retryable", "suggested_action"}  # read from `error`, not kept as details
_BODY_KEYS = {"ok", "error", "code", "message", "suggested_action", "data"}


def _says_it_failed(body: Mapping[str, Any]) -> bool:
    error = body.get("error")
    return body.get("ok") is False or isinstance(error, dict) or (bool(error) and body.get("ok") is not True)


def reported_failure(
    body: Mapping[str, Any], *, status: int | None = None, retry_after_s: float | None = None
) -> ToolError | None:
    """The failure a body reports, as a `ToolError`; None when it does not say it failed.

    `status` and `retry_after_s` are the HTTP reply's, when the body came over HTTP."""
    if not _says_it_failed(body):
        return None
    error = body.get("error")
    spec: Mapping[str, Any] = error if isinstance(error, dict) else {}
    code = _code(spec.get("code")) or _code(body.get("code"))
    if code is None:
        code = code_for_status(status) if status is not None and status >= 400 else REPORTED_FAILURE_CODE
    message = spec.get("message") or (error if isinstance(error, str) else None) or body.get("message")
    action = spec.get("suggested_action") or body.get("suggested_action")
    retryable = spec.get("retryable")
    details = {k: v for k, v in spec.items() if k not in _SPEC_KEYS}
    details.update({k: v for k, v in body.items() if k not in _BODY_KEYS})
    if status is not None:
        details["http_status"] = status
    source = "the API" if status is not None else "the tool"
    return ToolError(
        code,
        str(message or f"{source} reported a failure"),
        retryable=retryable if isinstance(retryable, bool) else None,
        details=details,
        suggested_action=action if isinstance(action, str) else None,
        retry_after_s=retry_after_s,
    )


def _code(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
        return code_for_status(value)  # Google-style `{"error": {"code": 404, …}}`
    if isinstance(value, str) and _CODE_SHAPE.match(value.strip()):
        return value.strip().upper()
    return None
