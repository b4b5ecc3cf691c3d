"""The error-grading table: the shipped file is the code's default, and the config overrides it."""

import pytest
import yaml

from agent import ConfigError, ErrorLevel, GradingTable
from agent.grading import DEFAULT_GRADES
from bot.config_file import defaults_dir, load_config


def test_grading_shipped_table_matches_the_engine_defaults():
    shipped = yaml.safe_load((defaults_dir() / "errors.yaml").read_text(encoding="utf-8"))["codes"]
    assert GradingTable.from_mapping(shipped, base=GradingTable({})).codes() == dict(DEFAULT_GRADES)


def test_grading_config_overrides_one_code(tmp_path):
    path = tmp_path / "parley.yaml"
    path.write_text("errors: {UPSTREAM_DOWN: {level: L3}, QUOTA_EXCEEDED: {level: L2}}\n", encoding="utf-8")
    table = GradingTable.from_mapping(load_config(path).agent.errors)
    assert table.grade("UPSTREAM_DOWN").level is ErrorLevel.L3
    assert table.grade("QUOTA_EXCEEDED").level is ErrorLevel.L2
    assert table.grade("TIMEOUT").level is ErrorLevel.L0  # the rest of the shipped table stays


def test_grading_rejects_an_unknown_level():
    with pytest.raises(ConfigError, match="unknown error level"):
        GradingTable.from_mapping({"X": {"level": "L9"}})
