"""Feedback: a person's 👍 / 👎 on a run's answer in Slack, one per person per run, with an optional comment.

The verdict vocabulary is a copy, as in 0001: a migration describes the schema as it was.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=128), nullable=False),
        sa.Column("verdict", sa.String(length=8), nullable=False),
        sa.Column("by_asker", sa.Boolean(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("verdict IN ('up', 'down')", name=op.f("ck_feedback_verdict")),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_feedback_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
        sa.UniqueConstraint("run_id", "user", name="uq_feedback_run_user"),
    )
    op.create_index("ix_feedback_verdict_run", "feedback", ["verdict", "run_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_feedback_verdict_run", table_name="feedback")
    op.drop_table("feedback")
