"""`parley`: the command line. One module per command group, each adding its parser and its handler
(`set_defaults(handler=…)`); this module reads the settings once, runs the handler, and turns what it refuses
into one line and an exit status."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from agent import ConfigError, InvalidQuestion
from bot.cli import ask, db, demo, evaluation, review, runs, serve, tools
from bot.cli.usage import UsageError
from bot.settings import Settings
from bot.store import StoreError

EXIT_OK = 0
EXIT_USAGE = 2  # a configuration, a command line or a question that cannot be used, with a one-line reason
EXIT_INTERRUPTED = 130


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="parley", description="Parley: answers backed by tools, or honest.")
    sub = top.add_subparsers(dest="command", required=True)
    for command in (ask, demo, serve, db, runs, review, evaluation, tools):
        command.add_parser(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
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
