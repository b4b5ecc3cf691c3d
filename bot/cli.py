"""`parley`: the command line. The only module that prints for people (progress goes to stderr)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agent import ConfigError, FanoutRecorder, InvalidQuestion, MemoryRecorder
from bot.assembly import build_brain, open_agent
from bot.config_file import LoadedConfig, load_config
from bot.demo import run_demos
from bot.progress import ConsoleProgress
from bot.render import render_result
from bot.settings import Settings

EXIT_OK = 0
EXIT_CONFIG = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parley", description="Parley: answers backed by tools, or honest.")
    sub = parser.add_subparsers(dest="command", required=True)
    ask = sub.add_parser("ask", help="run one question end to end")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    ask.add_argument("--config", type=Path, help="YAML configuration (default: PARLEY_CONFIG or config/parley.yaml)")
    ask.add_argument("--replay", type=Path, help="play back a recorded script instead of calling an LLM")
    ask.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")
    demo = sub.add_parser("demo", help="replay the seeds' demos through the real tools and checks")
    demo.add_argument("--config", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="parley: %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
        loaded = load_config(args.config or settings.config)
        if args.command == "ask":
            return asyncio.run(_ask(args, settings, loaded))
        return asyncio.run(_demo(settings, loaded))
    except (ConfigError, InvalidQuestion) as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"parley: configuration error: {first['msg']}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("parley: interrupted", file=sys.stderr)
        return 130


async def _ask(args: argparse.Namespace, settings: Settings, loaded: LoadedConfig) -> int:
    brain = build_brain(settings, loaded.agent, replay=args.replay)
    recorders = [MemoryRecorder()] if args.quiet else [MemoryRecorder(), ConsoleProgress(sys.stderr)]
    async with open_agent(settings, loaded, brain, recorder=FanoutRecorder(*recorders)) as agent:
        agent.check_question(args.question)
        result = await agent.run(args.question)
    print(result.model_dump_json(indent=2) if args.json else render_result(result))
    return EXIT_OK


async def _demo(settings: Settings, loaded: LoadedConfig) -> int:
    await run_demos(settings, loaded, sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
