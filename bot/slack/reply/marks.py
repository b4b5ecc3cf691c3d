"""Marks: the message metadata that tells, in a run's thread, how the run ended there.

The message that replaces a run's placeholder with its end (the answer, a partial answer, or the notice that
it could not go on) carries `{"event_type": "parley_run_ended", "event_payload": {run, status, reason}}`.
A process can die after its thread was told and before the store took the end (the database was away); the
live replica that recovers the run reads the thread back and finds the mark, so what people were shown
stands and is recorded, and nothing contradicting it is posted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from agent import RunStatus, TerminationReason
from bot.core import ShownEnd
from bot.slack.blocks import SlackMessage

ENDED = "parley_run_ended"


def mark_ended(
    messages: Sequence[SlackMessage], run_id: str, status: RunStatus, reason: TerminationReason
) -> list[SlackMessage]:
    """`messages` with the first (the one that replaces the placeholder) marked as the end of run `run_id`."""
    first, *rest = messages
    payload = {"run_id": run_id, "status": status.value, "termination_reason": reason.value}
    return [dataclasses.replace(first, metadata={"event_type": ENDED, "event_payload": payload}), *rest]


def shown_end(messages: Sequence[dict[str, Any]], run_id: str) -> ShownEnd | None:
    """The end of run `run_id` as a thread's messages (`conversations.replies`) show it: the newest marked one."""
    for message in reversed(messages):
        metadata = message.get("metadata")
        if not isinstance(metadata, dict) or metadata.get("event_type") != ENDED:
            continue
        payload = metadata.get("event_payload")
        if not isinstance(payload, dict) or payload.get("run_id") != run_id:
            continue
        try:
            status = RunStatus(str(payload.get("status")))
            reason = TerminationReason(str(payload.get("termination_reason")))
        except ValueError:  # written by a newer version: not a mark this one can read
            continue
        return ShownEnd(status, reason, str(message.get("text") or ""), str(message.get("ts") or ""))
    return None
