"""ReviewConfig: who reviews, what is escalated, and the timed jobs' clocks (the `review:` YAML key)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent import TerminationReason

# Runs whose recovery ran out: a person looks at them (issue: the configurable default set).
DEFAULT_ESCALATE_ON = (
    TerminationReason.REPEAT_SAME_ERROR,
    TerminationReason.ALL_TOOLS_FAILED,
    TerminationReason.IRRECOVERABLE_ERROR,
    TerminationReason.MAX_STEPS,  # only with open Done items
    TerminationReason.LLM_UNAVAILABLE,
)


class ReviewConfig(BaseModel):
    """`review:` in parley.yaml; `PARLEY_REVIEW_CHANNEL` overrides `channel`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    channel: str | None = None  # the reviewer channel's id (C…); no channel: escalations wait for the CLI
    reviewers: tuple[str, ...] = ()  # Slack user ids (U…/W…) who may decide
    reviewer_group: str | None = None  # a Slack user group id (S…) whose members may decide
    allow_self_review: bool = False  # may the asker decide on their own run?
    escalate_on: tuple[TerminationReason, ...] = DEFAULT_ESCALATE_ON
    remind_after_minutes: float = Field(30, gt=0)
    expire_after_hours: float = Field(24, gt=0)
    retention_days: float = Field(30, gt=0)  # raw tool payloads older than this are purged
    stale_after_minutes: float = Field(15, gt=0)  # a run `running` or `queued` this long past its budget is stale
    job_interval_s: float = Field(60, gt=0)  # how often the timed jobs look for work

    @field_validator("escalate_on", mode="before")
    @classmethod
    def _reasons(cls, value: object) -> object:
        if isinstance(value, str):
            return (value,)
        return value

    @field_validator("reviewers")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for user in value:
            if not user or user[0] not in "UW" or not user.isalnum():
                raise ValueError(f"reviewers must be Slack user ids like U012ABCDEF (got {user!r})")
        return value

    def escalates(self, reason: TerminationReason, *, open_items: bool) -> bool:
        """Does a run that ended this way go to people? `max_steps` only when Done items are still open."""
        if reason not in self.escalate_on:
            return False
        return open_items if reason is TerminationReason.MAX_STEPS else True
