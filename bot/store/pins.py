"""MCP tool pins in the database: the engine's `PinStore`, shared by every replica and every `parley ask`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.store.database import Database
from bot.store.models import McpToolPin


class StorePins:
    """`agent.PinStore` over `mcp_tool_pins`. A first sighting never overwrites a pin (two replicas may list a
    server at once); only `trust` does."""

    def __init__(self, db: Database, *, actor: str = "parley") -> None:
        self._db = db
        self._actor = actor

    async def pinned(self, server: str) -> Mapping[str, str]:
        async with self._db.connection() as conn:
            rows = await conn.execute(select(McpToolPin.tool, McpToolPin.digest).where(McpToolPin.server == server))
            return {tool: digest for tool, digest in rows.all()}

    async def pin_new(self, server: str, digests: Mapping[str, str]) -> None:
        if not digests:
            return
        insert = sqlite_insert if self._db.is_sqlite else pg_insert
        now = datetime.now(UTC)
        rows = [
            {"server": server, "tool": tool, "digest": digest, "pinned_at": now} for tool, digest in digests.items()
        ]
        async with self._db.transaction() as conn:
            await conn.execute(insert(McpToolPin).values(rows).on_conflict_do_nothing())

    async def trust(self, server: str, digests: Mapping[str, str]) -> None:
        if not digests:
            return
        insert = sqlite_insert if self._db.is_sqlite else pg_insert
        now = datetime.now(UTC)
        rows = [
            {"server": server, "tool": tool, "digest": digest, "pinned_at": now, "trusted_by": self._actor}
            for tool, digest in digests.items()
        ]
        statement = insert(McpToolPin).values(rows)
        statement = statement.on_conflict_do_update(
            index_elements=["server", "tool"],
            set_={"digest": statement.excluded.digest, "pinned_at": now, "trusted_by": self._actor},
        )
        async with self._db.transaction() as conn:
            await conn.execute(statement)
