"""Backoff: how long to wait before trying again, and what a server's `Retry-After` asks for.

One rule for every retry loop (a tool's L0 failures, the LLM endpoint, Slack's Socket Mode): capped
exponential growth, jitter so that replicas do not retry in lockstep, and a server's `Retry-After` honoured as
a floor, up to a cap.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_MAX_DOUBLINGS = 64  # base × 2^64 is past every cap; more would overflow the float


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """A `Retry-After` header as seconds to wait: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).

    None when absent or unreadable (garbage, NaN, infinity); 0 for a negative number or a date already past.
    """
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True)
class Backoff:
    """The wait before retry number `n` (1 for the first).

    The ceiling doubles from `base_s` up to `max_s`; `jitter` is the share of it left to chance (0.5: a random
    point in its upper half, so a retry is spread out yet still waits; 1: anywhere from 0, "full jitter"; 0: the
    ceiling itself). A server's `Retry-After` is a floor, honoured up to `retry_after_cap_s`.
    """

    base_s: float
    max_s: float
    jitter: float = 0.5
    retry_after_cap_s: float = math.inf
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        doublings = min(max(retry - 1, 0), _MAX_DOUBLINGS)
        ceiling = max(0.0, min(self.max_s, self.base_s * 2**doublings))
        share = min(max(self.jitter, 0.0), 1.0)
        wait = self.rng.uniform(ceiling * (1 - share), ceiling) if ceiling > 0 and share > 0 else ceiling
        if retry_after_s is not None:
            floor = min(retry_after_s, self.retry_after_cap_s)
            if math.isfinite(floor):  # NaN says nothing; an endless wait is no wait to honour
                wait = max(wait, floor)
        return wait
