"""`parley demo`: the seeds' demonstrations, replayed through the real tools and checks."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import TypeAdapter, ValidationError

from agent import ConfigError, ReplayBrain, ReplayScript, RunResult, ToolEntry, exception_line
from bot.assembly import open_agent
from bot.cli.progress import ConsoleProgress
from bot.cli.render import render_result
from bot.config_file import LoadedConfig, defaults_dir, load_config
from bot.core import LogNotifier, RunOrigin, RunService, RunSource
from bot.settings import Settings
from bot.store import Database, open_store

DEMO_FILES = ("demo_a.yaml", "demo_b.yaml", "weather.yaml", "demo_a_8b.yaml")
_TOOLS = TypeAdapter(list[ToolEntry])


@dataclass(frozen=True)
class Demo:
    title: str
    question: str
    tools: list[Any]
    script: ReplayScript
    path: Path

    @classmethod
    def load(cls, path: Path) -> Demo:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            return cls(
                title=str(raw["title"]),
                question=str(raw["question"]),
                tools=_TOOLS.validate_python(raw.get("tools", [])),
                script=ReplayScript.model_validate(raw),
                path=path,
            )
        except (OSError, KeyError, TypeError, yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(f"demo {path}: {exception_line(exc)}") from None


def add_parser(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="replay the seeds' demos through the real tools and checks")
    demo.add_argument("--config", type=Path)
    demo.set_defaults(handler=run)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    db = await open_store(settings.database_url)
    try:
        await run_demos(settings, loaded, sys.stdout, db, RunOrigin(RunSource.CLI, settings.cli_user()))
    finally:
        await db.aclose()
    return 0


def demo_paths() -> list[Path]:
    return [defaults_dir() / "demos" / name for name in DEMO_FILES]


async def run_demos(
    settings: Settings, loaded: LoadedConfig, out: TextIO, db: Database, origin: RunOrigin
) -> list[RunResult]:
    """Each demo asked through the run service, as `parley ask` asks: recorded, escalated, rendered alike."""
    results = []
    for path in demo_paths():
        demo = Demo.load(path)
        print(f"\n=== {demo.title}\nQ: {demo.question}", file=out)
        brain = ReplayBrain(demo.script, name=f"replay:{path.name}")
        async with open_agent(settings, loaded, brain, tools=demo.tools) as agent:
            runs = RunService(db, LogNotifier(), agent)
            result = await runs.ask(demo.question, origin, watchers=[ConsoleProgress(out)])
        print("\n" + render_result(result), file=out)
        results.append(result)
    return results
