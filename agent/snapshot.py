"""RunSnapshot: a held run as typed data, saved when a policy holds a call and resumed after an approval.

It is written in one process and read in another — after a restart, a deploy, another version — so every
field is required and nothing unknown is accepted: a snapshot that lacks a field fails validation, loudly,
instead of resuming with a silent 0. It round-trips: `RunSnapshot.model_validate(s.model_dump(mode="json"))
== s`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agent.done import DoneItem
from agent.messages import Message
from agent.result import HeldCall
from agent.source import Source

SNAPSHOT_VERSION: Literal[1] = 1


class RunCounters(BaseModel):
    """What a held run had used of its bounds when it stopped: a resumed run goes on counting from here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: int
    llm_calls: int
    tool_calls: int
    retries: int
    llm_retries: int
    tokens: int
    answer_repairs: int
    failed_calls: int
    rejected_drafts: int
    last_progress_step: int
    critique_rounds: int


class RunSnapshot(BaseModel):
    """A held run: enough for any process to resume it after a person approves.

    What the model saw (the transcript), the sources it may cite, the Done checklist and its ticks, the
    counters, and the held calls with the exact arguments the reviewer is shown.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1]  # SNAPSHOT_VERSION: a snapshot of another shape is refused, not guessed at
    run_id: str
    question: str
    step: int
    messages: list[Message]
    sources: list[Source]
    checklist: list[DoneItem]
    ticks: dict[int, str | None]  # Done item index → the tool call that ticked it
    aliases: dict[str, list[str]]  # names the question gave in two forms
    disabled: list[str]
    approved: list[str]  # signatures of calls people approved before
    held: list[HeldCall]
    counters: RunCounters
    call_ids: list[str]
