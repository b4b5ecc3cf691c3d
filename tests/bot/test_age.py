"""age(): how long ago, the same in the terminal (`parley review list`) and in Slack (Home, /parley)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.age import age

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("ago", "shown"),
    [
        (timedelta(0), "0s"),
        (timedelta(seconds=45), "45s"),
        (timedelta(seconds=59, microseconds=999_999), "59s"),
        (timedelta(minutes=1), "1m"),
        (timedelta(minutes=12, seconds=59), "12m"),
        (timedelta(hours=1), "1h"),
        (timedelta(hours=3, minutes=5), "3h 5m"),
        (timedelta(hours=23, minutes=59, seconds=59), "23h 59m"),
        (timedelta(days=1), "1d"),
        (timedelta(days=2, hours=4, minutes=30), "2d 4h"),
        (timedelta(days=400), "400d"),
    ],
)
def test_age_in_the_two_largest_units(ago: timedelta, shown: str):
    assert age(NOW - ago, now=NOW) == shown


def test_age_of_a_time_in_the_future_is_zero():
    assert age(NOW + timedelta(minutes=5), now=NOW) == "0s"


def test_age_of_a_time_without_a_zone_is_read_as_utc():
    assert age(datetime(2026, 3, 1, 11, 0, 0), now=NOW) == "1h"


def test_age_defaults_to_now():
    assert age(datetime.now(UTC) - timedelta(hours=2, minutes=1)) in {"2h 1m", "2h 2m"}
