"""Throttle: at most one send per interval for one run's message, whatever its medium.

Slack allows about one update per second per channel; a run's message (an updated message, or a stream's
appends) is sent at most every interval. States that come faster wait their turn, and only the newest is sent:
the reply keeps it, the throttle decides when `send_newest` runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

# One update every 2 s per run stays well inside Slack's limit.
DEFAULT_MIN_INTERVAL_S = 2.0


class Throttle:
    """When a run's message may be sent next. `send_newest` sends the newest waiting state (and calls `sent` if
    it reached Slack); `waiting` says whether a newer one came meanwhile."""

    def __init__(
        self,
        send_newest: Callable[[], Awaitable[None]],
        waiting: Callable[[], bool],
        *,
        interval_s: float = DEFAULT_MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send_newest = send_newest
        self._waiting = waiting
        self.interval_s = interval_s
        self._clock = clock
        self._last_sent = float("-inf")
        self._timer: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()  # one send at a time: held by `send_newest` and by the final send

    def sent(self) -> None:
        """Something reached Slack now: the next send waits a whole interval."""
        self._last_sent = self._clock()

    async def ask(self) -> None:
        """A newer state waits: sent now if the interval allows, else once it does (one timer at a time)."""
        if self._timer is not None and not self._timer.done():
            return
        wait = self._wait_s()
        if wait <= 0:
            await self._send_newest()
        else:
            self._timer = asyncio.create_task(self._later(wait))

    async def turn(self) -> None:
        """Wait until the interval allows a send (the final one waits too)."""
        wait = self._wait_s()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _later(self, wait: float) -> None:
        while True:
            await asyncio.sleep(wait)
            if (wait := self._wait_s()) > 0:  # something went at once meanwhile: a whole interval from that
                continue
            await self._send_newest()
            # A newer state may have come while that send was on its way (a 429 can hold it for seconds).
            if not self._waiting():
                return
            wait = max(0.0, self._wait_s())

    def _wait_s(self) -> float:
        return self._last_sent + self.interval_s - self._clock()
