"""The recovery loop: every heartbeat, this process's share of recovering the runs stopped processes left
(`RunService.recover`, which says how)."""

from __future__ import annotations

import asyncio
import logging

from bot.core import RunService

log = logging.getLogger(__name__)


class RecoveryLoop:
    """A pass every `every_s` seconds until stopped; a pass that fails is logged, and the next one comes."""

    def __init__(self, service: RunService, *, every_s: float) -> None:
        self._service = service
        self._every_s = every_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._keep_recovering(), name="parley-recovery")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _keep_recovering(self) -> None:
        while True:
            await asyncio.sleep(self._every_s)
            try:
                await self._service.recover()
            except Exception:  # a bug must not end recovery for the life of the process
                log.exception("recovering the runs of stopped processes failed")
