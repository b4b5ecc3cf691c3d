"""`parley db upgrade|current|downgrade`, and `parley runs` refusing a schema that is not current."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.store.migrate import head_revision
from tests.bot.history.parley_cli import ParleyCli, ok, one_line_error
from tests.bot.history.stores import Store

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

HEAD = head_revision()


def without_owner(shown: str) -> dict[str, Any]:
    """`runs show --json` without the process that held the run (0005's column) and its resumes and delivery
    (0008's: gone when downgraded below, and an ended run upgraded again reads as delivered when it ended)."""
    document = json.loads(shown)
    for column in ("owner", "resumes", "delivered_at"):
        document["run"].pop(column, None)
    return dict(document)


def test_runs_list_after_db_downgrade_names_parley_db_upgrade(empty_database: ParleyCli) -> None:
    parley = empty_database

    upgraded = ok(parley("db", "upgrade"))
    current = ok(parley("db", "current"))
    downgraded = ok(parley("db", "downgrade", "base"))
    after = parley("runs", "list")

    assert upgraded.strip().endswith(f"schema at {HEAD} (up to date)")
    assert current == upgraded
    assert f"schema at base (empty) (newest is {HEAD}: run `parley db upgrade`)" in downgraded
    line = one_line_error(after)
    assert "has no Parley tables" in line
    assert "`parley db upgrade`" in line


def test_db_upgrade_to_0004_keeps_what_was_recorded_and_exported(sqlite_store: Store) -> None:
    parley = sqlite_store.parley
    before = [ok(parley("runs", "export", "--format", fmt)) for fmt in ("jsonl", "csv")]
    shown_before = ok(parley("runs", "show", sqlite_store.recorded.weather, "--json"))

    ok(parley("db", "downgrade", "0003"))  # the schema as it was before the vocabularies' checks
    refused = one_line_error(parley("runs", "list"))
    upgraded = ok(parley("db", "upgrade"))
    after = [ok(parley("runs", "export", "--format", fmt)) for fmt in ("jsonl", "csv")]

    assert "is at revision 0003" in refused and "`parley db upgrade`" in refused
    assert upgraded.strip().endswith(f"schema at {HEAD} (up to date)")
    assert after == before  # every status, reason and source reads back as the same string
    shown_after = ok(parley("runs", "show", sqlite_store.recorded.weather, "--json"))
    assert without_owner(shown_after) == without_owner(shown_before)  # below 0005 a run has no owner column
    assert '"status": "solved"' in before[0] and '"source": "cli"' in before[0]
