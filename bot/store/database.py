"""Database: the URL people write → an async engine with the right driver, reachable and up to date.

Every way into the database goes through here — `db.sessions()`, `db.connection()`, `db.transaction()` —
and each leaves a database outage as `StoreUnavailable` (`bot.store.errors`), never as SQLAlchemy's,
asyncpg's or the socket's own exception.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

import platformdirs
from sqlalchemy import event, func
from sqlalchemy.engine import URL, CursorResult, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.sql import Executable

from agent import ConfigError
from bot.store.errors import StoreBusy, as_unavailable, translated

log = logging.getLogger(__name__)
T = TypeVar("T")

CONNECT_TIMEOUT_S = 5.0
MAX_OVERFLOW = 10
# Every pooled connection busy (a burst) is waiting, not an outage: how long before it counts as one.
BUSY_PATIENCE_S = 60.0
DRIVERS = {"postgresql": "postgresql+asyncpg", "postgres": "postgresql+asyncpg", "sqlite": "sqlite+aiosqlite"}


def default_url() -> str:
    """The embedded default: a SQLite file in the user's data directory."""
    directory = Path(platformdirs.user_data_dir("parley", appauthor=False))
    return f"sqlite+aiosqlite:///{directory / 'parley.db'}"


def normalise_url(raw: str) -> URL:
    """`postgresql://user@host/db` → asyncpg; `sqlite:///path` → aiosqlite; explicit drivers are kept."""
    try:
        url = make_url(raw.strip())
    except ArgumentError:
        raise ConfigError(f"PARLEY_DATABASE_URL is not a database URL: {mask(raw)}") from None
    backend = url.get_backend_name()
    if backend not in ("postgresql", "postgres", "sqlite"):
        raise ConfigError(f"PARLEY_DATABASE_URL must be a postgresql:// or sqlite:// URL (got {backend}://)")
    if "+" not in url.drivername:
        url = url.set(drivername=DRIVERS[url.drivername])
    elif url.drivername == "postgresql+psycopg2":
        url = url.set(drivername="postgresql+asyncpg")
    return url


def mask(url: str | URL) -> str:
    try:
        parsed = url if isinstance(url, URL) else make_url(url)
    except ArgumentError:
        return "<unparsable URL>"
    return parsed.render_as_string(hide_password=True)


class StoreSession(AsyncSession):
    """The store's ORM session: `async with db.sessions() as session:` leaves a database outage (in the block,
    at its commit, or at its close) as `StoreUnavailable`; anything else (a refused constraint, a bug) as it was.
    """

    async def __aexit__(
        self, type_: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        where = mask(self.bind.url) if isinstance(self.bind, AsyncEngine) else "the database"
        try:
            await super().__aexit__(type_, value, traceback)
        except Exception as closing:
            if value is None:  # else the block's own failure is the one to report
                mapped = as_unavailable(closing, where)
                if mapped is None:
                    raise
                raise mapped from closing
        if isinstance(value, Exception) and (mapped := as_unavailable(value, where)) is not None:
            raise mapped from value


@dataclass
class Database:
    """One async engine and its session factory, for the life of the process."""

    url: URL
    engine: AsyncEngine
    sessions: async_sessionmaker[StoreSession]

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    @property
    def shown_url(self) -> str:
        return mask(self.url)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        """A Core connection (no transaction begun), its outages mapped like a session's."""
        async with translated(self.shown_url), self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A Core connection in a transaction, committed at the end; its outages mapped like a session's."""
        async with translated(self.shown_url), self.engine.begin() as conn:
            yield conn

    async def fill_pool(self) -> None:
        """Open the pool's connections now: a burst would otherwise open them one by one, each a connection
        set-up in the middle of its requests. Nothing to do for SQLite; an outage is `StoreUnavailable`."""
        if self.is_sqlite:
            return
        size = getattr(self.engine.pool, "size", lambda: 0)()
        async with AsyncExitStack() as held:  # all held at once, so that each is a new one; then all returned
            opened = await asyncio.gather(
                *(held.enter_async_context(self.connection()) for _ in range(size)), return_exceptions=True
            )
        failed = next((outcome for outcome in opened if isinstance(outcome, BaseException)), None)
        if failed is not None:
            raise failed

    async def aclose(self) -> None:
        await self.engine.dispose()


def connect(raw_url: str | None = None, *, pool_size: int = 10, pool_timeout_s: float = CONNECT_TIMEOUT_S) -> Database:
    """Build the engine (no connection yet). SQLite files get their directory and sane pragmas."""
    url = normalise_url(raw_url) if raw_url else normalise_url(default_url())
    options: dict = {"pool_pre_ping": True}
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        options["connect_args"] = {"timeout": 30}
    else:
        # At most pool_size + 10 connections: PostgreSQL's default max_connections (100) stays clear of it.
        options.update(pool_size=pool_size, max_overflow=min(pool_size, MAX_OVERFLOW), pool_timeout=pool_timeout_s)
        options["connect_args"] = {"timeout": CONNECT_TIMEOUT_S}
    engine = create_async_engine(url, **options)
    if url.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return Database(url, engine, async_sessionmaker(engine, class_=StoreSession, expire_on_commit=False))


async def patiently(work: Callable[[], Awaitable[T]], *, patience_s: float = BUSY_PATIENCE_S) -> T:
    """`work()`, tried again while the pool has no free connection (each try waits the pool timeout).

    A database that cannot be reached fails at once (`StoreUnavailable`); only a busy pool (`StoreBusy`) is
    waited for, up to `patience_s`, after which its `StoreBusy` is raised like any other outage.
    """
    deadline = asyncio.get_running_loop().time() + patience_s
    while True:
        try:
            return await work()
        except StoreBusy:
            if asyncio.get_running_loop().time() >= deadline:
                raise
            log.info("waiting for a database connection (every pooled connection is busy)")


async def check_reachable(db: Database) -> None:
    """One round trip, bounded in time; `StoreUnavailable` with a one-line reason otherwise."""
    async with translated(db.shown_url), asyncio.timeout(CONNECT_TIMEOUT_S * 2), db.connection() as conn:
        await conn.exec_driver_sql("SELECT 1")


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def moment(db: Database, now: datetime | None) -> Any:
    """A time to write or compare in SQL: `now` when given (tests), else the database's clock (`now()`), which
    every replica shares whatever its own clock says (SQLite, one machine's store, takes this process's)."""
    if now is not None:
        return now
    return datetime.now(UTC) if db.is_sqlite else func.now()


async def rows_changed(session: AsyncSession, statement: Executable, values: dict[str, Any] | None = None) -> int:
    """Run an UPDATE or DELETE (with its parameters' `values`); how many rows it changed (a conditional UPDATE
    claims when this is 1)."""
    result = cast(CursorResult[Any], await session.execute(statement, values))
    return result.rowcount
