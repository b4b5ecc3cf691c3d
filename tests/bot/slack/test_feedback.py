"""Feedback on answers end to end: the 👍 / 👎 under an answer, clicked through signed `block_actions` to the
bot's endpoint; the "what was wrong?" form a 👎 opens, submitted through `view_submission`; PostgreSQL holds
the verdicts; the fake Slack Web API records what people see."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from bot.cli import main as parley_main
from bot.core import EscalationKind, ReviewConfig
from bot.slack.feedback_blocks import COMMENT_BLOCK, COMMENT_INPUT, COMMENT_MODAL
from bot.slack.review.blocks import APPROVE, REJECT, REJECT_MODAL
from bot.store import Database
from bot.store.feedback import COMMENT_CHARS
from bot.store.models import EscalationRecord, FeedbackRecord, Run
from bot.wording import InReview
from tests.bot.slack.harness import ByQuestion, RunningBot, calculation, mentioned_and_answered, running_bot
from tests.bot.slack.scrape import Scrape
from tests.bot.slack.seen import runs, shown
from tests.bot.slack.test_failures import database_behind
from tests.bot.slack.test_home_and_commands import command, open_home, section_under, text_of
from tests.bot.store.postgres import PG_HOST, PG_PORT
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import ASKER, CHANNEL, block_actions, feedback_click, view_submission
from tests.fakes.tcp_proxy import TcpProxy

QUESTION = "What is 47 times 12?"
OTHER = "U0COLLEAGUE"
REVIEW_CHANNEL = "C0REVIEWS"
REVIEWER = "U0REVIEWER"


def feedback_values(message: dict[str, Any]) -> dict[str, str]:
    """The values of the feedback buttons under a message: {"up": …, "down": …}."""
    [element] = [
        element
        for block in message.get("blocks") or []
        if block["type"] == "context_actions"
        for element in block["elements"]
        if element["type"] == "feedback_buttons"
    ]
    return {"up": element["positive_button"]["value"], "down": element["negative_button"]["value"]}


def answers_to(slack: FakeSlackApi) -> list[tuple[str, str]]:
    """What the bot answered clicks with, in order: ("ephemeral", text) or ("form", the view as sent)."""
    return [
        ("form", str(call.params.get("view"))) if call.method == "views.open" else ("ephemeral", call.params["text"])
        for call in slack.calls()
        if call.method in ("chat.postEphemeral", "views.open")
    ]


async def click(bot: RunningBot, value: str, user: str = ASKER, **options: Any) -> tuple[str, str]:
    """Click a feedback button; what the bot answered the clicker (privately, or with the form)."""
    before = len(answers_to(bot.slack))
    response = await bot.post(feedback_click(value, user=user, **options))
    assert response.status_code == 200, response.text
    return await bot.slack.wait_for_async(
        lambda: (seen := answers_to(bot.slack)) and len(seen) > before and seen[before],
        what="the bot's answer to a feedback click",
    )


async def given(db: Database) -> list[tuple[str, str, bool, str | None]]:
    async with db.sessions() as session:
        rows = await session.scalars(select(FeedbackRecord).order_by(FeedbackRecord.id))
        return [(row.user, row.verdict.value, row.by_asker, row.comment) for row in rows]


async def escalations(db: Database) -> list[EscalationRecord]:
    async with db.sessions() as session:
        return list((await session.scalars(select(EscalationRecord).order_by(EscalationRecord.id))).all())


def comment_form(user: str, run_id: str, text: str | None) -> bytes:
    values = {COMMENT_BLOCK: {COMMENT_INPUT: {"type": "plain_text_input", "value": text}}}
    return view_submission(COMMENT_MODAL, values, user=user, private_metadata=run_id)


async def test_an_answer_carries_feedback_buttons_and_each_person_has_one_verdict_they_can_change(
    db, slack_api, llm_server
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        [run] = await runs(db)
        buttons = feedback_values(answer)
        assert buttons == {"up": f"up:{run.id}", "down": f"down:{run.id}"}
        assert answer["blocks"][-1]["type"] == "context_actions"  # at the end of the answer, under its status

        first = await click(bot, buttons["up"], message_ts=answer["ts"])
        again = await click(bot, buttons["up"], message_ts=answer["ts"])  # a double click: still one verdict
        assert await given(db) == [(ASKER, "up", True, None)]
        changed = await click(bot, buttons["down"], message_ts=answer["ts"])  # switched: the form opens
        theirs = await click(bot, buttons["up"], user=OTHER, message_ts=answer["ts"])

    assert first == ("ephemeral", f"Thanks — your 👍 on run `{run.id[:12]}` is recorded.")
    assert again == first
    assert changed[0] == "form" and COMMENT_MODAL in changed[1]
    assert theirs == ("ephemeral", f"Thanks — your 👍 on run `{run.id[:12]}` is recorded.")
    # The asker's verdict changed in place; a colleague's is kept as not the asker's.
    assert await given(db) == [(ASKER, "down", True, None), (OTHER, "up", False, None)]
    [ephemeral] = [c for c in slack_api.calls("chat.postEphemeral") if c.params["user"] == OTHER]
    assert ephemeral.params["channel"] == CHANNEL


async def test_a_thumbs_down_opens_the_form_and_its_note_is_kept_and_closing_it_keeps_the_verdict(
    db, slack_api, llm_server
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        [run] = await runs(db)
        down = feedback_values(answer)["down"]
        assert (await click(bot, down, message_ts=answer["ts"]))[0] == "form"
        assert (await click(bot, down, user=OTHER, message_ts=answer["ts"]))[0] == "form"

        [form, _] = slack_api.calls("views.open")
        view = form.params["view"]
        view = view if isinstance(view, dict) else json.loads(view)
        [field] = view["blocks"]
        assert field["optional"] is True and field["element"]["multiline"] is True
        assert field["element"]["max_length"] == COMMENT_CHARS and view["private_metadata"] == run.id

        note = "The product is right, but <!channel> & " + "x" * 5000
        submitted = await bot.post(comment_form(ASKER, run.id, note))
        skipped = await bot.post(comment_form(OTHER, run.id, None))  # sent empty: the 👎 stands without a note
        on_a_thumbs_up = await bot.post(comment_form("U0NOBODY", run.id, "I never clicked"))

    assert submitted.status_code == 200 and submitted.content in (b"", b"{}")
    assert skipped.status_code == 200
    assert on_a_thumbs_up.json()["response_action"] == "errors"
    [mine, theirs] = await given(db)
    assert mine[:3] == (ASKER, "down", True) and mine[3] == note[:COMMENT_CHARS]  # kept as written, cut to 3,000
    assert theirs == (OTHER, "down", False, None)


async def test_forged_or_unfinished_feedback_is_refused_privately_and_nothing_is_recorded(db, slack_api, llm_server):
    llm_server.respond_with(calculation("47 * 12", "564"))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        [run] = await runs(db)
        async with db.sessions() as session, session.begin():
            unfinished = Run(
                id="run-still-running", source="slack", asker=ASKER, question="?", status="running",
                created_at=run.created_at,
            )  # fmt: skip
            session.add(unfinished)
        garbage = await click(bot, "definitely not a value", message_ts=answer["ts"])
        sideways = await click(bot, f"sideways:{run.id}", message_ts=answer["ts"])
        unknown = await click(bot, "up:run-that-never-was", message_ts=answer["ts"])
        running = await click(bot, "down:run-still-running", message_ts=answer["ts"])
        forged_form = await bot.post(comment_form(ASKER, "x" * 500, "a note on nothing"))

    refused = "I can't record this feedback: it names no run I know."
    assert garbage == sideways == unknown == ("ephemeral", refused)
    assert running == ("ephemeral", "I can't record feedback on run `run-still-ru` yet: it has not finished.")
    assert forged_form.json()["response_action"] == "errors"
    assert await given(db) == []
    assert slack_api.calls("views.open") == []


async def test_a_thumbs_down_goes_to_the_reviewers_once_when_configured_and_their_reject_tells_the_thread(
    db, slack_api, llm_server
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    review = ReviewConfig(channel=REVIEW_CHANNEL, reviewers=(REVIEWER,), escalate_on_feedback=True)
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        [run] = await runs(db)
        down = feedback_values(answer)["down"]
        await click(bot, down, user=OTHER, message_ts=answer["ts"])
        posted = await slack_api.wait_for_async(
            lambda: slack_api.messages_in(REVIEW_CHANNEL), what="the reviewer message"
        )
        await click(bot, down, message_ts=answer["ts"])  # the asker agrees: still one escalation
        assert (await bot.post(comment_form(OTHER, run.id, "564 is right but the unit is missing"))).status_code == 200
        updated = await slack_api.wait_for_async(
            lambda: (
                "unit is missing" in shown(slack_api.messages_in(REVIEW_CHANNEL)[0])
                and slack_api.messages_in(REVIEW_CHANNEL)[0]
            ),
            what="the reviewer message with the note",
        )
        reject = next(
            element["value"]
            for block in updated["blocks"]
            if block["type"] == "actions"
            for element in block["elements"]
            if element["action_id"] == REJECT
        )
        clicked = block_actions(REJECT, value=reject, user=REVIEWER, channel=REVIEW_CHANNEL, message_ts=updated["ts"])
        assert (await bot.post(clicked)).status_code == 200
        await slack_api.wait_for_async(lambda: slack_api.calls("views.open"), what="the reject form")
        reason = {"reason": {"reason_input": {"type": "plain_text_input", "value": "Right number, wrong unit."}}}
        decided = await bot.post(view_submission(REJECT_MODAL, reason, user=REVIEWER, private_metadata=run.id))
        assert decided.status_code == 200
        told = await slack_api.wait_for_async(
            lambda: next(
                (m for m in slack_api.messages_in(CHANNEL, answer["thread_ts"]) if "wrong unit" in shown(m)), None
            ),
            what="the rejection in the asker's thread",
        )

    [escalation] = await escalations(db)
    assert (escalation.kind, escalation.reason, escalation.status) == ("feedback", "feedback", "rejected")
    assert escalation.draft_answer == run.answer
    # It reads as feedback on an answer that stood, not as a run Parley could not finish: nothing to run again.
    assert posted[0]["blocks"][0]["text"]["text"] == InReview.TITLE[EscalationKind.FEEDBACK]
    assert "could not finish" not in shown(posted[0])
    actions = [e["action_id"] for b in posted[0]["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == [APPROVE, REJECT]
    text = shown(posted[0])
    assert "👎" in text and OTHER in text and "not the asker" in text  # who sent it here, from feedback
    assert "unit is missing" in shown(updated)
    assert "Right number, wrong unit." in shown(told)
    [after] = await runs(db)
    assert after.status == "rejected"


async def test_a_thumbs_down_stays_out_of_the_reviewer_channel_unless_configured(db, slack_api, llm_server):
    llm_server.respond_with(calculation("47 * 12", "564"))
    review = ReviewConfig(channel=REVIEW_CHANNEL, reviewers=(REVIEWER,))
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        await click(bot, feedback_values(answer)["down"], message_ts=answer["ts"])

    assert await given(db) != []
    assert await escalations(db) == []
    assert slack_api.messages_in(REVIEW_CHANNEL) == []
    [run] = await runs(db)
    assert run.status == "solved"


async def test_metrics_count_the_verdicts_in_the_store(db, slack_api, llm_server):
    llm_server.respond_with(calculation("47 * 12", "564"))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        buttons = feedback_values(answer)
        await click(bot, buttons["up"], message_ts=answer["ts"])
        await click(bot, buttons["down"], user=OTHER, message_ts=answer["ts"])
        await click(bot, buttons["down"], user="U0THIRD", message_ts=answer["ts"])
        page = Scrape.parse((await bot.get("/metrics")).text)

    verdicts = [row[1] for row in await given(db)]
    assert page.value("parley_feedback_verdicts", verdict="up") == verdicts.count("up") == 1
    assert page.value("parley_feedback_verdicts", verdict="down") == verdicts.count("down") == 2


async def test_feedback_shows_in_parley_runs_show_home_and_the_command_line(
    db, slack_api, llm_server, slack_pg_url, monkeypatch, capsys
):
    later = "What is 6 times 7?"
    llm_server.respond_with(ByQuestion({QUESTION: calculation("47 * 12", "564"), later: calculation("6 * 7", "42")}))
    review = ReviewConfig(reviewers=(REVIEWER,))
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        await mentioned_and_answered(bot, later)
        judged = next(run for run in await runs(db) if run.question == QUESTION)
        buttons = feedback_values(answer)
        await click(bot, buttons["up"], message_ts=answer["ts"])
        await click(bot, buttons["down"], user=OTHER, message_ts=answer["ts"])
        assert (await bot.post(comment_form(OTHER, judged.id, "Missing the <b>unit</b>"))).status_code == 200

        listed = text_of(await command(bot, "runs"))
        shown_run = text_of(await command(bot, f"show {judged.id[:8]}"))
        home = section_under(await open_home(bot, REVIEWER), "Recent terminations")

    assert "👍 1 · 👎 1" in listed and listed.count("👍") == 1  # on the judged run's line only
    assert "*Feedback*" in shown_run and f"<@{OTHER}>" in shown_run and "not the asker" in shown_run
    assert "Missing the &lt;b&gt;unit&lt;/b&gt;" in shown_run  # a person's note is escaped
    assert "👍 1 · 👎 1" in home

    monkeypatch.setenv("PARLEY_DATABASE_URL", slack_pg_url)
    capsys.readouterr()
    assert await asyncio.to_thread(parley_main, ["runs", "list", "--feedback", "down"]) == 0
    down_list = capsys.readouterr().out
    assert await asyncio.to_thread(parley_main, ["runs", "list", "--feedback", "up", "--json"]) == 0
    up_list = json.loads(capsys.readouterr().out)
    assert await asyncio.to_thread(parley_main, ["runs", "show", judged.id]) == 0
    trace = capsys.readouterr().out

    assert [line.split()[0] for line in down_list.splitlines()[1:]] == [judged.id[:12]]
    assert "👍1·👎1" in down_list and later not in down_list
    assert [(r["run_id"], r["feedback"]) for r in up_list["runs"]] == [(judged.id, {"up": 1, "down": 1})]
    feedback = trace[trace.index("Feedback:") :]
    assert f"{ASKER}: 👍 up" in feedback
    assert f"{OTHER} (not the asker): 👎 down — Missing the <b>unit</b>" in feedback


async def test_with_the_database_down_the_clicker_is_told_and_a_note_stays_in_its_form(
    db, slack_api, llm_server, slack_pg_url
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    proxy = await TcpProxy(PG_PORT, PG_HOST).start()
    try:
        async with (
            database_behind(proxy, slack_pg_url) as proxied,
            running_bot(proxied, slack_api, llm_server.base_url) as bot,
        ):
            [answer] = await mentioned_and_answered(bot, QUESTION)
            [run] = await runs(db)
            down = feedback_values(answer)["down"]
            assert (await click(bot, down, message_ts=answer["ts"]))[0] == "form"
            await proxy.close()  # the database is gone
            refused = await click(bot, feedback_values(answer)["up"], user=OTHER, message_ts=answer["ts"])
            note = await bot.post(comment_form(ASKER, run.id, "The unit is missing"))
            await proxy.restore()
    finally:
        await proxy.close()

    assert refused == (
        "ephemeral",
        "I couldn't record your feedback: my database is unavailable. Please ask again in a minute.",
    )
    errors = note.json()
    assert errors["response_action"] == "errors" and "database is unavailable" in errors["errors"][COMMENT_BLOCK]
    assert await given(db) == [(ASKER, "down", True, None)]  # nothing half-recorded; the 👎 before it stands


async def test_a_thumbs_down_nobody_reviewed_expires_and_the_answer_stands(db, slack_api, llm_server):
    llm_server.respond_with(calculation("47 * 12", "564"))
    review = ReviewConfig(channel=REVIEW_CHANNEL, reviewers=(REVIEWER,), escalate_on_feedback=True)
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        [answer] = await mentioned_and_answered(bot, QUESTION)
        await click(bot, feedback_values(answer)["down"], user=OTHER, message_ts=answer["ts"])
        await slack_api.wait_for_async(lambda: slack_api.messages_in(REVIEW_CHANNEL), what="the reviewer message")
        later = datetime.now(UTC) + timedelta(hours=review.expire_after_hours + 1)
        assert await bot.bot.service.expire_due(later) == 1  # the timed job's pass
        await slack_api.wait_for_async(
            lambda: "Expired" in shown(slack_api.messages_in(REVIEW_CHANNEL)[0]), what="the reviewer message, expired"
        )

    [escalation] = await escalations(db)
    assert (escalation.reason, escalation.status) == ("feedback", "expired")
    [run] = await runs(db)
    assert run.status == "solved"  # the answer the asker saw is not turned into "expired"
    assert [shown(m) for m in slack_api.messages_in(CHANNEL, answer["thread_ts"])] == [shown(answer)]
