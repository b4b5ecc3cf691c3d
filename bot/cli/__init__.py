"""`parley`: the command line. One module per command group, each adding its parser and its handler
(`set_defaults(handler=…)`); this module reads the settings once, runs the handler, and turns what it refuses
into one line and an exit status.

Only the module of the command given is imported: each starts in its own process, and `parley runs list` has no
use for the engine, Slack's SDKs or the web server (what `parley serve` loads). `parley --help`, or a command
that is not one, imports them all to list them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from agent import ConfigError, InvalidQuestion
from bot.cli.usage import UsageError
from bot.settings import Settings
from bot.store import StoreError

EXIT_OK = 0
EXIT_USAGE = 2  # a configuration, a command line or a question that cannot be used, with a one-line reason
EXIT_INTERRUPTED = 130


# Each command → the module of bot.cli that adds its parser and handler, in the order `parley --help` lists them.
COMMANDS = {
    "ask": "ask",
    "demo": "demo",
    "serve": "serve",
    "db": "db",
    "runs": "runs",
    "review": "review",
    "eval": "evaluation",
    "tools": "tools",
    "mcp": "tools",
}


def parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv` (default: every command's, as for `--help`): the given command's alone if it is one."""
    top = argparse.ArgumentParser(prog="parley", description="Parley: answers backed by tools, or honest.")
    sub = top.add_subparsers(dest="command", required=True)
    given = COMMANDS.get(argv[0]) if argv else None
    for module in [given] if given else dict.fromkeys(COMMANDS.values()):
        importlib.import_module(f"{__name__}.{module}").add_parser(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    args = parser(argv).parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="parley: %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
        return asyncio.run(args.handler(args, settings))
    except (UsageError, ConfigError, InvalidQuestion, StoreError) as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        print(f"parley: configuration error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("parley: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `parley runs export … | head`: the reader left; that is not an error
        sys.stderr.close()
        return EXIT_OK
