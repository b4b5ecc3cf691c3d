"""Media: the one place that decides how a run's reply reaches its thread — a stream or an updated message.

Streaming (`chat.startStream` / `appendStream` / `stopStream`, with a task timeline) is tried where the setting
allows it; a workspace whose Slack refuses it (an older plan or client, a missing scope) falls back to the
chat.update reply for good, said once in the log. The thread's native status (`assistant.threads.setStatus`)
is remembered the same way. Runs that already have a placeholder (a queued run, one taken over from another
replica) keep it: they use the chat.update reply.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Literal

log = logging.getLogger(__name__)

# PARLEY_SLACK_STREAMING: auto (stream where Slack allows it) | off (always the chat.update reply).
StreamingMode = Literal["auto", "off"]

# Slack's answers that mean "this workspace cannot do that" (as opposed to a passing failure).
UNSUPPORTED = frozenset({"not_allowed", "unknown_method", "missing_scope", "not_allowed_token_type", "no_permission"})
# Answers that are passing failures of one call: they never switch a feature off.
PASSING = frozenset({"ratelimited", "internal_error", "service_unavailable", "fatal_error", "request_timeout"})


class Medium(StrEnum):
    UPDATES = "updates"  # one message, chat.postMessage then chat.update (works everywhere)
    STREAM = "stream"  # a streamed message with Slack's task timeline


class Media:
    """What each workspace (team id) supports, learnt from Slack's refusals; shared by every run of a process."""

    def __init__(self, mode: StreamingMode = "auto") -> None:
        self._mode = mode
        self._no_stream: set[str] = set()
        self._no_status: set[str] = set()

    def medium(self, workspace: str, *, placeholder: bool) -> Medium:
        """How a run in `workspace` replies; `placeholder`: it already shows a message to go on in."""
        if self._mode == "off" or placeholder or workspace in self._no_stream:
            return Medium.UPDATES
        return Medium.STREAM

    def stream_refused(self, workspace: str, error: str) -> None:
        """Slack refused streaming there: every later run of that workspace uses chat.update (logged once)."""
        if workspace in self._no_stream:
            return
        self._no_stream.add(workspace)
        log.warning(
            "Slack refused streaming in workspace %s (%s): its runs show progress by chat.update from now on",
            workspace,
            error,
        )

    def status_allowed(self, workspace: str) -> bool:
        return workspace not in self._no_status

    def status_refused(self, workspace: str, error: str) -> None:
        """Slack refused the thread status there: no more status calls for that workspace (logged once)."""
        if workspace in self._no_status:
            return
        self._no_status.add(workspace)
        log.warning(
            "Slack refused the thread status in workspace %s (%s): no status is set there from now on", workspace, error
        )


def unsupported(error: str | None) -> bool:
    """A refusal that means the workspace does not support the method (streaming falls back)."""
    return error in UNSUPPORTED


def passing(error: str | None) -> bool:
    """A failure of this one call (unreachable, rate-limited, Slack's own error): try again next time."""
    return error is None or error in PASSING or error.startswith("HTTP ")
