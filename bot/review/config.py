"""ReviewConfig: who reviews, and the timed jobs' clocks (the `review:` YAML key; its `escalate_on`, what
goes to people, is the engine's: `AgentConfig.escalate_on`, agent/escalation.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ReviewConfig(BaseModel):
    """`review:` in parley.yaml; `PARLEY_REVIEW_CHANNEL` overrides `channel`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    channel: str | None = None  # the reviewer channel's id (C…); no channel: escalations wait for the CLI
    reviewers: tuple[str, ...] = ()  # Slack user ids (U…/W…) who may decide
    reviewer_group: str | None = None  # a Slack user group id (S…) whose members may decide
    allow_self_review: bool = False  # may the asker decide on their own run?
    remind_after_minutes: float = Field(30, gt=0)
    expire_after_hours: float = Field(24, gt=0)
    retention_days: float = Field(30, gt=0)  # raw tool payloads older than this are purged
    stale_after_minutes: float = Field(15, gt=0)  # a run `running` or `queued` this long past its budget is stale
    job_interval_s: float = Field(60, gt=0)  # how often the timed jobs look for work

    @field_validator("reviewers")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for user in value:
            if not user or user[0] not in "UW" or not user.isalnum():
                raise ValueError(f"reviewers must be Slack user ids like U012ABCDEF (got {user!r})")
        return value
