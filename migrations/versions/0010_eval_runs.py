"""Evaluation runs: `parley eval` records its runs with the source `eval`, so that `parley runs show` opens each
one while the team's lists (and the reviewers) leave them out.

The source vocabulary is a copy, as in 0001. A downgrade keeps the evaluation runs as command-line runs (`cli`):
they were asked from the command line, and their traces stay.

SQLite cannot alter a CHECK constraint, and recreating `runs` in a batch would cascade-delete every step, call and
verdict that refers to it (the store's connections enforce foreign keys). Widening or narrowing the list of an
`IN (…)` check changes nothing on disk, so on SQLite the table's recorded definition is edited in place, the way
SQLite's documentation gives for such changes (writable_schema, then a new schema_version).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

OLD_SOURCES = "source IN ('cli', 'slack')"
SOURCES = "source IN ('cli', 'slack', 'eval')"


def _sources(old: str, new: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        op.drop_constraint(op.f("ck_runs_source"), "runs", type_="check")
        op.create_check_constraint(op.f("ck_runs_source"), "runs", sa.text(new))
        return
    table = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'"
    definition = bind.exec_driver_sql(table).scalar_one()
    if old not in definition:
        raise RuntimeError(f"runs: the check {old!r} is not in its definition; cannot change it in place")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.exec_driver_sql(
        "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'runs'",
        (definition.replace(old, new),),
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")


def upgrade() -> None:
    _sources(OLD_SOURCES, SOURCES)


def downgrade() -> None:
    op.execute("UPDATE runs SET source = 'cli' WHERE source = 'eval'")
    _sources(SOURCES, OLD_SOURCES)
