"""`parley`: the command line. The only module that prints for people (progress goes to stderr)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agent import ConfigError, InvalidQuestion, Recorder, check_question
from bot.assembly import build_brain, build_slack_bot, open_agent
from bot.cli.review import add_review_commands, run_review_command
from bot.config_file import LoadedConfig, load_config
from bot.demo import run_demos
from bot.history import add_runs_commands, run_runs_command
from bot.notifier import LogNotifier
from bot.progress import ConsoleProgress
from bot.render import render_result
from bot.runs import RunService
from bot.settings import Settings
from bot.slack.serving import serve_http, serve_socket_mode
from bot.spans import exported_spans
from bot.store import RunOrigin, RunSource, StoreError, check_reachable, connect, open_store
from bot.store.migrate import current_revision, downgrade, head_revision, upgrade

# Each worker records its run; intake, replies, Home, commands and the timed jobs need a few more.
SERVE_EXTRA_CONNECTIONS = 6
EXIT_OK = 0
EXIT_CONFIG = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parley", description="Parley: answers backed by tools, or honest.")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="run one question end to end (recorded in the store)")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    ask.add_argument("--config", type=Path, help="YAML configuration (default: PARLEY_CONFIG or config/parley.yaml)")
    ask.add_argument("--replay", type=Path, help="play back a recorded script instead of calling an LLM")
    ask.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")

    demo = sub.add_parser("demo", help="replay the seeds' demos through the real tools and checks")
    demo.add_argument("--config", type=Path)

    serve = sub.add_parser("serve", help="run the Slack bot (HTTP on --port, or Socket Mode with SLACK_APP_TOKEN)")
    serve.add_argument("--port", type=int, help="HTTP port (default: PORT or 3000)")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    serve.add_argument("--config", type=Path)

    db = sub.add_parser("db", help="the database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="migrate to the newest schema (or REVISION)")
    up.add_argument("revision", nargs="?", default="head")
    down = db_sub.add_parser("downgrade", help="migrate back to REVISION (e.g. -1, or base)")
    down.add_argument("revision")
    db_sub.add_parser("current", help="show the schema revision")

    add_runs_commands(sub)
    add_review_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="parley: %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
        return asyncio.run(_dispatch(args, settings))
    except (ConfigError, InvalidQuestion, StoreError) as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        print(f"parley: configuration error: {message}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("parley: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `parley runs export … | head`: the reader left; that is not an error
        sys.stderr.close()
        return EXIT_OK


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "db":
        return await _db(args, settings)
    if args.command == "runs":
        db = await open_store(settings.database_url)
        try:
            return await run_runs_command(args, db, sys.stdout)
        finally:
            await db.aclose()
    loaded = load_config(args.config or settings.config)
    if args.command == "review":
        return await run_review_command(args, settings, loaded)
    if args.command == "ask":
        return await _ask(args, settings, loaded)
    if args.command == "serve":
        return await _serve(args, settings, loaded)
    return await _demo(settings, loaded)


async def _ask(args: argparse.Namespace, settings: Settings, loaded: LoadedConfig) -> int:
    check_question(args.question, loaded.agent.limits)
    brain = build_brain(settings, loaded.agent, replay=args.replay, question=args.question)
    db = await open_store(settings.database_url)
    try:
        watchers: list[Recorder] = [] if args.quiet else [ConsoleProgress(sys.stderr)]
        async with open_agent(settings, loaded, brain) as agent:
            # The reviewers hear of an escalation from the `announce` job of `parley serve`.
            runs = RunService(db, LogNotifier(), agent)
            result = await runs.ask(args.question, RunOrigin(RunSource.CLI, settings.cli_user()), watchers=watchers)
    finally:
        await db.aclose()
    print(result.model_dump_json(indent=2) if args.json else render_result(result))
    return EXIT_OK


async def _serve(args: argparse.Namespace, settings: Settings, loaded: LoadedConfig) -> int:
    problems = settings.slack_problems()
    if problems:
        raise ConfigError("cannot start the Slack bot: " + "; ".join(problems))
    brain = build_brain(settings, loaded.agent)
    db = await open_store(settings.database_url, pool_size=settings.workers + SERVE_EXTRA_CONNECTIONS)
    try:
        async with open_agent(settings, loaded, brain) as agent, exported_spans(settings.otel_endpoint) as tracer:
            bot = build_slack_bot(
                settings,
                db,
                agent,
                llm_url=settings.llm_base_url,
                review=loaded.review,
                run_jobs=True,
                tracer=tracer,
                assistant=loaded.assistant,
            )
            port = args.port or settings.port
            if settings.slack_app_token is not None:  # events over the WebSocket; still GET /healthz on the port
                await serve_socket_mode(bot, settings.slack_app_token.get_secret_value(), host=args.host, port=port)
            else:
                await serve_http(bot, host=args.host, port=port)
    finally:
        await db.aclose()
    return EXIT_OK


async def _demo(settings: Settings, loaded: LoadedConfig) -> int:
    db = await open_store(settings.database_url)
    try:
        await run_demos(settings, loaded, sys.stdout, db, RunOrigin(RunSource.CLI, settings.cli_user()))
    finally:
        await db.aclose()
    return EXIT_OK


async def _db(args: argparse.Namespace, settings: Settings) -> int:
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
