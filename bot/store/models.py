"""The store's tables: runs, their steps and tool calls, verdicts, escalations, and the audit log.

Constraints live in the database (foreign keys, unique keys, check constraints on every closed
vocabulary), not only here. The audit log is append-only: triggers refuse UPDATE and DELETE.

A closed vocabulary is a `StrEnum` column (`vocabulary`): rows read back as enum members, written as their
values, and the database's CHECK refuses anything else, whichever client writes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import (
    text as sql,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from agent import DecisionKind, RunStatus, TerminationReason
from bot.store.vocabulary import (
    AuditAction,
    Decision,
    EscalationKind,
    EscalationStatus,
    FeedbackVerdict,
    RunSource,
    VerdictKind,
    VerdictStage,
)

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ERROR_LEVELS = ("L0", "L1", "L2", "L3", "L4")  # the engine's ErrorLevel names (an IntEnum: kept as text)


def vocabulary(values: type[StrEnum], column: str, length: int) -> Enum:
    """A column holding one of `values`: VARCHAR(`length`) with the enum's values as they are, and a CHECK
    constraint named after the column (`ck_<table>_<column>`) that refuses any other string."""
    return Enum(
        values,
        name=column,
        native_enum=False,
        create_constraint=True,
        length=length,
        values_callable=lambda members: [member.value for member in members],
    )


def _one_of(column: str, values: tuple[str, ...], *, nullable: bool = False) -> str:
    listed = ", ".join(f"'{v}'" for v in values)
    clause = f"{column} IN ({listed})"
    return f"{column} IS NULL OR {clause}" if nullable else clause


# One id type for every table: BigInteger on PostgreSQL, INTEGER (the rowid alias) on SQLite.
Id = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator):
    """Timestamps are aware and UTC on the way in and out, on SQLite (which keeps no zone) too."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# JSON documents: JSONB on PostgreSQL, JSON (text) elsewhere.
Json = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar = {dict[str, Any]: Json, list[Any]: Json, datetime: UTCDateTime()}


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[RunSource] = mapped_column(vocabulary(RunSource, "source", 16))
    workspace_id: Mapped[str | None] = mapped_column(String(32))
    channel_id: Mapped[str | None] = mapped_column(String(32))
    thread_ts: Mapped[str | None] = mapped_column(String(32))  # the conversation: a Slack thread's root
    trigger_ts: Mapped[str | None] = mapped_column(String(32))  # the Slack message that asked (exactly once)
    reply_ts: Mapped[str | None] = mapped_column(String(32))  # Parley's message in the thread, updated live
    asker: Mapped[str] = mapped_column(String(128))
    question: Mapped[str] = mapped_column(Text)
    status: Mapped[RunStatus] = mapped_column(vocabulary(RunStatus, "status", 24))
    termination_reason: Mapped[TerminationReason | None] = mapped_column(
        vocabulary(TerminationReason, "termination_reason", 32)
    )
    answer: Mapped[str | None] = mapped_column(Text)
    citations: Mapped[list[Any]] = mapped_column(default=list)
    completed: Mapped[list[Any]] = mapped_column(default=list)
    missing: Mapped[list[Any]] = mapped_column(default=list)
    done_plan: Mapped[list[Any]] = mapped_column(default=list)
    grounding: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")  # how each figure is backed
    escalation: Mapped[dict[str, Any] | None] = mapped_column(Json)
    degraded: Mapped[dict[str, Any] | None] = mapped_column(Json)
    steps: Mapped[int] = mapped_column(default=0)
    llm_calls: Mapped[int] = mapped_column(default=0)
    tool_calls: Mapped[int] = mapped_column(default=0)
    retries: Mapped[int] = mapped_column(default=0)
    llm_retries: Mapped[int] = mapped_column(default=0)
    critique_rounds: Mapped[int] = mapped_column(default=0)
    tokens: Mapped[int] = mapped_column(default=0)
    trace_complete: Mapped[bool] = mapped_column(Boolean, default=True)  # false: some events could not be written
    brain: Mapped[str] = mapped_column(String(128), default="")
    replayed: Mapped[bool] = mapped_column(Boolean, default=False)
    config_hash: Mapped[str] = mapped_column(String(64), default="")
    limits: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # The engine's state when a policy held a call: what a reviewer's approval resumes from (any process).
    snapshot: Mapped[dict[str, Any] | None] = mapped_column(Json)
    retry_of: Mapped[str | None] = mapped_column(String(64))  # the run a reviewer asked to run again
    owner: Mapped[str | None] = mapped_column(String(128))  # the process holding it while queued or running
    resumes: Mapped[int] = mapped_column(server_default="0")  # taken over after its process stopped
    delivered_at: Mapped[datetime | None]  # its end reached its conversation (None: not yet, or ended elsewhere)
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    duration_ms: Mapped[int | None]

    __table_args__ = (
        CheckConstraint(
            "steps >= 0 AND llm_calls >= 0 AND tool_calls >= 0 AND retries >= 0 AND llm_retries >= 0", name="counters"
        ),
        Index("ix_runs_created", "created_at", "id"),
        Index("ix_runs_status_created", "status", "created_at", "id"),
        Index("ix_runs_reason_created", "termination_reason", "created_at", "id"),
        Index("ix_runs_asker_created", "asker", "created_at", "id"),
        Index("ix_runs_thread", "workspace_id", "channel_id", "thread_ts", "created_at"),
        # One run per Slack message, whatever Slack redelivers (retries, app_mention + message pairs).
        UniqueConstraint("workspace_id", "channel_id", "trigger_ts", name="uq_runs_slack_trigger"),
    )


class Step(Base):
    __tablename__ = "steps"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    step: Mapped[int]
    decision: Mapped[DecisionKind] = mapped_column(vocabulary(DecisionKind, "decision", 16))
    thought: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")
    requested_calls: Mapped[list[Any]] = mapped_column(default=list)
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    latency_ms: Mapped[int] = mapped_column(default=0)
    at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("run_id", "step"),
        CheckConstraint("step >= 1", name="step_positive"),
    )


class ToolCallRecord(Base):
    __tablename__ = "tool_calls"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    step: Mapped[int]
    tool_call_id: Mapped[str] = mapped_column(String(128))
    tool: Mapped[str] = mapped_column(String(128))
    arguments: Mapped[dict[str, Any] | None] = mapped_column(Json)
    ok: Mapped[bool] = mapped_column(Boolean)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_level: Mapped[str | None] = mapped_column(String(2))
    retryable: Mapped[bool | None] = mapped_column(Boolean)
    retries: Mapped[int] = mapped_column(default=0)
    latency_ms: Mapped[int] = mapped_column(default=0)
    observation: Mapped[str] = mapped_column(Text)
    raw: Mapped[Any | None] = mapped_column(Json)
    raw_bytes: Mapped[int] = mapped_column(default=0)
    raw_truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    raw_purged_at: Mapped[datetime | None]
    attempts: Mapped[list[Any]] = mapped_column(default=list)
    at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("run_id", "tool_call_id"),
        CheckConstraint(_one_of("error_level", ERROR_LEVELS, nullable=True), name="error_level"),
        CheckConstraint("ok OR error_code IS NOT NULL", name="failure_has_code"),
        Index("ix_tool_calls_run_step", "run_id", "step"),
        Index("ix_tool_calls_at", "at"),
    )


class Verdict(Base):
    """Critique verdicts, Done ticks and rejections of a final, and (later) reviewers' decisions."""

    __tablename__ = "verdicts"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    step: Mapped[int | None]
    kind: Mapped[VerdictKind] = mapped_column(vocabulary(VerdictKind, "kind", 16))
    stage: Mapped[VerdictStage | None] = mapped_column(vocabulary(VerdictStage, "stage", 16))
    satisfied: Mapped[bool | None] = mapped_column(Boolean)
    gaps: Mapped[list[Any]] = mapped_column(default=list)
    next_action: Mapped[str | None] = mapped_column(String(32))
    source: Mapped[str | None] = mapped_column(String(16))
    round: Mapped[int | None]
    item: Mapped[str | None] = mapped_column(Text)
    tool_call_id: Mapped[str | None] = mapped_column(String(128))
    decided_by: Mapped[str | None] = mapped_column(String(128))
    decision: Mapped[Decision | None] = mapped_column(vocabulary(Decision, "decision", 16))
    reason: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime]

    __table_args__ = (Index("ix_verdicts_run", "run_id", "id"),)


class EscalationRecord(Base):
    """A run a person must decide on: a held action, a policy refusal, or recovery that ran out.

    At most one is pending per run (a partial unique index); the decision is taken by one conditional
    UPDATE … WHERE status = 'pending', so double clicks and two reviewers at once record one decision.
    """

    __tablename__ = "escalations"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    kind: Mapped[EscalationKind] = mapped_column(vocabulary(EscalationKind, "kind", 16), default=EscalationKind.POLICY)
    reason: Mapped[str] = mapped_column(String(64))
    level: Mapped[str] = mapped_column(String(2))
    status: Mapped[EscalationStatus] = mapped_column(
        vocabulary(EscalationStatus, "status", 16), default=EscalationStatus.PENDING
    )
    message: Mapped[str] = mapped_column(Text, default="")
    tool: Mapped[str | None] = mapped_column(String(128))
    arguments: Mapped[dict[str, Any] | None] = mapped_column(Json)
    tool_call_id: Mapped[str | None] = mapped_column(String(128))
    held_calls: Mapped[list[Any]] = mapped_column(default=list)  # exactly what the reviewer is shown and approves
    draft_answer: Mapped[str | None] = mapped_column(Text)
    review_channel: Mapped[str | None] = mapped_column(String(32))
    review_ts: Mapped[str | None] = mapped_column(String(32))  # the reviewer-channel message, updated on decision
    created_at: Mapped[datetime]
    reminded_at: Mapped[datetime | None]
    decided_at: Mapped[datetime | None]
    decided_by: Mapped[str | None] = mapped_column(String(128))
    decision_reason: Mapped[str | None] = mapped_column(Text)
    final_answer: Mapped[str | None] = mapped_column(Text)  # a reviewer's (edited) answer

    __table_args__ = (
        CheckConstraint(_one_of("level", ERROR_LEVELS), name="level"),
        CheckConstraint(f"status = '{EscalationStatus.PENDING}' OR decided_at IS NOT NULL", name="decided_has_time"),
        Index("ix_escalations_status_created", "status", "created_at"),
        Index("ix_escalations_run", "run_id"),
        Index(
            "uq_escalations_pending_run",
            "run_id",
            unique=True,
            postgresql_where=sql(f"status = '{EscalationStatus.PENDING}'"),
            sqlite_where=sql(f"status = '{EscalationStatus.PENDING}'"),
        ),
    )


class FeedbackRecord(Base):
    """A person's 👍 / 👎 on a run's answer: one row per person per run (a second click changes it).

    `by_asker` is false when someone other than the run's asker gave it (allowed: it is a team bot).
    `updated_at` is when the verdict or its comment last changed; earlier verdicts are not kept.
    """

    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    user: Mapped[str] = mapped_column(String(128))  # who clicked (a Slack user id)
    verdict: Mapped[FeedbackVerdict] = mapped_column(vocabulary(FeedbackVerdict, "verdict", 8))
    by_asker: Mapped[bool] = mapped_column(Boolean)
    comment: Mapped[str | None] = mapped_column(Text)  # "what was wrong?", for a 👎
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("run_id", "user", name="uq_feedback_run_user"),
        Index("ix_feedback_verdict_run", "verdict", "run_id"),
    )


class JobLease(Base):
    """One row per timed job: which replica may run it now, and when it last ran (survives restarts)."""

    __tablename__ = "job_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(128))
    lease_until: Mapped[datetime | None]
    last_started_at: Mapped[datetime | None]
    last_finished_at: Mapped[datetime | None]
    runs: Mapped[int] = mapped_column(default=0)
    last_outcome: Mapped[str | None] = mapped_column(Text)


class OwnerRecord(Base):
    """One row per Parley process that holds runs: its hold on them lasts until `expires_at`, renewed by its
    heartbeat. A queued or running run whose owner's hold ran out (or who stopped) was left behind."""

    __tablename__ = "run_owners"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int]
    started_at: Mapped[datetime]
    beat_at: Mapped[datetime]  # its last heartbeat
    expires_at: Mapped[datetime]
    stopped_at: Mapped[datetime | None]


class StopRecord(Base):
    """A person asked for a queued or running run to stop: the process holding the run reads it and stops it (the
    first request is kept; a run has at most one)."""

    __tablename__ = "stop_requests"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    actor: Mapped[str] = mapped_column(String(128))  # as the audit log names people: "slack:U…", "cli:ada"
    shown_as: Mapped[str] = mapped_column(String(128))  # as the run's answer names them: "<@U…>"
    at: Mapped[datetime]


class RunCheckpoint(Base):
    """A running run as it stood after its last completed step (`RunSnapshot`): what a survivor resumes from."""

    __tablename__ = "run_checkpoints"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    step: Mapped[int]
    state: Mapped[dict[str, Any]]
    saved_at: Mapped[datetime] = mapped_column(server_default=func.now())


class CallIntentRecord(Base):
    """A tool call about to run, recorded before it starts: one after the last checkpoint has an unknown
    outcome."""

    __tablename__ = "call_intents"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    tool_call_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    step: Mapped[int]
    tool: Mapped[str] = mapped_column(String(128))
    signature: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]]
    started_at: Mapped[datetime] = mapped_column(server_default=func.now())


class AuditEvent(Base):
    """Append-only: every status change with its actor and time."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id", ondelete="RESTRICT"))
    at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(128))
    action: Mapped[AuditAction] = mapped_column(vocabulary(AuditAction, "action", 64))
    from_status: Mapped[RunStatus | None] = mapped_column(vocabulary(RunStatus, "from_status", 24))
    to_status: Mapped[RunStatus | None] = mapped_column(vocabulary(RunStatus, "to_status", 24))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (Index("ix_audit_events_run_at", "run_id", "at"),)


class McpToolPin(Base):
    """An MCP tool's definition as first seen (or last trusted by an operator): a hash of its name, description
    and input schema. A server that later lists another definition under that name is not called for it."""

    __tablename__ = "mcp_tool_pins"

    server: Mapped[str] = mapped_column(String(255), primary_key=True)  # the entry's name, else its URL or command
    tool: Mapped[str] = mapped_column(String(255), primary_key=True)  # the server's own name for it
    digest: Mapped[str] = mapped_column(String(64))  # sha256, hex
    pinned_at: Mapped[datetime]
    trusted_by: Mapped[str | None] = mapped_column(String(128))  # who re-trusted it; None: first sighting
