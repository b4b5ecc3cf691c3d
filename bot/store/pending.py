"""PendingEnds: ends of runs the database could not take when they happened, kept until it can.

A run's end — its status and answer, or the honest note that it could not start — is what its thread was
told. Written while the database is down, it would be lost, and the run would look unfinished to every later
reader. So the write is kept here by the process that owns the run and tried again: each time that process's
heartbeat reaches the database, and with back-off while the write itself keeps failing. The writes must be
conditional (they change a run only while it is still queued or running), so a write that did reach the
database before its answer was lost is harmless to repeat.

Memory is bounded: past `limit` kept writes the oldest is given up, logged with its run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent import Backoff, exception_line
from bot.store.errors import StoreUnavailable

log = logging.getLogger(__name__)

Write = Callable[[], Awaitable[object]]

DEFAULT_LIMIT = 10_000  # a process holds far fewer runs; a kept end is a few KiB
DEFAULT_WRITE_TIMEOUT_S = 5.0
DEFAULT_BACKOFF = Backoff(1.0, 60.0)
# What a write that did not get through raises when the database is the cause: kept and tried again.
OUTAGES = (StoreUnavailable, TimeoutError)


@dataclass
class _Kept:
    write: Write
    tries: int = 0
    due: float = 0.0  # monotonic time of the next try


class PendingEnds:
    """The run ends one process still owes the database, oldest first."""

    def __init__(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        backoff: Backoff = DEFAULT_BACKOFF,
        write_timeout_s: float = DEFAULT_WRITE_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit = limit
        self._backoff = backoff
        self._timeout = write_timeout_s
        self._clock = clock
        self._kept: dict[str, _Kept] = {}  # run id → its write; insertion order is age
        self._flushing = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def run_ids(self) -> list[str]:
        return list(self._kept)

    def keep(self, run_id: str, write: Write) -> None:
        """Keep `write` (the end of run `run_id`) until it gets through; a newer end of the run replaces it."""
        self._kept.pop(run_id, None)
        self._kept[run_id] = _Kept(write, due=self._clock())  # tried at the next heartbeat that gets through
        while len(self._kept) > self._limit:
            dropped = next(iter(self._kept))
            del self._kept[dropped]
            log.error("run %s: its end was never written and is given up (%d ends wait already)", dropped, self._limit)

    async def write(self, run_id: str, write: Write) -> bool:
        """Write now; when the database cannot take it, keep it for later. True when written now."""
        try:
            async with asyncio.timeout(self._timeout):
                await write()
        except OUTAGES as exc:
            log.warning("run %s: its end is kept until the database is back: %s", run_id, _why(exc))
            self.keep(run_id, write)
            return False
        return True

    async def flush(self, *, all_due: bool = False) -> int:
        """Try the kept writes that are due (every one with `all_due`), oldest first; how many got through.

        The first that fails for an outage stops the pass: the database is gone again. One that fails for any
        other reason is a bug, never fixed by trying again: logged and given up.
        """
        written = 0
        async with self._flushing:
            for run_id, kept in list(self._kept.items()):
                if not all_due and kept.due > self._clock():
                    continue
                try:
                    async with asyncio.timeout(self._timeout):
                        await kept.write()
                except OUTAGES as exc:
                    kept.tries += 1
                    kept.due = self._clock() + self._backoff.delay(kept.tries)
                    log.info("run %s: its end still waits for the database: %s", run_id, _why(exc))
                    break
                except Exception:
                    log.exception("run %s: its end cannot be written and is given up", run_id)
                    self._kept.pop(run_id, None)
                    continue
                self._kept.pop(run_id, None)
                written += 1
                log.info("run %s: its end, kept while the database was away, is written", run_id)
        return written


def _why(exc: BaseException) -> str:
    return exception_line(exc) if str(exc) else "the database did not answer in time"
