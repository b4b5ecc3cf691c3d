"""PostgreSQL databases of these tests: created through the `postgres` database under a unique name, dropped."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg

SERVER = "postgres@127.0.0.1:5432"
ADMIN_DSN = f"postgresql://{SERVER}/postgres"


def create_database(prefix: str) -> tuple[str, str]:
    """(name, the URL people give PARLEY_DATABASE_URL) of a new, empty database."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    return name, f"postgresql://{SERVER}/{name}"


def drop_database(name: str) -> None:
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _admin(statement: str) -> None:
    connection = await asyncpg.connect(ADMIN_DSN)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()
