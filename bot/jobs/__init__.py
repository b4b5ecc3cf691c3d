"""The timed jobs: announce and remind escalations, expire undecided ones, end stale runs, purge payloads.

Each job runs on every replica's scheduler but, through its lease in `job_leases`, once per interval
across all of them; each item a job handles is claimed with a conditional UPDATE, so none is handled twice.
"""

from bot.jobs.leases import claim, release
from bot.jobs.scheduler import Jobs
from bot.jobs.sweeps import SWEEPS, Sweep, announce, expire, purge, recover_stale, remind

__all__ = [
    "SWEEPS",
    "Jobs",
    "Sweep",
    "announce",
    "claim",
    "expire",
    "purge",
    "recover_stale",
    "release",
    "remind",
]
