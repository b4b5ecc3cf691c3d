"""Initial schema: runs, steps, tool calls, verdicts, escalations and the append-only audit log.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 04:36:08.359179
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


APPEND_ONLY_POSTGRES = [
    """CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'audit_events is append-only (% refused)', TG_OP;
    END;
    $$""",
    "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
    "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()",
]
APPEND_ONLY_SQLITE = [
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (UPDATE refused)'); END",
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (DELETE refused)'); END",
]


def _append_only() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in APPEND_ONLY_POSTGRES if postgres else APPEND_ONLY_SQLITE:
        op.execute(statement)


def _drop_append_only() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events")
        op.execute("DROP FUNCTION IF EXISTS audit_events_append_only()")
    else:
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=True),
        sa.Column("channel_id", sa.String(length=32), nullable=True),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("trigger_ts", sa.String(length=32), nullable=True),
        sa.Column("reply_ts", sa.String(length=32), nullable=True),
        sa.Column("asker", sa.String(length=128), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("termination_reason", sa.String(length=32), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column(
            "citations", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column(
            "completed", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column(
            "missing", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column(
            "done_plan", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column(
            "escalation", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True
        ),
        sa.Column(
            "degraded", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True
        ),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("llm_calls", sa.Integer(), nullable=False),
        sa.Column("tool_calls", sa.Integer(), nullable=False),
        sa.Column("retries", sa.Integer(), nullable=False),
        sa.Column("llm_retries", sa.Integer(), nullable=False),
        sa.Column("critique_rounds", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("trace_complete", sa.Boolean(), nullable=False),
        sa.Column("brain", sa.String(length=128), nullable=False),
        sa.Column("replayed", sa.Boolean(), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "limits", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.CheckConstraint("source IN ('cli', 'slack')", name=op.f("ck_runs_source")),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'solved', 'degraded', 'refused', 'awaiting_review', 'approved', 'rejected', 'expired')",
            name=op.f("ck_runs_status"),
        ),
        sa.CheckConstraint(
            "termination_reason IS NULL OR termination_reason IN ('answered', 'gave_up', 'max_steps', 'repeat_same_call', 'repeat_same_error', 'repeat_alternation', 'no_progress', 'critique_spin', 'ungrounded_answer', 'invalid_output', 'irrecoverable_error', 'policy_violation', 'all_tools_failed', 'llm_unavailable', 'run_timeout', 'cancelled')",
            name=op.f("ck_runs_termination_reason"),
        ),
        sa.CheckConstraint(
            "steps >= 0 AND llm_calls >= 0 AND tool_calls >= 0 AND retries >= 0 AND llm_retries >= 0",
            name=op.f("ck_runs_counters"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("workspace_id", "channel_id", "trigger_ts", name="uq_runs_slack_trigger"),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_asker_created", ["asker", "created_at", "id"], unique=False)
        batch_op.create_index("ix_runs_created", ["created_at", "id"], unique=False)
        batch_op.create_index("ix_runs_reason_created", ["termination_reason", "created_at", "id"], unique=False)
        batch_op.create_index("ix_runs_status_created", ["status", "created_at", "id"], unique=False)
        batch_op.create_index("ix_runs_thread", ["workspace_id", "channel_id", "thread_ts", "created_at"], unique=False)

    op.create_table(
        "audit_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("from_status", sa.String(length=24), nullable=True),
        sa.Column("to_status", sa.String(length=24), nullable=True),
        sa.Column(
            "detail", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.CheckConstraint(
            "from_status IS NULL OR from_status IN ('queued', 'running', 'solved', 'degraded', 'refused', 'awaiting_review', 'approved', 'rejected', 'expired')",
            name=op.f("ck_audit_events_from_status"),
        ),
        sa.CheckConstraint(
            "to_status IS NULL OR to_status IN ('queued', 'running', 'solved', 'degraded', 'refused', 'awaiting_review', 'approved', 'rejected', 'expired')",
            name=op.f("ck_audit_events_to_status"),
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_audit_events_run_id_runs"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.create_index("ix_audit_events_run_at", ["run_id", "at"], unique=False)

    op.create_table(
        "escalations",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=2), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=True),
        sa.Column(
            "arguments", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True
        ),
        sa.Column("tool_call_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by", sa.String(length=128), nullable=True),
        sa.CheckConstraint("level IN ('L0', 'L1', 'L2', 'L3', 'L4')", name=op.f("ck_escalations_level")),
        sa.CheckConstraint(
            "status IN ('pending', 'approved', 'rejected', 'expired')", name=op.f("ck_escalations_status")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_escalations_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_escalations")),
    )
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.create_index("ix_escalations_run", ["run_id"], unique=False)
        batch_op.create_index("ix_escalations_status_created", ["status", "created_at"], unique=False)

    op.create_table(
        "steps",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("thought", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column(
            "requested_calls",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("decision IN ('tool_calls', 'final', 'give_up', 'invalid')", name=op.f("ck_steps_decision")),
        sa.CheckConstraint("step >= 1", name=op.f("ck_steps_step_positive")),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_steps_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
        sa.UniqueConstraint("run_id", "step", name=op.f("uq_steps_run_id_step")),
    )
    op.create_table(
        "tool_calls",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("tool_call_id", sa.String(length=128), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column(
            "arguments", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True
        ),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("error_code", sa.String(length=64), nullable=True),
        sa.Column("error_level", sa.String(length=2), nullable=True),
        sa.Column("retryable", sa.Boolean(), nullable=True),
        sa.Column("retries", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("observation", sa.Text(), nullable=False),
        sa.Column("raw", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True),
        sa.Column("raw_bytes", sa.Integer(), nullable=False),
        sa.Column("raw_truncated", sa.Boolean(), nullable=False),
        sa.Column("raw_purged_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "attempts", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "error_level IS NULL OR error_level IN ('L0', 'L1', 'L2', 'L3', 'L4')",
            name=op.f("ck_tool_calls_error_level"),
        ),
        sa.CheckConstraint("ok OR error_code IS NOT NULL", name=op.f("ck_tool_calls_failure_has_code")),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_tool_calls_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_calls")),
        sa.UniqueConstraint("run_id", "tool_call_id", name=op.f("uq_tool_calls_run_id_tool_call_id")),
    )
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.create_index("ix_tool_calls_at", ["at"], unique=False)
        batch_op.create_index("ix_tool_calls_run_step", ["run_id", "step"], unique=False)

    op.create_table(
        "verdicts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=True),
        sa.Column("satisfied", sa.Boolean(), nullable=True),
        sa.Column(
            "gaps", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("next_action", sa.String(length=32), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=True),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("item", sa.Text(), nullable=True),
        sa.Column("tool_call_id", sa.String(length=128), nullable=True),
        sa.Column("decided_by", sa.String(length=128), nullable=True),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "stage IS NULL OR stage IN ('in_step', 'closing', 'done', 'critique', 'grounding', 'output')",
            name=op.f("ck_verdicts_stage"),
        ),
        sa.CheckConstraint(
            "kind IN ('critique', 'done_tick', 'final_rejected', 'plan', 'review')", name=op.f("ck_verdicts_kind")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_verdicts_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verdicts")),
    )
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.create_index("ix_verdicts_run", ["run_id", "id"], unique=False)
    _append_only()


def downgrade() -> None:
    _drop_append_only()
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.drop_index("ix_verdicts_run")

    op.drop_table("verdicts")
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.drop_index("ix_tool_calls_run_step")
        batch_op.drop_index("ix_tool_calls_at")

    op.drop_table("tool_calls")
    op.drop_table("steps")
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.drop_index("ix_escalations_status_created")
        batch_op.drop_index("ix_escalations_run")

    op.drop_table("escalations")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_events_run_at")

    op.drop_table("audit_events")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_status_created")
        batch_op.drop_index("ix_runs_thread")
        batch_op.drop_index("ix_runs_reason_created")
        batch_op.drop_index("ix_runs_created")
        batch_op.drop_index("ix_runs_asker_created")

    op.drop_table("runs")
