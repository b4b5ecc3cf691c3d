"""RecoveryPolicy: what the orchestration does with a graded failure, within hard bounds.

L0 is retried here, in the same step, with the same tool and arguments, exponential backoff and jitter;
everything else is written back for the model (L1/L2), stops a path (L3) or ends the run (L4).
Iron rule: an observation with `retryable: false` is never retried silently.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agent.backoff import Backoff
from agent.grading import ErrorLevel
from agent.observation import Observation

# A server asking us to wait longer than this is treated as down for this step, not waited on.
MAX_HONOURED_RETRY_AFTER_S = 30.0


@dataclass(frozen=True)
class RecoveryPolicy:
    max_auto_retries: int = 2
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def should_auto_retry(self, observation: Observation, retries_so_far: int) -> bool:
        """Only L0 failures that are explicitly retryable, and only up to the bound."""
        error = observation.error
        if observation.ok or error is None:
            return False
        if not error.retryable or error.level is not ErrorLevel.L0:
            return False
        if error.retry_after_s is not None and error.retry_after_s > MAX_HONOURED_RETRY_AFTER_S:
            return False
        return retries_so_far < self.max_auto_retries

    @property
    def backoff(self) -> Backoff:
        return Backoff(
            self.backoff_base_s, self.backoff_max_s, retry_after_cap_s=MAX_HONOURED_RETRY_AFTER_S, rng=self.rng
        )

    def delay_before_retry(self, observation: Observation, retry_number: int) -> float:
        """Capped exponential backoff with jitter; a server's Retry-After is honoured as a floor (`Backoff`)."""
        retry_after = observation.error.retry_after_s if observation.error else None
        return self.backoff.delay(retry_number, retry_after)

    def after_exhaustion(self, observation: Observation, attempts: int) -> Observation:
        """An L0 failure still standing after every retry becomes L2: the model should switch path.

        One the policy did not retry although it had budget (a server asking to wait longer than we do)
        stays L0: the tool is not down for good, and it must not count towards "every tool failed"."""
        error = observation.error
        if observation.ok or error is None or error.level is not ErrorLevel.L0:
            return observation
        if attempts - 1 < self.max_auto_retries and error.retryable:
            wait = f"{error.retry_after_s:g} s" if error.retry_after_s is not None else "longer"
            return observation.with_error(message=f"{error.message} (not retried: the server asked to wait {wait})")
        tried = "once" if attempts == 1 else f"{attempts} times"
        return observation.with_error(
            level=ErrorLevel.L2,
            message=f"{error.message} (tried {tried}; automatic retries exhausted)",
        )
