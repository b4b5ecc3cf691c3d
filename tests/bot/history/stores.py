"""The stores the history tests read: what `parley demo` and `parley ask` recorded in them, and how."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bot.cli.demo import DEMO_FILES
from tests.bot.history.parley_cli import ParleyCli, ok
from tests.bot.history.run_rows import RunRows

REFUSED_QUESTION = "What is the weather in Atlantis?"
REFUSED_ASKER = "bob"
# An unknown city graded L4 (policy): the run is refused and escalated to people — the escalation path.
REFUSING_CONFIG = """\
errors: {CITY_NOT_FOUND: {level: L4, retryable: false}}
tools:
  - builtin: get_weather
"""
REFUSING_SCRIPT = """\
plan:
  - {description: "Weather in Atlantis from get_weather", tool: get_weather, mentions: [Atlantis]}
decisions:
  - thought: "Look it up."
    tool: get_weather
    args: {city: Atlantis}
"""


@dataclass(frozen=True)
class RecordedRuns:
    """The runs `parley demo` (asked by cli:alice) and the refused `parley ask` (cli:bob) recorded."""

    demo_a: str  # solved, answered — knowledge lookups and the calculator, a recovered wrong turn
    demo_b: str  # degraded, gave_up — a 503 outage
    weather: str  # solved, answered — 上海/北京, a rejected first final, Done ticks, critique rounds
    demo_a_8b: str  # solved, answered — demo A's bare "564 million USD", cited by Parley
    refused: str  # refused by the back-end (policy_violation), so awaiting_review — an escalation

    @property
    def ids(self) -> list[str]:
        return [self.demo_a, self.demo_b, self.weather, self.demo_a_8b, self.refused]


@dataclass(frozen=True)
class Store:
    backend: str
    parley: ParleyCli
    rows: RunRows
    recorded: RecordedRuns


def record_runs(parley: ParleyCli) -> RecordedRuns:
    ok(parley("db", "upgrade"))
    demo_ids = re.findall(r"· run: ([0-9a-f]{32})$", ok(parley("demo")), flags=re.MULTILINE)
    assert len(demo_ids) == len(DEMO_FILES), demo_ids
    by_file = dict(zip(DEMO_FILES, demo_ids, strict=True))
    parley.write("refusing.yaml", REFUSING_CONFIG)
    parley.write("atlantis.yaml", REFUSING_SCRIPT)
    asked = ok(
        parley(
            *("ask", REFUSED_QUESTION, "--json", "--quiet", "--replay", "atlantis.yaml", "--config", "refusing.yaml"),
            user=REFUSED_ASKER,
        )
    )
    refused = json.loads(asked)
    # The back-end refused (L4): the run waits for a reviewer.
    assert (refused["status"], refused["termination_reason"]) == ("awaiting_review", "policy_violation")
    return RecordedRuns(
        demo_a=by_file["demo_a.yaml"],
        demo_b=by_file["demo_b.yaml"],
        weather=by_file["weather.yaml"],
        demo_a_8b=by_file["demo_a_8b.yaml"],
        refused=refused["run_id"],
    )


@dataclass(frozen=True)
class SessionStores:
    sqlite_template: Path
    sqlite_runs: RecordedRuns
    postgres_url: str
    postgres_runs: RecordedRuns
