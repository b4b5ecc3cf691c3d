"""Age: how long ago something happened, as the terminal and Slack both show it."""

from __future__ import annotations

from datetime import UTC, datetime


def age(since: datetime, *, now: datetime | None = None) -> str:
    """In the two largest units, with the letters `--since` takes: `45s`, `12m`, `3h 5m`, `2d 4h`.

    A time without a zone is taken as UTC; one in the future is `0s`."""
    since = since if since.tzinfo else since.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - since).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"
