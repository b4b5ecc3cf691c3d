"""Crash-safe runs: a run's last completed step is saved, and each tool call's intent is recorded before it runs.

`run_checkpoints` keeps one row per running run, replaced at each step boundary: the engine's `RunSnapshot`, from
which a survivor resumes a run whose process died. `call_intents` has a row per tool call about to run (its id,
tool, arguments and their signature, the database's time): a call with an intent and no result after the last
checkpoint is one whose outcome is unknown. `runs.resumes` counts how often a run was taken over, so a run that
kills its process every time ends honestly instead of looping. `runs.delivered_at` says when a run's end reached
its conversation: an end recorded but never shown (its process died in between) is finished by a survivor. Runs
that ended before this revision count as delivered.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "run_checkpoints",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("state", JSON, nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_checkpoints_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_checkpoints")),
    )
    op.create_table(
        "call_intents",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("tool_call_id", sa.String(length=255), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("arguments", JSON, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_call_intents_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "tool_call_id", name=op.f("pk_call_intents")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resumes", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE runs SET delivered_at = COALESCE(finished_at, created_at) WHERE status NOT IN ('queued', 'running')"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE runs DROP COLUMN resumes")  # not a batch: other tables refer to `runs`
        op.execute("ALTER TABLE runs DROP COLUMN delivered_at")
    else:
        op.drop_column("runs", "resumes")
        op.drop_column("runs", "delivered_at")
    op.drop_table("call_intents")
    op.drop_table("run_checkpoints")
