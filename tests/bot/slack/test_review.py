"""Human review end to end: a policy holds an action, reviewers decide in their channel, the run resumes.

Signed `block_actions` and `view_submission` payloads go to the bot's real endpoint; the fake Slack Web API
records what reviewers and askers see; PostgreSQL holds the decisions.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from bot.cli import main as parley_main
from bot.core import ReviewConfig
from bot.jobs.scheduler import Jobs
from bot.settings import Settings
from bot.slack.blocks import escape, held_call_text
from bot.slack.review.blocks import APPROVE, APPROVE_MODAL, REJECT, REJECT_MODAL, RETRY, answer_modal
from bot.store.models import AuditEvent, EscalationRecord, Run, ToolCallRecord
from tests.agent.toolbox import ScriptedTool
from tests.bot.slack.harness import ByQuestion, RunningBot, running_bot, scripted
from tests.bot.slack.seen import answer_in, block_texts, is_finished, shown
from tests.fakes.llm_server import FakeReply
from tests.fakes.slack_events import ASKER, CHANNEL, app_mention, block_actions, view_submission
from tests.fakes.slack_workspace import BOT_TOKEN

REVIEW_CHANNEL = "C0REVIEWS"
REVIEWER = "U0REVIEWER"
OTHER_REVIEWER = "U0SECOND"
STRANGER = "U0STRANGER"
QUESTION = "please send 1500 eur to the vendor for invoice 42"
TRANSFER = {"amount": 1500, "recipient": "ops@vendor.example", "memo": "invoice 42"}
REVIEW = ReviewConfig(channel=REVIEW_CHANNEL, reviewers=(REVIEWER, OTHER_REVIEWER))
POLICIES = [{"tool": "transfer_funds", "hold_when": [{"argument": "amount", "above": 1000}]}]


def transfer_tool() -> ScriptedTool:
    return ScriptedTool("transfer_funds", lambda args: {"transfer_id": "T-77", "sent": True})


def held_then_answered() -> Any:
    return scripted({"tool": "transfer_funds", "args": TRANSFER}, {"final": "The transfer was sent [1]."})


async def review_message(bot: RunningBot) -> dict[str, Any]:
    """The reviewer-channel message of the (only) escalation, once posted."""
    return await bot.slack.wait_for_async(
        lambda: next((m for m in bot.slack.messages_in(REVIEW_CHANNEL) if "Review needed" in m.get("text", "")), None),
        what="the escalation in the reviewer channel",
    )


def buttons(message: dict[str, Any]) -> dict[str, str]:
    return {
        element["action_id"]: element["value"]
        for block in message.get("blocks") or []
        if block["type"] == "actions"
        for element in block["elements"]
    }


async def click(bot: RunningBot, action: str, message: dict[str, Any], user: str) -> None:
    body = block_actions(
        action, value=buttons(message)[action], user=user, channel=REVIEW_CHANNEL, message_ts=message["ts"]
    )
    response = await bot.post(body)
    assert response.status_code == 200, response.text


async def escalated(db, bot: RunningBot, question: str = QUESTION) -> tuple[str, dict[str, Any], Any]:
    """Mention Parley; wait for the held answer in the thread and the message in the reviewer channel."""
    body = app_mention(question)
    assert (await bot.post(body)).status_code == 200
    held, *_ = await answer_in(bot.slack, CHANNEL, body["event"]["ts"])  # long held arguments: more parts
    return body["event"]["ts"], await review_message(bot), held


async def asked_on_the_command_line(
    db, run_id: str, question: str, *, kind: str, reason: str, level: str, message: str
) -> None:
    """A run `parley ask` escalated: no Slack thread, nobody posted it to the reviewers."""
    now = datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        session.add(
            Run(
                id=run_id,
                source="cli",
                asker="cli:carol",
                question=question,
                status="awaiting_review",
                termination_reason=reason,
                answer=f"Partial answer — {message}.",
                created_at=now,
            )
        )
        await session.flush()
        session.add(
            EscalationRecord(
                run_id=run_id,
                kind=kind,
                reason=reason,
                level=level,
                message=message,
                draft_answer=f"Partial answer — {message}.",
                created_at=now,
            )
        )


async def run_row(db) -> Run:
    async with db.sessions() as session:
        return (await session.scalars(select(Run))).one()


async def thread_messages(
    bot: RunningBot, thread: str, count: int, *, showing: str | None = None
) -> list[dict[str, Any]]:
    """The bot's messages in the asker's thread once there are `count`, the last one finished (and showing
    `showing`, for a message that changes in place)."""
    return await bot.slack.wait_for_async(
        lambda: (
            (found := bot.slack.messages_in(CHANNEL, thread))
            and len(found) >= count
            and is_finished(found[-1:])
            and (showing is None or showing in shown(found[-1]))
            and found
        ),
        what=f"{count} messages in the asker's thread, the last finished"
        + (f" showing {showing!r}" if showing else ""),
    )


async def test_policy_hold_approve_runs_the_exact_action_and_the_run_resumes_with_a_cited_answer(
    db, slack_api, llm_server
):
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(tool, "calculator"), review=REVIEW, policies=POLICIES
    ) as bot:
        thread, message, held = await escalated(db, bot)
        assert tool.calls == []  # held: not executed
        await click(bot, APPROVE, message, REVIEWER)
        messages = await thread_messages(bot, thread, 2, showing="The transfer was sent")  # below the held notice
        await bot.slack.wait_for_async(lambda: "Approved by" in shown(bot.slack.messages_in(REVIEW_CHANNEL)[0]))

    assert "⏸️ Waiting for a reviewer" in shown(held)
    assert "transfer_funds(" in shown(held) and '"amount": 1500' in shown(held)
    text = shown(message)
    assert QUESTION in text and f"<@{ASKER}>" in text  # who asked, by mention
    assert '"amount": 1500' in text and "ops@vendor.example" in text  # the exact held action
    assert set(buttons(message)) == {APPROVE, REJECT}  # no Retry for a held action
    assert tool.calls == [TRANSFER]  # exactly what the reviewer saw, once
    final = shown(messages[-1])
    assert "The transfer was sent [1]" in final and "transfer_funds(" in final
    held_notice = shown(messages[0])  # no longer "waiting": approved, and the answer follows below it
    assert "Held action, approved" in held_notice and f"Approved by <@{REVIEWER}>" in held_notice
    assert "Waiting for a reviewer" not in held_notice
    assert "✅ approved · " in final
    run = await run_row(db)
    assert (run.status, run.termination_reason) == ("approved", "answered")
    async with db.sessions() as session:
        esc = (await session.scalars(select(EscalationRecord))).one()
        calls = (await session.scalars(select(ToolCallRecord))).all()
        actions = [a.action for a in (await session.scalars(select(AuditEvent).order_by(AuditEvent.id))).all()]
    assert (esc.status, esc.decided_by) == ("approved", f"slack:{REVIEWER}")
    assert [(c.tool, c.arguments) for c in calls] == [("transfer_funds", TRANSFER)]
    assert actions[-3:] == ["review_approved", "run_resumed", "run_finished"]
    updated = shown(slack_api.messages_in(REVIEW_CHANNEL)[0])
    assert f"Approved by <@{REVIEWER}>" in updated and not buttons(slack_api.messages_in(REVIEW_CHANNEL)[0])


async def test_reject_asks_for_a_reason_and_the_thread_gets_it(db, slack_api, llm_server):
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES) as bot:
        thread, message, _ = await escalated(db, bot)
        await click(bot, REJECT, message, REVIEWER)
        [opened] = await slack_api.wait_for_async(lambda: slack_api.calls("views.open"), what="the reject modal")
        run_id = opened.params["view"]["private_metadata"]
        blank = await bot.post(
            view_submission(
                REJECT_MODAL,
                {"reason": {"reason_input": {"type": "plain_text_input", "value": "  "}}},
                user=REVIEWER,
                private_metadata=run_id,
            )
        )
        reason = "The vendor's bank details changed last week; call them first."
        submitted = await bot.post(
            view_submission(
                REJECT_MODAL,
                {"reason": {"reason_input": {"type": "plain_text_input", "value": reason}}},
                user=REVIEWER,
                private_metadata=run_id,
            )
        )
        messages = await thread_messages(bot, thread, 2)

    assert opened.params["view"]["callback_id"] == REJECT_MODAL
    held_notice = shown(messages[0])  # no longer "waiting": it says how it was decided
    assert "Held action, not done" in held_notice and f"Rejected by <@{REVIEWER}>" in held_notice
    assert "Waiting for a reviewer" not in held_notice
    assert blank.json()["response_action"] == "errors"  # the reason is required
    assert submitted.status_code == 200 and not submitted.content
    assert reason in shown(messages[-1]) and f"<@{REVIEWER}>" in shown(messages[-1])
    assert tool.calls == []
    run = await run_row(db)
    assert run.status == "rejected"
    assert "Rejected by" in shown(slack_api.messages_in(REVIEW_CHANNEL)[0])


async def test_a_stranger_and_the_asker_are_refused_privately_and_audited(db, slack_api, llm_server):
    llm_server.respond_with(held_then_answered())
    review = ReviewConfig(channel=REVIEW_CHANNEL, reviewers=(REVIEWER, ASKER))  # the asker reviews too
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(transfer_tool(),), review=review, policies=POLICIES
    ) as bot:
        _, message, _ = await escalated(db, bot)
        run = await run_row(db)
        await click(bot, APPROVE, message, STRANGER)
        await click(bot, APPROVE, message, run.asker)
        refusals = await slack_api.wait_for_async(
            lambda: (found := slack_api.calls("chat.postEphemeral")) and len(found) == 2 and found,
            what="two ephemeral refusals",
        )

    assert [r.params["user"] for r in refusals] == [STRANGER, run.asker]
    assert "Only Parley's reviewers" in refusals[0].params["text"]
    assert "someone else must review" in refusals[1].params["text"]
    async with db.sessions() as session:
        audit = (await session.scalars(select(AuditEvent).where(AuditEvent.action == "review_refused"))).all()
        esc = (await session.scalars(select(EscalationRecord))).one()
    assert [a.actor for a in audit] == [f"slack:{STRANGER}", f"slack:{run.asker}"]
    assert esc.status == "pending" and (await run_row(db)).status == "awaiting_review"


async def test_two_reviewers_approving_at_once_record_one_decision(db, slack_api, llm_server):
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES) as bot:
        thread, message, _ = await escalated(db, bot)
        await asyncio.gather(
            click(bot, APPROVE, message, REVIEWER),
            click(bot, APPROVE, message, OTHER_REVIEWER),
            click(bot, APPROVE, message, REVIEWER),  # a double click
        )
        await thread_messages(bot, thread, 2, showing="The transfer was sent")
        told = await slack_api.wait_for_async(
            lambda: (found := slack_api.calls("chat.postEphemeral")) and len(found) == 2 and found,
            what="the latecomers told who decided",
        )

    assert tool.calls == [TRANSFER]  # ran once
    assert all("Already decided" in t.params["text"] and "Approved by" in t.params["text"] for t in told)
    async with db.sessions() as session:
        decisions = (await session.scalars(select(AuditEvent).where(AuditEvent.action == "review_approved"))).all()
    assert len(decisions) == 1


async def test_an_exhausted_run_is_approved_with_an_edited_answer_or_retried(db, slack_api, llm_server):
    down = {"down": True}
    after_the_outage = scripted({"tool": "calculator", "args": {"expression": "6 * 7"}}, {"final": "6 * 7 = 42 [1]"})

    def model(body: Any) -> FakeReply:
        if down["down"]:
            return FakeReply.with_status(503, "the model server is overloaded")
        return after_the_outage(body)

    llm_server.respond_with(ByQuestion({"6 times 7": model}))
    async with running_bot(db, slack_api, llm_server.base_url, review=REVIEW) as bot:
        thread, message, partial = await escalated(db, bot, "What is 6 times 7?")
        assert set(buttons(message)) == {APPROVE, REJECT, RETRY}
        down["down"] = False  # the outage is over: a reviewer runs it again
        await click(bot, RETRY, message, REVIEWER)
        messages = await thread_messages(bot, thread, 2)
        await slack_api.wait_for_async(lambda: "42 [1]" in shown(slack_api.messages_in(CHANNEL, thread)[-1]))

    assert "A person will look at this" in shown(partial)
    assert "42 [1]" in shown(slack_api.messages_in(CHANNEL, thread)[-1]) and len(messages) >= 2
    async with db.sessions() as session:
        runs = (await session.scalars(select(Run).order_by(Run.created_at))).all()
    assert [(r.status, r.termination_reason) for r in runs] == [
        ("degraded", "llm_unavailable"),
        ("solved", "answered"),
    ]
    assert runs[1].retry_of == runs[0].id
    assert "Run again by" in shown(slack_api.messages_in(REVIEW_CHANNEL)[0])


async def test_approving_an_exhausted_run_posts_the_reviewers_answer(db, slack_api, llm_server):
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "the model server is overloaded"))
    async with running_bot(db, slack_api, llm_server.base_url, review=REVIEW) as bot:
        thread, message, _ = await escalated(db, bot, "What is 6 times 7?")
        await click(bot, APPROVE, message, REVIEWER)
        [opened] = await slack_api.wait_for_async(lambda: slack_api.calls("views.open"), what="the answer modal")
        view = opened.params["view"]
        answer = "6 × 7 = 42 (checked by hand)."
        response = await bot.post(
            view_submission(
                APPROVE_MODAL,
                {"answer": {"answer_input": {"type": "plain_text_input", "value": answer}}},
                user=REVIEWER,
                private_metadata=view["private_metadata"],
            )
        )
        messages = await thread_messages(bot, thread, 2)

    [form] = [block for block in view["blocks"] if block["type"] == "input"]
    assert form["element"]["initial_value"].startswith("Partial answer")  # the draft to edit
    assert response.status_code == 200
    assert answer in shown(messages[-1]) and f"Reviewed and approved by <@{REVIEWER}>" in shown(messages[-1])
    run = await run_row(db)
    assert (run.status, run.answer) == ("approved", answer)


async def test_a_restart_between_escalation_and_approval_resumes_in_the_new_process(db, slack_api, llm_server):
    tool = transfer_tool()
    llm_server.respond_with(scripted({"tool": "transfer_funds", "args": TRANSFER}))
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES
    ) as first:
        thread, message, _ = await escalated(db, first)
    # A new process: a new agent, a new model script, the same database; the old message's button is clicked.
    llm_server.respond_with(scripted({"final": "The transfer was sent [1]."}))
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES
    ) as second:
        await click(second, APPROVE, message, REVIEWER)
        messages = await thread_messages(second, thread, 2, showing="The transfer was sent")

    assert tool.calls == [TRANSFER]
    assert "The transfer was sent [1]" in shown(messages[-1])
    assert (await run_row(db)).status == "approved"


async def test_reminder_then_expiry_on_a_controlled_clock_reach_reviewers_and_the_asker(db, slack_api, llm_server):
    llm_server.respond_with(held_then_answered())
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(transfer_tool(),), review=REVIEW, policies=POLICIES
    ) as bot:
        thread, message, _ = await escalated(db, bot)
        async with db.sessions() as session:
            created = (await session.scalars(select(EscalationRecord))).one().created_at
        jobs = Jobs(db, bot.bot.service)
        early = await jobs.run_due(now=created + timedelta(minutes=29))
        reminded = await Jobs(db, bot.bot.service).run_due(now=created + timedelta(minutes=31))
        reminder = await slack_api.wait_for_async(
            lambda: next((c for c in slack_api.calls("chat.postMessage") if "Still waiting" in c.params["text"]), None),
            what="the reminder",
        )
        expired = await Jobs(db, bot.bot.service).run_due(now=created + timedelta(hours=25))
        messages = await thread_messages(bot, thread, 2)

    assert early["remind"] == 0 and reminded["remind"] == 1
    assert reminder.params["channel"] == REVIEW_CHANNEL and reminder.params["thread_ts"] == message["ts"]
    assert expired["expire"] == 1
    assert "expired" in shown(messages[-1]) and "Nothing held was done" in shown(messages[-1])
    assert "Held action, not done" in shown(messages[0]) and "Expired at" in shown(messages[0])
    assert "Expired at" in shown(slack_api.messages_in(REVIEW_CHANNEL)[0])
    assert not buttons(slack_api.messages_in(REVIEW_CHANNEL)[0])
    assert (await run_row(db)).status == "expired"


async def test_a_decision_taken_on_the_command_line_shows_in_slack(
    db, slack_api, llm_server, slack_pg_url, monkeypatch
):
    """`parley review reject` with Slack configured: the reviewer message and the asker's thread say so."""
    llm_server.respond_with(held_then_answered())
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(transfer_tool(),), review=REVIEW, policies=POLICIES
    ) as bot:
        thread, _, _ = await escalated(db, bot)
        run = await run_row(db)
        for name, value in {
            "PARLEY_DATABASE_URL": slack_pg_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "PARLEY_SLACK_API_URL": slack_api.base_url,
            "PARLEY_REVIEW_CHANNEL": REVIEW_CHANNEL,
        }.items():
            monkeypatch.setenv(name, value)
        code = await asyncio.to_thread(parley_main, ["review", "reject", run.id[:8], "--reason", "Not this quarter."])
        messages = await thread_messages(bot, thread, 2)

    assert code == 0
    operator = Settings.cli_user()
    assert "declined this request: Not this quarter." in shown(messages[-1]) and operator in shown(messages[-1])
    updated = shown(slack_api.messages_in(REVIEW_CHANNEL)[0])
    assert f"Rejected by {operator}" in updated and not buttons(slack_api.messages_in(REVIEW_CHANNEL)[0])
    assert (await run_row(db)).status == "rejected"


async def test_an_escalation_nobody_posted_reaches_the_reviewer_channel_by_the_announce_job(db, slack_api, llm_server):
    """A run escalated on the command line (no thread, no Slack) is posted once by the timed jobs."""
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, review=REVIEW) as bot:
        await asked_on_the_command_line(
            db,
            "c" * 32,
            "Wire 20,000 EUR to ACME",
            kind="policy",
            reason="policy_violation",
            level="L4",
            message="transfers above 10,000 EUR need a second approver",
        )
        # Two replicas' jobs at the same instant: one message.
        await asyncio.gather(Jobs(db, bot.bot.service).run_due(), Jobs(db, bot.bot.service).run_due())
        posted = slack_api.messages_in(REVIEW_CHANNEL)

    assert len(posted) == 1
    assert "Wire 20,000 EUR to ACME" in shown(posted[0]) and "second approver" in shown(posted[0])
    assert set(buttons(posted[0])) == {APPROVE, REJECT}
    async with db.sessions() as session:
        esc = (await session.scalars(select(EscalationRecord))).one()
    assert (esc.review_channel, esc.review_ts) == (REVIEW_CHANNEL, posted[0]["ts"])


async def test_an_approval_never_runs_other_arguments_than_those_shown(db, slack_api, llm_server):
    """The saved state was changed after the reviewer message went out: the approval does not carry over."""
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES) as bot:
        thread, message, _ = await escalated(db, bot)
        async with db.sessions() as session, session.begin():
            run = (await session.scalars(select(Run))).one()
            changed = dict(run.snapshot)
            changed["held"] = [{**changed["held"][0], "arguments": {**TRANSFER, "amount": 150_000}}]
            run.snapshot = changed
        await click(bot, APPROVE, message, REVIEWER)
        messages = await thread_messages(bot, thread, 2, showing="could not be run as it was shown")

    assert tool.calls == []  # nothing ran
    assert "could not be run as it was shown to the reviewer" in shown(messages[-1])
    run = await run_row(db)
    assert (run.status, run.termination_reason) == ("degraded", "cancelled")
    async with db.sessions() as session:
        refused = (await session.scalars(select(AuditEvent).where(AuditEvent.action == "resume_refused"))).all()
    assert len(refused) == 1


async def test_an_approval_of_a_saved_state_this_version_cannot_read_ends_honestly(db, slack_api, llm_server):
    """A saved state that lacks a field (written by another version) is not resumed with a silent 0: nothing
    runs, the thread is told, and the run ends `cancelled` with the missing field in the audit trail."""
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES) as bot:
        thread, message, _ = await escalated(db, bot)
        async with db.sessions() as session, session.begin():
            run = (await session.scalars(select(Run))).one()
            older = dict(run.snapshot)
            older["counters"] = {k: v for k, v in older["counters"].items() if k != "tokens"}
            run.snapshot = older
        await click(bot, APPROVE, message, REVIEWER)
        messages = await thread_messages(bot, thread, 2, showing="could not be run as it was shown")

    assert tool.calls == []  # nothing ran
    assert "could not be run as it was shown to the reviewer" in shown(messages[-1])
    run = await run_row(db)
    assert (run.status, run.termination_reason) == ("degraded", "cancelled")
    assert "cannot be read by this version (counters.tokens: Field required)" in run.answer
    async with db.sessions() as session:
        [refused] = (await session.scalars(select(AuditEvent).where(AuditEvent.action == "resume_refused"))).all()
    assert "counters.tokens" in refused.detail["why"]


async def test_a_modal_submission_is_checked_again_and_a_late_one_learns_who_decided(db, slack_api, llm_server):
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "the model server is overloaded"))
    async with running_bot(db, slack_api, llm_server.base_url, review=REVIEW) as bot:
        await escalated(db, bot, "What is 6 times 7?")
        run = await run_row(db)

        def rejecting(user: str) -> bytes:
            values = {"reason": {"reason_input": {"type": "plain_text_input", "value": "No."}}}
            return view_submission(REJECT_MODAL, values, user=user, private_metadata=run.id)

        forged = await bot.post(rejecting(STRANGER))  # never shown the modal: rights checked on submission
        first = await bot.post(rejecting(REVIEWER))
        late = await bot.post(rejecting(OTHER_REVIEWER))

    assert forged.json()["response_action"] == "errors"
    assert "Only Parley's reviewers" in forged.json()["errors"]["reason"]
    assert first.status_code == 200 and not first.content
    assert "Already decided" in late.json()["errors"]["reason"] and f"<@{REVIEWER}>" in late.json()["errors"]["reason"]
    assert (await run_row(db)).status == "rejected"
    async with db.sessions() as session:
        audit = (await session.scalars(select(AuditEvent).where(AuditEvent.action == "review_refused"))).all()
    assert [a.actor for a in audit] == [f"slack:{STRANGER}"]


async def test_a_command_line_run_retried_from_slack_answers_in_the_reviewer_thread(db, slack_api, llm_server):
    """No Slack thread to answer in: what the reviewer's decision led to shows under their message."""
    llm_server.respond_with(
        scripted({"tool": "calculator", "args": {"expression": "6 * 7"}}, {"final": "6 * 7 = 42 [1]"})
    )
    async with running_bot(db, slack_api, llm_server.base_url, review=REVIEW) as bot:
        await asked_on_the_command_line(
            db,
            "d" * 32,
            "What is 6 times 7?",
            kind="exhausted",
            reason="llm_unavailable",
            level="L2",
            message="the language model could not be reached",
        )
        await Jobs(db, bot.bot.service).run_due()
        message = await review_message(bot)
        await click(bot, RETRY, message, REVIEWER)
        answered = await slack_api.wait_for_async(
            lambda: (
                (found := slack_api.messages_in(REVIEW_CHANNEL, message["ts"])) and is_finished(found[-1:]) and found
            ),
            what="the retried run's answer under the reviewer message",
        )

    assert "42 [1]" in shown(answered[-1])
    async with db.sessions() as session:
        retried = (await session.scalars(select(Run).where(Run.retry_of == "d" * 32))).one()
    assert (retried.status, retried.asker) == ("solved", "cli:carol")


async def test_a_huge_question_draft_and_held_arguments_fit_the_review_message_and_nothing_is_hidden(
    db, slack_api, llm_server
):
    body_text = "Dear vendor, " + "the invoice details follow. " * 400  # ~11,000 characters of e-mail
    mail = {"to": "ops@vendor.example", "body": body_text}
    tool = ScriptedTool("send_mail", [{"sent": True}])
    question = "please mail the vendor about invoice 42. " + "context: " * 2000
    llm_server.respond_with(scripted({"tool": "send_mail", "args": mail}, {"final": "Sent [1]."}))
    policies = [{"tool": "send_mail", "requires_approval": True}]
    expected = escape(held_call_text("send_mail", mail))

    def joined(parts: list) -> str:
        return "".join(shown(part).split("\n", 1)[-1].strip("`") for part in parts)

    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=policies) as bot:
        _, message, _ = await escalated(db, bot, question)
        parts = await slack_api.wait_for_async(  # every part posted, not only the first two (they arrive in turn)
            lambda: (
                (found := slack_api.messages_in(REVIEW_CHANNEL, message["ts"]))
                and len(joined(found)) >= len(expected)
                and found
            ),
            what="the held arguments in full in the review message's thread",
        )

    blocks = message["blocks"]
    assert len(blocks) <= 50 and all(len(t) <= 3000 for t in block_texts(blocks))
    assert sum(len(t) for t in block_texts(blocks)) <= 8000
    text = shown(message)
    assert "more characters: `/parley show" in text  # the question, shortened, says so and where
    assert "read them in full in this message's thread" in text
    assert len(parts) >= 2
    assert joined(parts) == expected  # every character, in order
    assert tool.calls == []


def test_a_draft_longer_than_the_form_is_said_to_be_cut():
    short = answer_modal("r" * 32, "A short draft.")
    long = answer_modal("r" * 32, "x" * 5000)

    assert [b["type"] for b in short["blocks"]] == ["input"]
    assert short["blocks"][0]["element"]["initial_value"] == "A short draft."
    note, form = long["blocks"]
    assert (
        "5,000 characters" in note["elements"][0]["text"] and "/parley show rrrrrrrrrrrr" in note["elements"][0]["text"]
    )
    assert len(form["element"]["initial_value"]) == 3000
