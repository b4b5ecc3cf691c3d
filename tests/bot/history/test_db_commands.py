"""`parley db upgrade|current|downgrade`, and `parley runs` refusing a schema that is not current."""

from __future__ import annotations

from tests.bot.history.parley_cli import ParleyCli, ok, one_line_error

HEAD = "0003"


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
