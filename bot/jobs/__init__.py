"""The timed jobs: announce and remind escalations, expire undecided ones, purge payloads; and the recovery of
runs that stopped processes left queued or running.

Each timed job runs on every replica's scheduler but, through its lease in `job_leases`, once per interval
across all of them; recovery runs every heartbeat on every replica. Each item a job or recovery handles is
claimed with a conditional UPDATE, so none is handled twice.
"""

from bot.jobs.leases import claim, release
from bot.jobs.recovery import Recovery, RunTaker
from bot.jobs.scheduler import Jobs
from bot.jobs.sweeps import SWEEPS, Sweep, announce, expire, purge, remind

__all__ = [
    "SWEEPS",
    "Jobs",
    "Recovery",
    "RunTaker",
    "Sweep",
    "announce",
    "claim",
    "expire",
    "purge",
    "release",
    "remind",
]
