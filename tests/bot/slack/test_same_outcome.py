"""One replayed script, one outcome: what Slack stores, escalates and says is what `parley ask` does.

The seed's demo B (a search outage, the model gives up) is replayed twice through the run service: once as
`parley ask --replay` runs it (command-line origin, the log as notifier), once through a real Slack mention
on the bot's endpoint. With `review.escalate_on: [gave_up]` both runs must end `awaiting_review` with the same
escalation, the same answer, and the same wording where people read it. (tests/bot/test_cli.py checks the
same script through `parley ask`, `parley demo` and `parley review list` as processes.)
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import select

from agent import OutcomeKind, ReplayBrain, RunResult
from bot.assembly import build_runtime, open_agent
from bot.cli.demo import Demo
from bot.cli.render import render_result
from bot.config_file import LoadedConfig, defaults_dir, load_config
from bot.core import LogNotifier, RunService
from bot.store import RunOrigin
from bot.store.models import EscalationRecord, Run
from tests.bot.slack.harness import UPDATE_INTERVAL_S, RunningBot, serve, settings_for
from tests.bot.slack.seen import answer_in, shown
from tests.fakes.slack_events import CHANNEL, app_mention

REVIEW_CHANNEL = "C0REVIEWS"
DEMO_B = defaults_dir() / "demos" / "demo_b.yaml"


def escalating_config(tmp_path: Path) -> LoadedConfig:
    """The shipped configuration (with its error table beside it), plus `review.escalate_on: [gave_up]`."""
    config = shutil.copytree(defaults_dir(), tmp_path / "config")
    path = config / "parley.yaml"
    shipped = path.read_text(encoding="utf-8")
    path.write_text(
        shipped + f"\nreview:\n  escalate_on: [gave_up]\n  channel: {REVIEW_CHANNEL}\n  reviewers: [U0REVIEWER]\n",
        encoding="utf-8",
    )
    return load_config(path)


@contextlib.asynccontextmanager
async def slack_bot(db, slack_api, loaded: LoadedConfig, demo: Demo) -> AsyncIterator[RunningBot]:
    settings = settings_for(slack_api)
    brain = ReplayBrain(demo.script, name="replay:demo_b.yaml")
    async with open_agent(settings, loaded, brain, tools=demo.tools) as agent:
        bot = build_runtime(settings, db, agent, update_interval_s=UPDATE_INTERVAL_S, review=loaded.review)
        async with serve(bot) as url:
            yield RunningBot(url, bot, slack_api)


async def asked_on_the_command_line(db, slack_api, loaded: LoadedConfig, demo: Demo) -> RunResult:
    """As `parley ask --replay config/demos/demo_b.yaml QUESTION` runs it."""
    brain = ReplayBrain(demo.script, name="replay:demo_b.yaml")
    async with open_agent(settings_for(slack_api), loaded, brain, tools=demo.tools) as agent:
        return await RunService(db, LogNotifier(), agent).ask(demo.question, RunOrigin("cli", "cli:carol"))


async def test_one_replayed_script_ends_the_same_way_in_slack_and_on_the_command_line(
    db, slack_api, tmp_path: Path
) -> None:
    loaded = escalating_config(tmp_path)
    demo = Demo.load(DEMO_B)

    cli_result = await asked_on_the_command_line(db, slack_api, loaded, demo)
    async with slack_bot(db, slack_api, loaded, demo) as bot:
        body = app_mention(demo.question)
        assert (await bot.post(body)).status_code == 200
        thread = await answer_in(slack_api, CHANNEL, body["event"]["ts"])
        reviewers = await slack_api.wait_for_async(
            lambda: slack_api.messages_in(REVIEW_CHANNEL), what="the escalation in the reviewer channel"
        )

    async with db.sessions() as session:
        runs = {run.source: run for run in (await session.scalars(select(Run))).all()}
        escalations = {
            runs_by_id.source: esc
            for esc, runs_by_id in (
                await session.execute(select(EscalationRecord, Run).join(Run, Run.id == EscalationRecord.run_id))
            ).all()
        }
    cli, slack = runs["cli"], runs["slack"]
    assert cli_result.outcome is OutcomeKind.ESCALATED
    assert (
        (cli.status, cli.termination_reason)
        == (slack.status, slack.termination_reason)
        == (
            "awaiting_review",
            "gave_up",
        )
    )
    assert cli.answer == slack.answer == cli_result.answer
    same = ("kind", "reason", "level", "message", "draft_answer")
    assert [getattr(escalations["cli"], f) for f in same] == [getattr(escalations["slack"], f) for f in same]
    # Where people read it: the terminal and the thread both say it is partial and waits for a person.
    assert "⚠ PARTIAL ANSWER (awaiting review: gave_up)" in render_result(cli_result)
    said = "\n".join(shown(message) for message in thread)
    assert "A person will look at this" in said
    why = escalations["cli"].message
    assert why[:60] in said and why[:60] in render_result(cli_result)
    assert len(reviewers) >= 1 and "Review needed" in reviewers[0].get("text", "")
