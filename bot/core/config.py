"""The application's settings from parley.yaml: who reviews (`review:`), the timed jobs (`jobs:`), and how a
process holds its runs (`ownership:`). What goes to people at all is the engine's (`review.escalate_on`, read
into `AgentConfig.escalate_on`).

Until this version the jobs' and ownership's keys lived under `review:`; they are still read from there, with a
deprecation line in the log (`split_review`).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_S = 5.0
DEFAULT_STALE_AFTER_S = 20.0  # four heartbeats: one lost heartbeat, or a slow one, is no death

# Keys that moved out of `review:`: old name → (new section, new name).
MOVED_KEYS: dict[str, tuple[str, str]] = {
    "job_interval_s": ("jobs", "interval_s"),
    "retention_days": ("jobs", "retention_days"),
    "heartbeat_s": ("ownership", "heartbeat_s"),
    "stale_after_s": ("ownership", "stale_after_s"),
}


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReviewConfig(_Section):
    """`review:` — the reviewer channel and who may decide there; `PARLEY_REVIEW_CHANNEL` overrides `channel`."""

    channel: str | None = None  # the reviewer channel's id (C…); no channel: escalations wait for the CLI
    reviewers: tuple[str, ...] = ()  # Slack user ids (U…/W…) who may decide
    reviewer_group: str | None = None  # a Slack user group id (S…) whose members may decide
    allow_self_review: bool = False  # may the asker decide on their own run?
    escalate_on_feedback: bool = False  # does a 👎 on an answer send the run to the reviewer channel?
    remind_after_minutes: float = Field(30, gt=0)
    expire_after_hours: float = Field(24, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _no_time_based_staleness(cls, data: Any) -> Any:
        if isinstance(data, dict) and "stale_after_minutes" in data:
            raise ValueError(
                "stale_after_minutes is gone: a run is stale only when the process holding it stops renewing its "
                "heartbeat (ownership.heartbeat_s, ownership.stale_after_s), never because it waited"
            )
        return data

    @field_validator("reviewers")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for user in value:
            if not user or user[0] not in "UW" or not user.isalnum():
                raise ValueError(f"reviewers must be Slack user ids like U012ABCDEF (got {user!r})")
        return value


class JobsConfig(_Section):
    """`jobs:` — the timed jobs (announce, remind, expire, purge)."""

    interval_s: float = Field(60, gt=0)  # how often each job looks for work; its lease lasts one interval
    retention_days: float = Field(30, gt=0)  # raw tool payloads (snapshots, call intents) older than this are purged


DEFAULT_SHUTDOWN_GRACE_S = 10.0


class OwnershipConfig(_Section):
    """`ownership:` — a process renews its hold on the runs it owns every `heartbeat_s`; one that has not for
    `stale_after_s` is gone: its queued runs are taken over, its running runs ended (recovery runs every
    heartbeat)."""

    heartbeat_s: float = Field(DEFAULT_HEARTBEAT_S, gt=0)
    stale_after_s: float = Field(DEFAULT_STALE_AFTER_S, gt=0)
    # Stopping (SIGTERM): how long the runs under way are given to finish; those still running then, and every
    # queued one, are handed over to another replica (or to this one's next start), never cancelled.
    shutdown_grace_s: float = Field(DEFAULT_SHUTDOWN_GRACE_S, ge=0)

    @model_validator(mode="after")
    def _heartbeats_before_stale(self) -> OwnershipConfig:
        if self.stale_after_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"stale_after_s ({self.stale_after_s:g}) must be at least two heartbeats ({2 * self.heartbeat_s:g}): "
                "one late heartbeat must not look like a dead process"
            )
        return self


def split_review(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The `review:`, `jobs:` and `ownership:` sections of a configuration, the old keys of `review:` moved to
    their new sections (logged once each; a key given in both places is refused: which one is meant?)."""
    sections = {name: dict(raw.get(name) or {}) for name in ("review", "jobs", "ownership")}
    review = sections["review"]
    for old, (section, new) in MOVED_KEYS.items():
        if old not in review:
            continue
        if new in sections[section]:
            raise ValueError(f"review.{old} and {section}.{new} are the same setting: keep {section}.{new} only")
        log.warning("review.%s is deprecated: write it as %s.%s", old, section, new)
        sections[section][new] = review.pop(old)
    return sections
