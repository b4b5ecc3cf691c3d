"""Feedback escalations: a 👎 sent to the reviewers is an escalation of its own kind, `feedback`; and the audit
log's `run_failed`, a run ended by a failure outside the engine.

Until now such an escalation was stored as `exhausted` with reason `feedback`, a kind the engine gives runs whose
recovery ran out: reviewers read it as "Parley could not finish this" and were offered a retry. Those rows move to
the new kind; a downgrade moves them back. The kind vocabulary is a copy, as in 0001.

SQLite cannot alter a CHECK constraint: the batch recreates `escalations` (nothing refers to it); its partial
unique index is dropped first and made again afterwards. `audit_events` is recreated the same way, and its
append-only triggers made again (as in 0004).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'pending'")
KINDS = "kind IN ('held_action', 'policy', 'exhausted', 'feedback')"
OLD_KINDS = "kind IN ('held_action', 'policy', 'exhausted')"
OLD_ACTIONS = (
    "'run_queued', 'run_started', 'run_resumed', 'run_finished', 'run_cancelled', 'run_recovered', "
    "'resume_refused', 'review_approved', 'review_rejected', 'review_expired', 'review_retried', 'review_refused', "
    "'review_reminded', 'payloads_purged'"
)
ACTIONS = f"action IN ({OLD_ACTIONS}, 'run_failed')"
APPEND_ONLY_SQLITE = [
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (UPDATE refused)'); END",
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (DELETE refused)'); END",
]


def _kinds(check: str) -> None:
    op.drop_index("uq_escalations_pending_run", table_name="escalations")
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_escalations_kind"), type_="check")
        batch_op.create_check_constraint(op.f("ck_escalations_kind"), sa.text(check))
    op.create_index(
        "uq_escalations_pending_run",
        "escalations",
        ["run_id"],
        unique=True,
        postgresql_where=PENDING,
        sqlite_where=PENDING,
    )


def _actions(check: str) -> None:
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_audit_events_action"), type_="check")
        batch_op.create_check_constraint(op.f("ck_audit_events_action"), sa.text(check))
    if op.get_bind().dialect.name == "sqlite":  # the triggers left with the old table
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")
        for statement in APPEND_ONLY_SQLITE:
            op.execute(statement)


def upgrade() -> None:
    _kinds(KINDS)
    op.execute("UPDATE escalations SET kind = 'feedback' WHERE reason = 'feedback'")
    _actions(ACTIONS)


def _failed_as_cancelled() -> None:
    """0006 knows no `run_failed`: such events become `run_cancelled` (the run ended early either way). The log is
    append-only, so its guard is lifted for this one statement and put back."""
    update = "UPDATE audit_events SET action = 'run_cancelled' WHERE action = 'run_failed'"
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute(update)  # `_actions` makes the triggers again
    else:
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
        op.execute(update)
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")


def downgrade() -> None:
    _failed_as_cancelled()
    _actions(f"action IN ({OLD_ACTIONS})")
    op.execute("UPDATE escalations SET kind = 'exhausted' WHERE kind = 'feedback'")
    _kinds(OLD_KINDS)
