"""Human review: escalation kinds, reviewer messages, decisions, resumable runs, job leases.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 08:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
OLD_STATUSES = "status IN ('pending', 'approved', 'rejected', 'expired')"
NEW_STATUSES = "status IN ('pending', 'approved', 'rejected', 'expired', 'retried')"
PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("snapshot", JSON, nullable=True))
        batch_op.add_column(sa.Column("retry_of", sa.String(length=64), nullable=True))

    # SQLite cannot alter a CHECK constraint: the batch recreates the table (nothing references it).
    with op.batch_alter_table("escalations", schema=None, recreate="always") as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=16), nullable=False, server_default="policy"))
        batch_op.add_column(sa.Column("held_calls", JSON, nullable=False, server_default="[]"))
        batch_op.add_column(sa.Column("draft_answer", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("review_channel", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("review_ts", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("reminded_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("decision_reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("final_answer", sa.Text(), nullable=True))
        batch_op.drop_constraint(op.f("ck_escalations_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_escalations_status"), sa.text(NEW_STATUSES))
        batch_op.create_check_constraint(
            op.f("ck_escalations_kind"), sa.text("kind IN ('held_action', 'policy', 'exhausted')")
        )
        batch_op.create_check_constraint(
            op.f("ck_escalations_decided_has_time"), sa.text("status = 'pending' OR decided_at IS NOT NULL")
        )
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.alter_column("kind", server_default=None)
        batch_op.alter_column("held_calls", server_default=None)
    op.create_index(
        "uq_escalations_pending_run",
        "escalations",
        ["run_id"],
        unique=True,
        postgresql_where=PENDING,
        sqlite_where=PENDING,
    )

    op.create_table(
        "job_leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("last_outcome", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_job_leases")),
    )


def downgrade() -> None:
    op.drop_table("job_leases")
    op.drop_index("uq_escalations_pending_run", table_name="escalations")
    op.execute("UPDATE escalations SET status = 'approved' WHERE status = 'retried'")
    with op.batch_alter_table("escalations", schema=None, recreate="always") as batch_op:
        batch_op.drop_constraint(op.f("ck_escalations_decided_has_time"), type_="check")
        batch_op.drop_constraint(op.f("ck_escalations_kind"), type_="check")
        batch_op.drop_constraint(op.f("ck_escalations_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_escalations_status"), sa.text(OLD_STATUSES))
        for column in (
            "final_answer",
            "decision_reason",
            "reminded_at",
            "review_ts",
            "review_channel",
            "draft_answer",
            "held_calls",
            "kind",
        ):
            batch_op.drop_column(column)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("retry_of")
        batch_op.drop_column("snapshot")
