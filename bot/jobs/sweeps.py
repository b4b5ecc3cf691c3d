"""The timed jobs' sweeps: each one call of the run service, handling what is due at `now`.

Every item a sweep handles is claimed by a conditional UPDATE in the store, so two replicas sweeping at the same
instant never handle one item twice; people are told after the commit, once per item claimed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.core import RunService

# One timed job: handle what is due at `now`, return how many items were handled.
Sweep = Callable[[RunService, datetime], Awaitable[int]]

# The order a pass runs them in: an escalation past its time is expired before a reminder could be sent for it.
# (Runs left behind by a stopped process are recovered every heartbeat, not here: `bot.jobs.recovery`.)
SWEEPS: dict[str, Sweep] = {
    "announce": RunService.announce_waiting,
    "expire": RunService.expire_due,
    "remind": RunService.remind_due,
    "purge": RunService.purge,
}
