"""Backoff and Retry-After: the one rule every retry loop waits by (tools, the LLM endpoint, Slack's socket)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from agent import Backoff, parse_retry_after

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def test_parse_retry_after_reads_delay_seconds():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 7 ") == 7.0
    assert parse_retry_after("0.3") == 0.3


def test_parse_retry_after_reads_http_dates_against_now():
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:45 GMT", now=NOW) == 45.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:30 +0000", now=NOW) == 30.0
    assert parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now=NOW) == 0.0  # already past: go now


@pytest.mark.parametrize("value", ["-3", "-0.5", "Wed, 31 Dec 2025 23:59:59 GMT"])
def test_parse_retry_after_never_negative(value: str):
    assert parse_retry_after(value, now=NOW) == 0.0


@pytest.mark.parametrize("value", [None, "", "   ", "soon", "nan", "inf", "-inf", "1e999", "12 seconds", "Thu, 99"])
def test_parse_retry_after_garbage_is_none(value: str | None):
    assert parse_retry_after(value, now=NOW) is None


def test_backoff_grows_from_base_up_to_max_with_jitter_in_the_upper_half():
    backoff = Backoff(0.5, 4.0, rng=random.Random(7))
    for retry, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 4.0), (60, 4.0), (10_000, 4.0)]:
        waits = [backoff.delay(retry) for _ in range(200)]
        assert all(ceiling / 2 <= wait <= ceiling for wait in waits), (retry, min(waits), max(waits))
        assert len(set(waits)) > 1  # jittered: replicas do not retry in lockstep


def test_backoff_is_deterministic_with_an_injected_random():
    first = [Backoff(1.0, 60.0, rng=random.Random(42)).delay(n) for n in range(1, 8)]
    again = [Backoff(1.0, 60.0, rng=random.Random(42)).delay(n) for n in range(1, 8)]
    assert first == again


@pytest.mark.parametrize(("jitter", "low"), [(0.0, 8.0), (0.25, 6.0), (1.0, 0.0), (5.0, 0.0), (-1.0, 8.0)])
def test_backoff_jitter_is_the_share_left_to_chance(jitter: float, low: float):
    backoff = Backoff(1.0, 8.0, jitter=jitter, rng=random.Random(3))
    waits = [backoff.delay(4) for _ in range(500)]  # ceiling 8
    assert all(low <= wait <= 8.0 for wait in waits)
    assert min(waits) < low + 0.5


def test_backoff_without_jitter_is_the_ceiling_itself():
    backoff = Backoff(5.0, 60.0, jitter=0.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]


def test_backoff_retry_after_is_a_floor_up_to_its_cap():
    backoff = Backoff(0.01, 0.05, retry_after_cap_s=30.0, rng=random.Random(1))
    assert backoff.delay(1, 7.0) == 7.0  # longer than the backoff: the server's word wins
    assert backoff.delay(1, 3600.0) == 30.0  # but only up to the cap
    assert backoff.delay(1, math.inf) == 30.0
    assert 0.005 <= backoff.delay(1, 0.0) <= 0.01  # shorter than the backoff: the backoff still waits


def test_backoff_retry_after_uncapped_by_default_and_nonsense_ignored():
    backoff = Backoff(5.0, 60.0, jitter=0.0)
    assert backoff.delay(1, 120.0) == 120.0
    assert backoff.delay(1, math.nan) == 5.0
    assert backoff.delay(1, math.inf) == 5.0  # an endless wait is no wait to honour
    assert backoff.delay(1, -5.0) == 5.0


def test_backoff_zero_or_negative_bounds_never_wait_negative():
    assert Backoff(0.0, 8.0).delay(3) == 0.0
    assert Backoff(1.0, 0.0).delay(3) == 0.0
    assert Backoff(-1.0, 8.0).delay(3) == 0.0
    assert Backoff(0.0, 0.0, retry_after_cap_s=0.0).delay(1, 10.0) == 0.0
