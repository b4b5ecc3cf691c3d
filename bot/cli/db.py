"""`parley db upgrade|downgrade|current`: the database schema (Alembic's migrations)."""

from __future__ import annotations

import argparse

from bot.settings import Settings
from bot.store import check_reachable, connect
from bot.store.migrate import current_revision, downgrade, head_revision, upgrade

EXIT_OK = 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser("db", help="the database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="migrate to the newest schema (or REVISION)")
    up.add_argument("revision", nargs="?", default="head")
    down = db_sub.add_parser("downgrade", help="migrate back to REVISION (e.g. -1, or base)")
    down.add_argument("revision")
    db_sub.add_parser("current", help="show the schema revision")
    db.set_defaults(handler=run)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    db = connect(settings.database_url)
    try:
        await check_reachable(db)
        if args.db_command == "upgrade":
            await upgrade(db, args.revision)
        elif args.db_command == "downgrade":
            await downgrade(db, args.revision)
        current = await current_revision(db)
        head = head_revision()
        state = "up to date" if current == head else f"newest is {head}: run `parley db upgrade`"
        print(f"{db.shown_url}: schema at {current or 'base (empty)'} ({state})")
    finally:
        await db.aclose()
    return EXIT_OK
