"""`parley ask QUESTION`: one question end to end, through the same run service and store as Slack."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent import Recorder, check_question
from bot.assembly import build_brain, open_agent
from bot.cli.progress import ConsoleProgress
from bot.cli.render import render_result
from bot.config_file import load_config
from bot.core import LogNotifier, RunOrigin, RunService, RunSource
from bot.settings import Settings
from bot.store import StorePins, open_store

EXIT_OK = 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    ask = sub.add_parser("ask", help="run one question end to end (recorded in the store)")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    ask.add_argument("--config", type=Path, help="YAML configuration (default: PARLEY_CONFIG or config/parley.yaml)")
    ask.add_argument("--replay", type=Path, help="play back a recorded script instead of calling an LLM")
    ask.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")
    ask.set_defaults(handler=run)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    check_question(args.question, loaded.agent.limits)
    brain = build_brain(settings, loaded.agent, replay=args.replay, question=args.question)
    db = await open_store(settings.database_url)
    try:
        watchers: list[Recorder] = [] if args.quiet else [ConsoleProgress(sys.stderr)]
        async with open_agent(settings, loaded, brain, pins=StorePins(db)) as agent:
            # The reviewers hear of an escalation from the `announce` job of `parley serve`.
            service = RunService(db, LogNotifier(), agent)
            origin = RunOrigin(RunSource.CLI, settings.cli_user())
            result = await service.ask(args.question, origin, watchers=watchers)
    finally:
        await db.aclose()
    print(result.model_dump_json(indent=2) if args.json else render_result(result))
    return EXIT_OK
