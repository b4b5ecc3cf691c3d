"""Job leases: with several replicas, each timed job runs once per interval, whoever ticks first.

A lease is a row of `job_leases` per job. Claiming it is one conditional UPDATE that succeeds only when
the job is due, judged from `last_started_at` in the database, not from any process's memory — so a
restarted process does not run a job again before its interval is up, and a job that fell due while
everything was down runs at the first tick — and when nobody else holds it (or its holder's lease ran out:
a crashed replica). Its own holder may always take it again: a connection that dropped while a claim or a
release was committed leaves the lease held by a process that does not know it, and that process must not
be locked out of its own job. The lease only saves work: what each job does to an item is itself a
conditional claim, so a sweep that outlives its lease still never handles an item twice.

Times are the database's (`now()`) unless a caller gives its own (tests): replicas whose clocks disagree still
agree on when a job is due and when a lease ran out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.store.database import Database, moment, rows_changed
from bot.store.models import JobLease


async def claim(
    db: Database, name: str, owner: str, *, now: datetime | None, interval_s: float, lease_s: float
) -> bool:
    """Take the lease of job `name` until `now + lease_s` if the job is due and the lease is free, ran out, or
    is `owner`'s own already; True when taken (`now` None: the database's clock)."""
    insert = sqlite_insert if db.is_sqlite else pg_insert
    at = moment(db, now)
    async with db.sessions() as session, session.begin():
        # Two replicas may create the row at once: the second insert does nothing.
        await session.execute(insert(JobLease).values(name=name, runs=0).on_conflict_do_nothing())
        claimed = await rows_changed(
            session,
            update(JobLease)
            .where(
                JobLease.name == name,
                or_(JobLease.lease_until.is_(None), JobLease.lease_until <= at, JobLease.owner == owner),
                or_(
                    JobLease.last_started_at.is_(None),
                    JobLease.last_started_at <= at - timedelta(seconds=interval_s),
                ),
            )
            .values(
                owner=owner,
                lease_until=at + timedelta(seconds=lease_s),
                last_started_at=at,
                runs=JobLease.runs + 1,
            )
            .execution_options(synchronize_session=False),
        )
    return claimed == 1


async def release(db: Database, name: str, owner: str, *, now: datetime | None, outcome: str) -> bool:
    """Give the lease back with how the run went; False when `owner` no longer holds it (taken over). `now`
    None: the database's clock."""
    async with db.sessions() as session, session.begin():
        released = await rows_changed(
            session,
            update(JobLease)
            .where(JobLease.name == name, JobLease.owner == owner, JobLease.lease_until.is_not(None))
            .values(lease_until=None, last_finished_at=moment(db, now), last_outcome=outcome)
            .execution_options(synchronize_session=False),
        )
    return released == 1
