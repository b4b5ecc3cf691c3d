"""MCP tool pins: each MCP tool's definition as Parley first saw it (or an operator last trusted it).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_tool_pins",
        sa.Column("server", sa.String(length=255), nullable=False),
        sa.Column("tool", sa.String(length=255), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("pinned_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("trusted_by", sa.String(length=128), nullable=True),
        sa.PrimaryKeyConstraint("server", "tool", name=op.f("pk_mcp_tool_pins")),
    )


def downgrade() -> None:
    op.drop_table("mcp_tool_pins")
