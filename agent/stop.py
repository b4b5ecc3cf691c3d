"""StopRequest: a person asked for a run to stop before it ends on its own.

Whoever watches for the request (the application: a stop button, a command) calls `stop(by)`; the run that was
given the request ends at once with `TerminationReason.STOPPED_BY_USER` — an LLM or tool call in flight is
abandoned, not waited for — and its answer is the honest partial one: what was found so far, cited.
"""

from __future__ import annotations

import asyncio


class StopRequest:
    """Set once, by the first `stop`; `by` names who asked (as the medium writes a person)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.by = ""

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def stop(self, by: str) -> None:
        if not self._event.is_set():
            self.by = by
            self._event.set()

    async def wait(self) -> str:
        """Until someone asks; who did."""
        await self._event.wait()
        return self.by
