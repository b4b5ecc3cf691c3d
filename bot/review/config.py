"""ReviewConfig: who reviews, and the timed jobs' clocks (the `review:` YAML key; its `escalate_on`, what
goes to people, is the engine's: `AgentConfig.escalate_on`, agent/escalation.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.owner import DEFAULT_HEARTBEAT_S, DEFAULT_STALE_AFTER_S


class ReviewConfig(BaseModel):
    """`review:` in parley.yaml; `PARLEY_REVIEW_CHANNEL` overrides `channel`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    channel: str | None = None  # the reviewer channel's id (C…); no channel: escalations wait for the CLI
    reviewers: tuple[str, ...] = ()  # Slack user ids (U…/W…) who may decide
    reviewer_group: str | None = None  # a Slack user group id (S…) whose members may decide
    allow_self_review: bool = False  # may the asker decide on their own run?
    escalate_on_feedback: bool = False  # does a 👎 on an answer send the run to the reviewer channel?
    remind_after_minutes: float = Field(30, gt=0)
    expire_after_hours: float = Field(24, gt=0)
    retention_days: float = Field(30, gt=0)  # raw tool payloads older than this are purged
    job_interval_s: float = Field(60, gt=0)  # how often the timed jobs look for work
    # A process renews its hold on the runs it owns every `heartbeat_s`; one that has not for `stale_after_s`
    # is gone: its queued runs are taken over, its running runs ended (recovery runs every heartbeat).
    heartbeat_s: float = Field(DEFAULT_HEARTBEAT_S, gt=0)
    stale_after_s: float = Field(DEFAULT_STALE_AFTER_S, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _no_time_based_staleness(cls, data: Any) -> Any:
        if isinstance(data, dict) and "stale_after_minutes" in data:
            raise ValueError(
                "stale_after_minutes is gone: a run is stale only when the process holding it stops renewing its "
                "heartbeat (review.heartbeat_s, review.stale_after_s), never because it waited"
            )
        return data

    @model_validator(mode="after")
    def _heartbeats_before_stale(self) -> ReviewConfig:
        if self.stale_after_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"stale_after_s ({self.stale_after_s:g}) must be at least two heartbeats ({2 * self.heartbeat_s:g}): "
                "one late heartbeat must not look like a dead process"
            )
        return self

    @field_validator("reviewers")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for user in value:
            if not user or user[0] not in "UW" or not user.isalnum():
                raise ValueError(f"reviewers must be Slack user ids like U012ABCDEF (got {user!r})")
        return value
