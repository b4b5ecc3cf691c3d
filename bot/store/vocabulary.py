"""The store's closed vocabularies: what its columns may hold besides the engine's own enums.

The engine's `RunStatus`, `TerminationReason`, `DecisionKind` and `EscalationKind` are stored as they are; these
are the store's. Each is a `StrEnum` whose values are exactly the strings in the database (existing rows and exports
read the same), and each column holding one is checked by the database (`bot.store.models`).
"""

from __future__ import annotations

from enum import StrEnum

from agent import EscalationKind

__all__ = [
    "AuditAction",
    "Decision",
    "EscalationKind",
    "EscalationStatus",
    "FeedbackVerdict",
    "RunSource",
    "VerdictKind",
    "VerdictStage",
]


class RunSource(StrEnum):
    """Where a run was asked."""

    CLI = "cli"
    SLACK = "slack"
    EVAL = "eval"  # `parley eval`: kept like any run, left out of the team's lists and the reviewers' queue


class VerdictKind(StrEnum):
    """What a verdict row records."""

    CRITIQUE = "critique"  # a critic's verdict on a step or a draft
    DONE_TICK = "done_tick"  # a Definition-of-Done item met, with the call that met it
    FINAL_REJECTED = "final_rejected"  # a draft answer refused by a closing check
    PLAN = "plan"  # the Definition of Done was made
    REVIEW = "review"  # a person's (or the expiry job's) decision on an escalation


class VerdictStage(StrEnum):
    """Which check spoke: a critique's stage, or the closing check that refused a final."""

    IN_STEP = "in_step"
    CLOSING = "closing"
    DONE = "done"
    CRITIQUE = "critique"
    GROUNDING = "grounding"
    OUTPUT = "output"


class FeedbackVerdict(StrEnum):
    """A person's verdict on an answer in Slack: the 👍 or 👎 of its feedback buttons."""

    UP = "up"
    DOWN = "down"


class EscalationStatus(StrEnum):
    """An escalation is `pending` until exactly one decision settles it."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    RETRIED = "retried"


class Decision(StrEnum):
    """A decision on a pending escalation: the status it leaves the escalation in, and its `review` verdict."""

    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    RETRIED = "retried"

    @property
    def status(self) -> EscalationStatus:
        return EscalationStatus(self.value)

    @property
    def action(self) -> AuditAction:
        return AuditAction(f"review_{self.value}")


class AuditAction(StrEnum):
    """What an audit event records."""

    RUN_QUEUED = "run_queued"
    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    RUN_FINISHED = "run_finished"
    RUN_CANCELLED = "run_cancelled"  # ended before it could end on its own (Parley stopped first)
    RUN_FAILED = "run_failed"  # ended by a failure outside the engine (a bug): its thread was told so
    # Left behind by a process that stopped: taken over (queued), ended honestly (running), or recorded as its
    # thread already shows it (a live process found it; `detail.outcome` says which).
    RUN_RECOVERED = "run_recovered"
    RESUME_REFUSED = "resume_refused"  # approved, but its saved state could not be resumed
    STOP_REQUESTED = "stop_requested"  # a person asked for the run to stop (a stop button, a command)
    STOP_REFUSED = "stop_refused"  # someone who may not stop the run tried to
    REVIEW_APPROVED = "review_approved"
    REVIEW_REJECTED = "review_rejected"
    REVIEW_EXPIRED = "review_expired"
    REVIEW_RETRIED = "review_retried"
    REVIEW_REFUSED = "review_refused"  # someone who may not decide tried to
    REVIEW_REMINDED = "review_reminded"
    PAYLOADS_PURGED = "payloads_purged"
