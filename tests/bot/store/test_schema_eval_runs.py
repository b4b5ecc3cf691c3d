"""Migration 0010: runs may be `parley eval`'s (source `eval`); nothing else changes, on PostgreSQL and on SQLite
(where the check is changed in place: recreating `runs` would cascade-delete every row that refers to it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bot.store import Database, connect
from bot.store.migrate import downgrade, upgrade
from bot.store.models import Step
from tests.bot.store.postgres import MakeDatabase, pg_url_of
from tests.bot.store.recording import fetch
from tests.bot.store.test_store_schema import NOW, TABLES_0010, seed

REVISION, BEFORE = "0010", "0009"


async def copy_of_run_1(db: Database, run_id: str, source: str) -> None:
    """run-1 of `seed` again, under another id and source: every column the revision has, copied."""
    (row,) = await fetch(db, "SELECT * FROM runs WHERE id = 'run-1'")
    columns = [c for c in row if c not in ("id", "source")]
    async with db.engine.begin() as conn:
        await conn.execute(
            text(
                f"INSERT INTO runs (id, source, {', '.join(columns)}) "
                f"SELECT '{run_id}', '{source}', {', '.join(columns)} FROM runs WHERE id = 'run-1'"
            )
        )


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0010_lets_runs_be_eval_runs_and_keeps_everything_else(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    db = connect(url)
    try:
        await upgrade(db, BEFORE)
        await seed(db)
        with pytest.raises(IntegrityError, match="ck_runs_source"):
            await copy_of_run_1(db, "run-eval", "eval")
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0010}

        await upgrade(db, REVISION)
        during = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0010}
        assert during == before  # every run, step, call and verdict still there
        await copy_of_run_1(db, "run-eval", "eval")
        async with db.sessions() as session, session.begin():  # a child row of the eval run, as the recorder writes
            session.add(Step(run_id="run-eval", step=1, decision="final", at=NOW))
        with pytest.raises(IntegrityError, match="ck_runs_source"):  # the vocabulary is still closed
            await copy_of_run_1(db, "run-x", "bench")

        await downgrade(db, BEFORE)
        sources = await fetch(db, "SELECT id, source FROM runs ORDER BY id")
        assert sources == [{"id": "run-1", "source": "cli"}, {"id": "run-eval", "source": "cli"}]  # kept, as asked
        assert await fetch(db, "SELECT run_id FROM steps WHERE run_id = 'run-eval'") == [{"run_id": "run-eval"}]
        with pytest.raises(IntegrityError, match="ck_runs_source"):
            async with db.engine.begin() as conn:
                await conn.execute(text("UPDATE runs SET source = 'eval' WHERE id = 'run-eval'"))
        await upgrade(db, REVISION)  # and up again
    finally:
        await db.aclose()
