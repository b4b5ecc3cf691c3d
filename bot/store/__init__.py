"""The store: every run, step, verdict and termination, in PostgreSQL (SQLite embedded).

The one place for SQL and audit rows. What leaves it is typed records (`bot.store.records`), never ORM rows.
"""

from bot.store.database import Database, check_reachable, connect, mask
from bot.store.errors import (
    AmbiguousRun,
    BadCursor,
    RunNotFound,
    SchemaOutOfDate,
    StoreBusy,
    StoreError,
    StoreUnavailable,
)
from bot.store.migrate import ensure_current
from bot.store.pins import StorePins
from bot.store.recorder import StoreRecorder
from bot.store.records import (
    Ask,
    Conversation,
    Escalated,
    RunOrigin,
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
)
from bot.store.vocabulary import (
    AuditAction,
    Decision,
    EscalationKind,
    EscalationStatus,
    FeedbackVerdict,
    RunSource,
    VerdictKind,
    VerdictStage,
)

__all__ = [
    "AmbiguousRun",
    "Ask",
    "AuditAction",
    "BadCursor",
    "Conversation",
    "Database",
    "Decision",
    "Escalated",
    "EscalationKind",
    "EscalationStatus",
    "FeedbackVerdict",
    "RunNotFound",
    "RunOrigin",
    "RunSource",
    "RunSummary",
    "SchemaOutOfDate",
    "Settled",
    "ShownEnd",
    "StoreBusy",
    "StoreError",
    "StorePins",
    "StoreRecorder",
    "StoreUnavailable",
    "StoredAuditEvent",
    "StoredEscalation",
    "StoredFeedback",
    "StoredRun",
    "StoredStep",
    "StoredToolCall",
    "StoredTrace",
    "StoredVerdict",
    "VerdictKind",
    "VerdictStage",
    "check_reachable",
    "connect",
    "ensure_current",
    "mask",
    "open_store",
]


async def open_store(url: str | None, *, pool_size: int = 10) -> Database:
    """Connect, check the database answers and its schema is current; the embedded default is created."""
    db = connect(url, pool_size=pool_size)
    try:
        await check_reachable(db)
        await ensure_current(db, create_if_empty=url is None)
    except BaseException:
        await db.aclose()
        raise
    return db
