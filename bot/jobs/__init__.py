"""The timed jobs — announce and remind escalations, expire undecided ones, purge payloads — and the loop that
recovers the runs stopped processes left: front ends of the run service driven by the clock.

Each timed job runs on every replica's scheduler but, through its lease in `job_leases`, once per interval
across all of them; recovery runs every heartbeat on every replica. Each item a job or recovery handles is
claimed with a conditional UPDATE in the store, so none is handled twice.
"""

from bot.jobs.recovery import RecoveryLoop
from bot.jobs.scheduler import Jobs
from bot.jobs.sweeps import SWEEPS, Sweep

__all__ = ["SWEEPS", "Jobs", "RecoveryLoop", "Sweep"]
