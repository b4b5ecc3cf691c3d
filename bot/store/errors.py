"""What the store raises: its own exceptions, and the one mapping of a failing database onto them.

A database that cannot be used (refused, cut, timed out, shut down, every pooled connection busy) leaves the
store as `StoreUnavailable` — mapped once, where SQLAlchemy's and the drivers' exceptions enter (the store's
sessions and connections, `bot.store.database`), so no caller catches SQLAlchemy, asyncpg or OSError. What
is not an outage (a constraint the database refused, a statement that is wrong) is a bug and passes unchanged.

Messages name the database (password masked) and the reason, never a command or a flag: front ends word
their own refusals (`parley runs list --cursor …`, `/parley show …`) from the exception's fields.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# PostgreSQL SQLSTATE classes that mean "this database cannot be used now", not "this statement is wrong":
# connection exception, invalid authorization, no such database, insufficient resources (too many
# connections, disk full), operator intervention (shutdown, starting up, statement timeout), system error.
UNAVAILABLE_SQLSTATES = frozenset({"08", "28", "3D", "53", "57", "58"})
REASON_CHARS = 200


class StoreError(Exception):
    """Everything the store raises on purpose; `str()` is one line a person can read."""


class StoreUnavailable(StoreError):
    """The database cannot be used now: unreachable, cut off, timed out, refusing connections."""


class StoreBusy(StoreUnavailable):
    """Every pooled connection stayed in use for the pool's timeout: a burst (`patiently` waits it out)."""


class SchemaOutOfDate(StoreError):
    """The schema is not at the newest migration; the message names the command to run."""


class RunNotFound(StoreError):
    """No run has the id `wanted` (or, for a prefix, starts with it); `too_short` when the prefix was too short
    to be searched (`min_prefix` characters at least)."""

    def __init__(self, wanted: str, *, too_short: bool = False, min_prefix: int = 0) -> None:
        self.wanted = wanted
        self.too_short = too_short
        self.min_prefix = min_prefix
        hint = f" (give the whole id or at least {min_prefix} characters)" if too_short else ""
        super().__init__(f"no run {wanted!r}{hint}")


class AmbiguousRun(StoreError):
    """The prefix `wanted` starts more than one run's id."""

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted
        super().__init__(f"{wanted!r} names more than one run; give more characters")


class BadCursor(StoreError):
    """`cursor` is not a position the store handed out (mistyped, cut, or made up)."""

    def __init__(self, cursor: str) -> None:
        self.cursor = cursor
        super().__init__(f"{cursor!r} is not a cursor of a page of runs")


def as_unavailable(exc: BaseException, where: str) -> StoreUnavailable | None:
    """The store's exception for `exc` raised while using the database at `where`; None when `exc` is no outage."""
    if isinstance(exc, PoolTimeout):
        return StoreBusy(f"every connection to the database at {where} is in use: {_reason(exc)}")
    if isinstance(exc, OSError | DisconnectionError | OperationalError | InterfaceError) or (
        isinstance(exc, DBAPIError) and (exc.connection_invalidated or _sqlstate_class(exc) in UNAVAILABLE_SQLSTATES)
    ):
        return StoreUnavailable(f"cannot reach the database at {where}: {_reason(exc)}")
    return None


@contextlib.asynccontextmanager
async def translated(where: str) -> AsyncIterator[None]:
    """Inside: an outage of the database at `where` leaves as `StoreUnavailable`; anything else unchanged."""
    try:
        yield
    except Exception as exc:
        mapped = as_unavailable(exc, where)
        if mapped is None:
            raise
        raise mapped from exc


def _sqlstate_class(exc: DBAPIError) -> str:
    state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return state[:2] if isinstance(state, str) else ""


def _reason(exc: BaseException) -> str:
    reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:REASON_CHARS]
    return reason or type(exc).__name__
