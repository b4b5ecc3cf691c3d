"""Closed vocabularies: the database also refuses an unknown review decision or audit action.

Every other closed vocabulary already had its CHECK; these two were plain text. The values are copies, as in
0001: a migration describes the schema as it was, whatever the enums say later.

SQLite cannot add a CHECK to a table: the batch recreates `verdicts` and `audit_events` (nothing refers to
them). The audit log's append-only triggers go with the old table, so they are made again afterwards.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

DECISIONS = "decision IN ('approved', 'rejected', 'expired', 'retried')"
ACTIONS = (
    "action IN ('run_queued', 'run_started', 'run_resumed', 'run_finished', 'run_cancelled', 'run_recovered', "
    "'resume_refused', 'review_approved', 'review_rejected', 'review_expired', 'review_retried', 'review_refused', "
    "'review_reminded', 'payloads_purged')"
)
APPEND_ONLY_SQLITE = [
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (UPDATE refused)'); END",
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only (DELETE refused)'); END",
]


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _append_only_again() -> None:
    """PostgreSQL altered the table in place (its trigger stays); SQLite's triggers left with the old table."""
    if _sqlite():
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")
        for statement in APPEND_ONLY_SQLITE:
            op.execute(statement)


def upgrade() -> None:
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.create_check_constraint(op.f("ck_verdicts_decision"), DECISIONS)
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.create_check_constraint(op.f("ck_audit_events_action"), ACTIONS)
    _append_only_again()


def downgrade() -> None:
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_audit_events_action"), type_="check")
    _append_only_again()
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_verdicts_decision"), type_="check")
