"""Home, `/parley` and the reviewer message name a run's outcome alike.

One real run of each kind of end is recorded (engine → StoreRecorder → PostgreSQL); each view reads it back
as a StoredRun and branches on its RunResult.outcome, which the engine decided once. Home and `/parley` show
it under the run; the reviewer message is named by it — only runs that went to people have one.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from agent import EscalationKind, OutcomeKind, RunResult
from bot.core import Decision, History, ReviewConfig
from bot.slack.blocks import SlackMessage, outcome_line
from bot.slack.commands import ParleyCommand
from bot.slack.gateway import SlackGateway
from bot.slack.home import HomePages, HomeTab
from bot.slack.review.blocks import RETRY, review_message
from bot.slack.review.reviewers import Reviewers
from bot.store import Conversation, Database, RunOrigin
from bot.store.escalations import current_escalation, settle
from bot.wording import InReview
from tests.bot.slack.seen import block_texts
from tests.bot.store.outcomes import RUNS
from tests.bot.store.recording import record
from tests.fakes.slack_events import ASKER, CHANNEL

REVIEWER = "U0REVIEWER"
REVIEWERS = ReviewConfig(reviewers=(REVIEWER,))
# The kind of escalation each kind of end that goes to people has.
ESCALATED_KINDS = {
    OutcomeKind.HELD: EscalationKind.HELD_ACTION,
    OutcomeKind.REFUSED: EscalationKind.POLICY,
    OutcomeKind.ESCALATED: EscalationKind.EXHAUSTED,
}


async def recorded(db: Database) -> dict[OutcomeKind, RunResult]:
    """One run of each kind, asked by ASKER in a Slack thread of its own."""
    results = {}
    for n, (kind, make) in enumerate(RUNS.items()):
        agent, question = make()
        origin = RunOrigin("slack", ASKER, Conversation("T0TEAM", CHANNEL, f"17000000{n}.0001"))
        results[kind], _ = await record(agent, db, question, origin=origin)
        assert results[kind].outcome is kind  # the scenario
    return results


def entries(blocks: list[dict[str, Any]], run_id: str) -> list[str]:
    """The texts of the blocks that show the run `run_id` (a list entry names its run id)."""
    return [text for text in block_texts(blocks) if f"run `{run_id[:12]}`" in text]


def named(text: str) -> list[OutcomeKind]:
    """The outcomes a text shows (Home and `/parley` write one under a run that ended)."""
    return [kind for kind in OutcomeKind if outcome_line(kind) in text]


def everything(messages: list[SlackMessage]) -> str:
    return "\n".join(text for message in messages for text in block_texts(message.blocks))


async def test_home_parley_and_the_reviewer_message_agree_on_each_outcome(db: Database) -> None:
    live = await recorded(db)
    reviewers = Reviewers(REVIEWERS)
    home = HomeTab(History(db), reviewers, SlackGateway(AsyncWebClient()))  # views only: nothing is sent
    command = ParleyCommand(History(db), reviewers)
    mine = (await home.view(ASKER, HomePages()))["blocks"]
    reviewers_home = (await home.view(REVIEWER, HomePages()))["blocks"]  # "Recent terminations" too
    [listed] = await command.answer(ASKER, "runs")
    [everyones] = await command.answer(REVIEWER, "runs")

    for kind, result in live.items():
        shown_in = {
            "Home, your questions": entries(mine, result.run_id),
            "Home, a reviewer's": entries(reviewers_home, result.run_id),
            "/parley runs": entries(listed.blocks, result.run_id),
            "/parley runs, a reviewer's": entries(everyones.blocks, result.run_id),
            "/parley show": [everything(await command.answer(ASKER, f"show {result.run_id[:8]}"))],
        }
        for where, texts in shown_in.items():
            assert texts, f"{kind}: the run is not in {where}"
            assert all(named(text) == [kind] for text in texts), (kind, where, texts)

        escalated = await current_escalation(db, result.run_id)
        if kind not in ESCALATED_KINDS:
            assert escalated is None  # nothing for reviewers: no reviewer message
            continue
        assert escalated is not None and escalated.as_escalated.outcome is kind
        message = review_message(escalated, None)
        assert message.blocks[0]["text"]["text"] == InReview.TITLE[ESCALATED_KINDS[kind]]
        actions = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
        assert (RETRY in actions) is (kind is OutcomeKind.ESCALATED)  # only recovery that ran out is retried
        assert ("*Draft answer*" in everything([message])) is (kind is not OutcomeKind.HELD)


async def test_a_decision_changes_the_outcome_everywhere_but_why_the_run_went_to_review(db: Database) -> None:
    live = await recorded(db)
    run_id = live[OutcomeKind.ESCALATED].run_id
    await settle(db, run_id, Decision.REJECTED, actor=f"slack:{REVIEWER}", reason="Not this quarter.")
    reviewers = Reviewers(REVIEWERS)

    home = (await HomeTab(History(db), reviewers, SlackGateway(AsyncWebClient())).view(ASKER, HomePages()))["blocks"]
    shown = everything(await ParleyCommand(History(db), reviewers).answer(ASKER, f"show {run_id}"))
    escalated = await current_escalation(db, run_id)
    assert escalated is not None
    decided = review_message(escalated, None, decided=True)

    # Rejected by a reviewer: refused, in Home and in /parley alike.
    assert [named(text) for text in entries(home, run_id)] == [[OutcomeKind.REFUSED]]
    assert named(shown) == [OutcomeKind.REFUSED]
    # The reviewer message still says why it came to them, and now how it was decided.
    assert decided.blocks[0]["text"]["text"] == InReview.TITLE[EscalationKind.EXHAUSTED]
    assert f"Rejected by <@{REVIEWER}>" in everything([decided])
