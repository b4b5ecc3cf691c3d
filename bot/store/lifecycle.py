"""A run's lifecycle as the store keeps it: which statuses hold a run, which have ended, and from which statuses
each change may be made.

Every write of `runs.status` is one conditional UPDATE whose `WHERE status IN (…)` is `FROM[change]`, so a run
that moved on meanwhile (another replica ended it, a reviewer decided first) is left alone and the writer learns
it lost. What a decision on an escalation does to its run is `after_decision`, and which decisions people may
take on each kind of escalation is `DECISIONS`: the service, the recorder, the owners and every front end read
these, and nothing else decides them.
"""

from __future__ import annotations

from enum import StrEnum

from agent import EscalationKind, RunStatus
from bot.store.vocabulary import Decision

# A live process holds the run (its `owner`): queued for a worker, or running.
HELD = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
# The engine ended it (it has a termination reason): everything but held, a run waiting for review included.
ENDED = frozenset(RunStatus) - HELD
# Its answer (or refusal) stands in its conversation as it was shown: what a follow-up question builds on. A
# run waiting for review is not settled yet, and an expired one was never answered.
CONCLUDED = ENDED - {RunStatus.AWAITING_REVIEW, RunStatus.EXPIRED}


class Change(StrEnum):
    """A change of a run's status, by who makes it."""

    START = "start"  # the engine starts a queued run
    FINISH = "finish"  # the engine ends the run it holds
    RESUME = "resume"  # an approved held run goes on from its saved state
    CANCEL = "cancel"  # Parley stopped a run before it started (shutdown, the store away)
    STOP = "stop"  # Parley stopped a run it had started (shutdown, a bug outside the engine)
    UNRESUMABLE = "unresumable"  # an approved run whose saved state cannot be resumed ends
    RECOVER = "recover"  # a live process handles a run a stopped one left held


# The statuses each change may be made from.
FROM: dict[Change, frozenset[RunStatus]] = {
    Change.START: frozenset({RunStatus.QUEUED}),
    Change.FINISH: HELD,
    Change.RESUME: frozenset({RunStatus.RUNNING, RunStatus.APPROVED}),
    Change.CANCEL: frozenset({RunStatus.QUEUED}),
    Change.STOP: HELD,
    Change.UNRESUMABLE: frozenset({RunStatus.RUNNING, RunStatus.APPROVED}),
    Change.RECOVER: HELD,
}

# The decisions people may take on each kind of escalation (`expired` is the timed job's, on every kind).
DECISIONS: dict[EscalationKind, frozenset[Decision]] = {
    EscalationKind.HELD_ACTION: frozenset({Decision.APPROVED, Decision.REJECTED}),
    EscalationKind.POLICY: frozenset({Decision.APPROVED, Decision.REJECTED}),
    EscalationKind.EXHAUSTED: frozenset({Decision.APPROVED, Decision.REJECTED, Decision.RETRIED}),
    EscalationKind.FEEDBACK: frozenset({Decision.APPROVED, Decision.REJECTED}),
}


def after_decision(kind: EscalationKind, decision: Decision) -> RunStatus | None:
    """The run's status once `decision` settled its escalation of `kind`; None: the run keeps its status.

    - An approved held action goes on: `running`, held by the deciding process until it is resumed.
    - Approving any other kind gives the asker the reviewer's answer: `approved`.
    - A retried run keeps the honest end the engine gave it (`degraded`); a new run asks again.
    - Nobody looked at a 👎 in time: the answer the asker saw still stands.
    """
    if decision is Decision.APPROVED:
        return RunStatus.RUNNING if kind is EscalationKind.HELD_ACTION else RunStatus.APPROVED
    if decision is Decision.REJECTED:
        return RunStatus.REJECTED
    if decision is Decision.RETRIED:
        return RunStatus.DEGRADED
    return None if kind is EscalationKind.FEEDBACK else RunStatus.EXPIRED


def may_decide(kind: EscalationKind, decision: Decision) -> bool:
    """Whether people may take `decision` on an escalation of `kind` (the timed job's expiry: always)."""
    return decision is Decision.EXPIRED or decision in DECISIONS[kind]
