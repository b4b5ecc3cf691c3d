"""The application core: the one service every lifecycle path of a run goes through, and the vocabulary front
ends speak with it.

`RunService` takes questions, claims and runs them (in its `RunPool` when a medium gives it `Replies`), ends and
delivers them, escalates, decides, retries, recovers and stops; `History` reads what was recorded. Front ends
(Slack, the command line, the timed jobs) only translate between their medium and these calls. What they are
given back are the store's records, re-exported here, so that no front end needs the store itself.
"""

from bot.core.config import JobsConfig, OwnershipConfig, ReviewConfig
from bot.core.history import History
from bot.core.notifier import LogNotifier, Notifier, Posted, tell
from bot.core.owner import RunOwner
from bot.core.pool import Replies, Reply, RunPool, Stop
from bot.core.resumable import HeldCallsChanged
from bot.core.service import (
    Claim,
    DecisionRefused,
    FeedbackNote,
    NotResumed,
    Retried,
    RunService,
    StopOutcome,
    Stopper,
    Stopping,
)
from bot.store import (
    AmbiguousRun,
    Ask,
    BadCursor,
    Conversation,
    Decision,
    Escalated,
    EscalationKind,
    EscalationStatus,
    FeedbackVerdict,
    RunNotFound,
    RunOrigin,
    RunSource,
    RunSummary,
    Settled,
    ShownEnd,
    StoredAuditEvent,
    StoredEscalation,
    StoredFeedback,
    StoredRun,
    StoredStep,
    StoredToolCall,
    StoredTrace,
    StoredVerdict,
    StoreError,
    StoreUnavailable,
    VerdictKind,
)
from bot.store.feedback import COMMENT_CHARS, FeedbackRefused, Recorded, Tally
from bot.store.lifecycle import CONCLUDED, DECISIONS, ENDED, HELD
from bot.store.queries import MIN_PREFIX, Page, RunFilter, decode_cursor, encode_cursor

__all__ = [
    "COMMENT_CHARS",
    "CONCLUDED",
    "DECISIONS",
    "ENDED",
    "HELD",
    "MIN_PREFIX",
    "AmbiguousRun",
    "Ask",
    "BadCursor",
    "Claim",
    "Conversation",
    "Decision",
    "DecisionRefused",
    "Escalated",
    "EscalationKind",
    "EscalationStatus",
    "FeedbackNote",
    "FeedbackRefused",
    "FeedbackVerdict",
    "HeldCallsChanged",
    "History",
    "JobsConfig",
    "LogNotifier",
    "NotResumed",
    "Notifier",
    "OwnershipConfig",
    "Page",
    "Posted",
    "Recorded",
    "Replies",
    "Reply",
    "Retried",
    "ReviewConfig",
    "RunFilter",
    "RunNotFound",
    "RunOrigin",
    "RunOwner",
    "RunPool",
    "RunService",
    "RunSource",
    "RunSummary",
    "Settled",
    "ShownEnd",
    "Stop",
    "StopOutcome",
    "Stopper",
    "Stopping",
    "StoreError",
    "StoreUnavailable",
    "StoredAuditEvent",
    "StoredEscalation",
    "StoredFeedback",
    "StoredRun",
    "StoredStep",
    "StoredToolCall",
    "StoredTrace",
    "StoredVerdict",
    "Tally",
    "VerdictKind",
    "decode_cursor",
    "encode_cursor",
    "tell",
]
