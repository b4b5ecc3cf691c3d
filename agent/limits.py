"""Limits: the hard bounds of a run. Every one is enforced by the loop, whatever the model does."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_STEPS = 6
DEFAULT_MAX_AUTO_RETRIES = 2
DEFAULT_REPEAT_THRESHOLD = 3
DEFAULT_REPEAT_ERROR_THRESHOLD = 2
DEFAULT_ALTERNATION_CYCLES = 2
DEFAULT_NO_PROGRESS_STEPS = 5
DEFAULT_MAX_CRITIQUE_ROUNDS = 2
DEFAULT_RUN_TIMEOUT_S = 120.0
DEFAULT_MAX_OBSERVATION_CHARS = 2000
DEFAULT_LLM_MAX_RETRIES = 3
DEFAULT_MAX_QUESTION_CHARS = 20_000
DEFAULT_MAX_ANSWER_REPAIRS = 1
DEFAULT_RETRY_BACKOFF_BASE_S = 0.5
DEFAULT_RETRY_BACKOFF_MAX_S = 8.0


class Limits(BaseModel):
    """`limits:` in the YAML config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(DEFAULT_MAX_STEPS, ge=1, le=100)
    max_auto_retries: int = Field(DEFAULT_MAX_AUTO_RETRIES, ge=0, le=10)
    repeat_threshold: int = Field(DEFAULT_REPEAT_THRESHOLD, ge=2)
    repeat_error_threshold: int = Field(DEFAULT_REPEAT_ERROR_THRESHOLD, ge=2)
    alternation_cycles: int = Field(DEFAULT_ALTERNATION_CYCLES, ge=2)
    no_progress_steps: int = Field(DEFAULT_NO_PROGRESS_STEPS, ge=1)
    max_critique_rounds: int = Field(DEFAULT_MAX_CRITIQUE_ROUNDS, ge=0, le=10)
    run_timeout_s: float = Field(DEFAULT_RUN_TIMEOUT_S, gt=0)
    max_observation_chars: int = Field(DEFAULT_MAX_OBSERVATION_CHARS, ge=200)
    llm_max_retries: int = Field(DEFAULT_LLM_MAX_RETRIES, ge=0, le=10)
    max_question_chars: int = Field(DEFAULT_MAX_QUESTION_CHARS, ge=1)
    max_answer_repairs: int = Field(DEFAULT_MAX_ANSWER_REPAIRS, ge=0, le=3)
    retry_backoff_base_s: float = Field(DEFAULT_RETRY_BACKOFF_BASE_S, ge=0)
    retry_backoff_max_s: float = Field(DEFAULT_RETRY_BACKOFF_MAX_S, ge=0)
