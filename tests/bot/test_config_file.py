"""The application's sections of parley.yaml: `review:`, `jobs:` and `ownership:` — and the keys that moved out of
`review:` into the other two, still read there with a deprecation line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agent import ConfigError
from bot.config_file import load_config

TOOLS = "tools:\n  - builtin: calculator\n"


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "parley.yaml"
    path.write_text(TOOLS + text, encoding="utf-8")
    return path


def test_config_reads_review_jobs_and_ownership_sections(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = written(
        tmp_path,
        "review: {channel: C0REVIEWS, expire_after_hours: 2, escalate_on: [gave_up]}\n"
        "jobs: {interval_s: 5, retention_days: 7}\n"
        "ownership: {heartbeat_s: 1, stale_after_s: 4}\n",
    )
    loaded = load_config(path)
    assert (loaded.review.channel, loaded.review.expire_after_hours) == ("C0REVIEWS", 2)
    assert (loaded.jobs.interval_s, loaded.jobs.retention_days) == (5, 7)
    assert (loaded.ownership.heartbeat_s, loaded.ownership.stale_after_s) == (1, 4)
    assert [reason.value for reason in loaded.agent.escalate_on] == ["gave_up"]  # the engine's to decide
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_config_keys_that_moved_out_of_review_still_work_with_a_deprecation_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    path = written(tmp_path, "review: {heartbeat_s: 0.5, stale_after_s: 2, job_interval_s: 1, retention_days: 3}\n")
    loaded = load_config(path)
    assert (loaded.ownership.heartbeat_s, loaded.ownership.stale_after_s) == (0.5, 2)
    assert (loaded.jobs.interval_s, loaded.jobs.retention_days) == (1, 3)
    lines = sorted(r.getMessage() for r in caplog.records)
    assert lines == [
        "review.heartbeat_s is deprecated: write it as ownership.heartbeat_s",
        "review.job_interval_s is deprecated: write it as jobs.interval_s",
        "review.retention_days is deprecated: write it as jobs.retention_days",
        "review.stale_after_s is deprecated: write it as ownership.stale_after_s",
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("review: {heartbeat_s: 1}\nownership: {heartbeat_s: 2}\n", "review.heartbeat_s and ownership.heartbeat_s"),
        ("ownership: {heartbeat_s: 5, stale_after_s: 6}\n", "ownership: stale_after_s (6) must be at least two"),
        ("jobs: {interval_s: 0}\n", "jobs.interval_s"),
        ("jobs: [1, 2]\n", "jobs: must be a mapping"),
        ("review: {stale_after_minutes: 5}\n", "stale_after_minutes is gone"),
        ("jobs: {every: 5}\n", "jobs.every"),
    ],
)
def test_config_a_wrong_application_section_is_one_line_naming_its_place(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(written(tmp_path, text))
    assert named in str(refused.value) and str(refused.value).startswith(str(tmp_path))
