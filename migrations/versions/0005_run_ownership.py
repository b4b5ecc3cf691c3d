"""Run ownership: every queued or running run belongs to a live process that renews a heartbeat.

`run_owners` has one row per Parley process that holds runs (`parley serve`, `parley ask`, …): when it last
renewed its hold and until when that hold lasts. `runs.owner` names the process holding a run; a run is
stale only when its owner's hold has run out (or the owner stopped), never because it waited.

Rows already `queued` or `running` get no owner: a live `parley serve` treats them as left by a stopped
process (stop the replicas of the previous version before the new ones start).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_owners",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_owners")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=128), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # Not a batch: it would rebuild `runs`, and SQLite refuses to drop a table other rows refer to.
        op.execute("ALTER TABLE runs DROP COLUMN owner")
    else:
        op.drop_column("runs", "owner")
    op.drop_table("run_owners")
