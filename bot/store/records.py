"""What leaves the store: typed, frozen read-backs of what it holds, never its ORM rows.

- `Ask`: one question asked in a conversation (or on the command line), as the store records it.
- `StoredRun`: a run — the engine's `RunResult` once it ended, and what only the store knows (who asked, from
  where, when, Parley's message in the thread, the configuration, which process holds it).
- `StoredEscalation`: a run that went to people — why, the exact calls held, the reviewer message, the decision.
- `StoredTrace`: one run with everything recorded about it, in order (`parley runs show`, `/parley show`).
- `RunSummary`: a run as a list shows it (the columns a page of a million runs can afford).

Every view of a recorded run starts from these, so the terminal, Slack and the audit render the same objects.
They are built from rows in `bot.store.rows`; nothing here knows SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent import (
    EscalationKind,
    HeldCall,
    OutcomeKind,
    RunResult,
    RunStatus,
    TerminationReason,
)
from bot.store.vocabulary import (
    AuditAction,
    Decision,
    EscalationStatus,
    FeedbackVerdict,
    RunSource,
    VerdictKind,
    VerdictStage,
)


@dataclass(frozen=True)
class Conversation:
    """Where a conversation lives in a chat medium: a workspace, a channel and the thread's root message."""

    workspace: str
    channel: str
    thread: str


@dataclass(frozen=True)
class RunOrigin:
    """Where a run came from: who asked, through which front end, in which conversation (none: the CLI)."""

    source: RunSource
    asker: str
    conversation: Conversation | None = None


@dataclass(frozen=True)
class Ask:
    """One question asked of Parley. `message` is the chat message that asked: a medium delivers it as often as
    it likes, and it is recorded once (the store's unique key); None for a question no message carries (the
    command line, a reviewer's retry)."""

    question: str
    origin: RunOrigin
    message: str | None = None

    @property
    def asker(self) -> str:
        return self.origin.asker

    @property
    def conversation(self) -> Conversation | None:
        return self.origin.conversation


@dataclass(frozen=True)
class StoredRun:
    """One recorded run: its `result` (None while it is queued or running) and the store's own facts."""

    id: str
    question: str
    status: RunStatus
    result: RunResult | None
    source: RunSource
    asker: str
    workspace_id: str | None
    channel_id: str | None
    thread_ts: str | None
    trigger_ts: str | None
    reply_ts: str | None  # Parley's message in the thread, updated live
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    brain: str
    replayed: bool
    config_hash: str
    trace_complete: bool
    retry_of: str | None
    owner: str | None = None  # the process holding it while it is queued or running
    answer: str | None = None  # the answer column as it is, also before `result` exists (a stopped run's note)
    termination_reason: TerminationReason | None = None
    resumes: int = 0  # how often it was taken over after its process stopped
    delivered: bool = False  # its end reached its conversation

    @property
    def outcome(self) -> OutcomeKind | None:
        """The kind of end the run came to (`RunResult.outcome`); None while it has not ended."""
        return self.result.outcome if self.result is not None else None

    @property
    def conversation(self) -> Conversation | None:
        """The conversation it was asked in; None for a run asked outside one (the command line)."""
        if self.workspace_id is None or self.channel_id is None or self.thread_ts is None:
            return None
        return Conversation(self.workspace_id, self.channel_id, self.thread_ts)

    @property
    def origin(self) -> RunOrigin:
        """Where it came from, for the recorder of its next steps."""
        return RunOrigin(self.source, self.asker, self.conversation)


@dataclass(frozen=True)
class StoredEscalation:
    """A run people must decide on. At most one is pending per run; exactly one decision settles it."""

    id: int
    run_id: str
    kind: EscalationKind
    reason: str
    level: str
    status: EscalationStatus
    message: str
    tool: str | None
    arguments: dict[str, Any] | None
    tool_call_id: str | None
    held_calls: list[HeldCall]  # exactly what the reviewer is shown and approves
    draft_answer: str | None
    review_channel: str | None  # the reviewer message: claimed (channel only), then posted (channel and ts)
    review_ts: str | None
    created_at: datetime
    reminded_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    decision_reason: str | None = None
    final_answer: str | None = None  # a reviewer's (edited) answer

    @property
    def pending(self) -> bool:
        return self.status is EscalationStatus.PENDING

    @property
    def posted(self) -> bool:
        """The reviewer message exists (it can be updated)."""
        return bool(self.review_channel and self.review_ts)


@dataclass(frozen=True)
class Escalated:
    """An escalation with its run now, and the run as it went to people (what the reviewer message shows, the
    same before the decision and after it, when the run itself has moved on)."""

    escalation: StoredEscalation
    run: StoredRun
    as_escalated: StoredRun


@dataclass(frozen=True)
class Settled:
    """The outcome of a decision attempt: `won` when this call recorded it, else who had decided before."""

    won: bool
    escalation: StoredEscalation | None
    run: StoredRun | None


@dataclass(frozen=True)
class ShownEnd:
    """How a run's thread already shows it ended (its last message says so), as the store records it."""

    status: RunStatus
    reason: TerminationReason
    answer: str
    message_ts: str


@dataclass(frozen=True)
class RunSummary:
    """A run as a list shows it."""

    id: str
    created_at: datetime
    source: RunSource
    asker: str
    question: str
    status: RunStatus
    termination_reason: TerminationReason | None
    steps: int
    tool_calls: int
    duration_ms: int | None


# One run's trace, entry by entry: each holds its table's columns, so `parley runs show --json` prints them all.


@dataclass(frozen=True)
class StoredStep:
    id: int
    run_id: str
    step: int
    decision: str
    thought: str
    text: str
    requested_calls: list[Any]
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    at: datetime


@dataclass(frozen=True)
class StoredToolCall:
    id: int
    run_id: str
    step: int
    tool_call_id: str
    tool: str
    arguments: dict[str, Any] | None
    ok: bool
    error_code: str | None
    error_level: str | None
    retryable: bool | None
    retries: int
    latency_ms: int
    observation: str
    raw: Any
    raw_bytes: int
    raw_truncated: bool
    raw_purged_at: datetime | None
    attempts: list[Any]
    at: datetime


@dataclass(frozen=True)
class StoredVerdict:
    id: int
    run_id: str
    step: int | None
    kind: VerdictKind
    stage: VerdictStage | None
    satisfied: bool | None
    gaps: list[Any]
    next_action: str | None
    source: str | None
    round: int | None
    item: str | None
    tool_call_id: str | None
    decided_by: str | None
    decision: Decision | None
    reason: str | None
    at: datetime


@dataclass(frozen=True)
class StoredAuditEvent:
    id: int
    run_id: str | None
    at: datetime
    actor: str
    action: AuditAction
    from_status: RunStatus | None
    to_status: RunStatus | None
    detail: dict[str, Any]


@dataclass(frozen=True)
class StoredFeedback:
    """One person's verdict on a run's answer (the newest: a second click changes it)."""

    id: int
    run_id: str
    user: str
    verdict: FeedbackVerdict
    by_asker: bool
    comment: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class StoredTrace:
    """One run with everything recorded about it, in order. `columns` is the run's record as it is (every column
    but none of the store's types), for readers that want it whole (`parley runs show --json`)."""

    run: StoredRun
    columns: dict[str, Any]
    steps: list[StoredStep] = field(default_factory=list)
    tool_calls: list[StoredToolCall] = field(default_factory=list)
    verdicts: list[StoredVerdict] = field(default_factory=list)
    escalations: list[StoredEscalation] = field(default_factory=list)
    audit: list[StoredAuditEvent] = field(default_factory=list)
    feedback: list[StoredFeedback] = field(default_factory=list)  # people's 👍 / 👎, oldest first

    @property
    def done_plan(self) -> list[dict[str, Any]]:
        """The run's Definition of Done as it was made."""
        plan = self.columns.get("done_plan") or []
        return [item for item in plan if isinstance(item, dict)]
