"""Stop requests: a person asked for a queued or running run to stop (a stop button, `/parley stop`); the
process holding the run reads the request and ends it with the new termination reason `stopped_by_user`. The
audit log gains `stop_requested` and `stop_refused`.

The vocabularies are copies, as in 0001. `audit_events` is recreated on SQLite as in 0007. `runs` cannot be: on
SQLite, dropping it would cascade to every row that refers to it. Widening its CHECK refuses no row it holds, so
there the constraint's text is edited in the schema as SQLite documents for such changes (writable_schema, the
schema version bumped); PostgreSQL replaces the constraint.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

OLD_REASONS = (
    "'answered', 'gave_up', 'max_steps', 'repeat_same_call', 'repeat_same_error', 'repeat_alternation', "
    "'no_progress', 'critique_spin', 'ungrounded_answer', 'invalid_output', 'irrecoverable_error', "
    "'policy_violation', 'all_tools_failed', 'llm_unavailable', 'run_timeout', 'cancelled'"
)
NEW_REASONS = f"{OLD_REASONS}, 'stopped_by_user'"
OLD_ACTIONS = (
    "'run_queued', 'run_started', 'run_resumed', 'run_finished', 'run_cancelled', 'run_recovered', "
    "'resume_refused', 'review_approved', 'review_rejected', 'review_expired', 'review_retried', 'review_refused', "
    "'review_reminded', 'payloads_purged', 'run_failed'"
)
NEW_ACTIONS = f"{OLD_ACTIONS}, 'stop_requested', 'stop_refused'"
APPEND_ONLY_SQLITE = [
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (UPDATE refused)'); END",
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (DELETE refused)'); END",
]


def _reasons(old: str, new: str) -> None:
    check = "termination_reason IS NULL OR termination_reason IN ({})"
    if op.get_bind().dialect.name == "sqlite":
        version = op.get_bind().exec_driver_sql("PRAGMA schema_version").scalar_one()
        op.execute("PRAGMA writable_schema=ON")
        op.get_bind().exec_driver_sql(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'runs'",
            (check.format(old), check.format(new)),
        )
        op.execute(f"PRAGMA schema_version={int(version) + 1}")
        op.execute("PRAGMA writable_schema=OFF")
        return
    op.drop_constraint(op.f("ck_runs_termination_reason"), "runs", type_="check")
    op.create_check_constraint(op.f("ck_runs_termination_reason"), "runs", sa.text(check.format(new)))


def _actions(actions: str) -> None:
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_audit_events_action"), type_="check")
        batch_op.create_check_constraint(op.f("ck_audit_events_action"), sa.text(f"action IN ({actions})"))
    if op.get_bind().dialect.name == "sqlite":  # the triggers left with the old table
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")
        for statement in APPEND_ONLY_SQLITE:
            op.execute(statement)


def upgrade() -> None:
    _reasons(OLD_REASONS, NEW_REASONS)
    _actions(NEW_ACTIONS)
    op.create_table(
        "stop_requests",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("shown_as", sa.String(length=128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_stop_requests_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_stop_requests")),
    )


def _unsay(update: str) -> None:
    """0007 knows neither the reason nor the actions: the nearest it knows replace them (the log is append-only, so
    its guard is lifted for the statement and put back)."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute(update)  # `_actions` makes the triggers again
    else:
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
        op.execute(update)
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")


def downgrade() -> None:
    op.drop_table("stop_requests")
    op.execute("UPDATE runs SET termination_reason = 'cancelled' WHERE termination_reason = 'stopped_by_user'")
    _unsay(
        "UPDATE audit_events SET action = CASE action WHEN 'stop_requested' THEN 'run_cancelled' "
        "ELSE 'review_refused' END WHERE action IN ('stop_requested', 'stop_refused')"
    )
    _actions(OLD_ACTIONS)
    _reasons(NEW_REASONS, OLD_REASONS)
