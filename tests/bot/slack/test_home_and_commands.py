"""Audit history for people: the Home tab and `/parley`, through the real endpoint with signed requests.

Runs and escalations are written straight into the store (no agent runs here); what people see is read back
from the fake Web API (views.publish), from the command's acknowledgement, and from its response_url.
"""

from __future__ import annotations

import itertools
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from agent import RunStatus
from bot.core import ReviewConfig
from bot.slack.commands import COMMAND
from bot.slack.home import PAGE_ACTION, PAGE_ACTIONS
from bot.store import Database, connect
from bot.store.models import EscalationRecord, Run, Step, ToolCallRecord
from tests.bot.slack.harness import RunningBot, running_bot
from tests.bot.slack.seen import block_texts
from tests.bot.store.postgres import PG_PORT
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import ASKER, app_home_opened, block_actions, slash_command
from tests.fakes.tcp_proxy import TcpProxy

OTHER = "U0OTHER"
REVIEWER = "U0REVIEWER"
REVIEWER_GROUP = "S0REVIEWERS"
NOW = datetime.now(UTC)
MANIFEST = Path(__file__).resolve().parents[3] / "config" / "slack-manifest.yaml"
HOSTILE = "Ping <!channel> and @here: <http://evil.example|click> & see"

_minutes = itertools.count(1)


# -- the store, written directly -------------------------------------------------------------------------------


async def add_run(
    db: Database,
    question: str,
    *,
    asker: str = ASKER,
    status: RunStatus = RunStatus.SOLVED,
    reason: str | None = "answered",
    run_id: str | None = None,
    **columns: Any,
) -> Run:
    """A run asked in Slack; each one a minute later than the one before (newest last)."""
    run = Run(
        id=run_id or uuid.uuid4().hex,
        source="slack",
        asker=asker,
        question=question,
        status=status.value,
        termination_reason=reason,
        created_at=NOW - timedelta(days=1) + timedelta(minutes=next(_minutes)),
        **columns,
    )
    async with db.sessions() as session, session.begin():
        session.add(run)
    return run


async def add_escalation(db: Database, run: Run, *, waiting: timedelta, **columns: Any) -> None:
    escalation = EscalationRecord(
        run_id=run.id,
        kind="exhausted",
        reason="llm_unavailable",
        level="L2",
        status="pending",
        message="The model server stayed unreachable after 3 tries.",
        created_at=NOW - waiting,
    )
    for name, value in columns.items():
        setattr(escalation, name, value)
    async with db.sessions() as session, session.begin():
        session.add(escalation)


# -- what people see ---------------------------------------------------------------------------------------------


async def open_home(bot: RunningBot, user: str) -> dict[str, Any]:
    """`user` opens the Home tab; the view the bot publishes for them."""
    published = len(publishes_for(bot.slack, user))
    response = await bot.post(app_home_opened(user=user))
    assert response.status_code == 200, response.text
    return await next_view(bot.slack, user, published)


async def click(bot: RunningBot, user: str, view: dict[str, Any], label: str) -> dict[str, Any]:
    """`user` clicks the button reading `label` on their Home view; the view published after it."""
    [button] = [b for b in buttons(view) if b["text"]["text"] == label]
    published = len(publishes_for(bot.slack, user))
    body = block_actions(button["action_id"], value=button["value"], block_id="pages", user=user, view=view)
    response = await bot.post(body)
    assert response.status_code == 200, response.text
    return await next_view(bot.slack, user, published)


async def next_view(slack: FakeSlackApi, user: str, published: int) -> dict[str, Any]:
    call = await slack.wait_for_async(
        lambda: publishes_for(slack, user)[published], what=f"views.publish #{published + 1} for {user}"
    )
    assert call.ok, call.response
    return call.response["view"]


def publishes_for(slack: FakeSlackApi, user: str) -> list[Any]:
    return [call for call in slack.calls("views.publish") if call.params.get("user_id") == user]


def buttons(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"] if e["type"] == "button"]


def labels(view: dict[str, Any]) -> list[str]:
    return [button["text"]["text"] for button in buttons(view)]


def text_of(view_or_message: dict[str, Any]) -> str:
    return "\n".join(block_texts(view_or_message.get("blocks")))


def section_under(view: dict[str, Any], title: str) -> str:
    """The texts between the header `title` and the next header."""
    texts, inside = [], False
    for block in view["blocks"]:
        if block["type"] == "header":
            inside = block["text"]["text"] == title
        elif inside:
            texts.extend(block_texts([block]))
    return "\n".join(texts)


async def command(bot: RunningBot, text: str, *, user: str = ASKER, response_url: str | None = None) -> dict:
    """`/parley text` typed by `user`: the ephemeral answer in the acknowledgement."""
    options = {"response_url": response_url} if response_url else {}
    response = await bot.post(slash_command(COMMAND, text, user=user, **options))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["response_type"] == "ephemeral"
    return answer


def order_of(text: str, questions: list[str]) -> list[str]:
    return sorted((q for q in questions if q in text), key=text.index)


# -- the Home tab ------------------------------------------------------------------------------------------------


async def test_home_opened_publishes_the_users_own_runs_newest_first(db, slack_api, llm_server):
    first = await add_run(db, "What is 47 times 12?")
    await add_run(db, "Weather in Paris?", asker=OTHER)
    second = await add_run(db, "Compare Shanghai and Beijing", status=RunStatus.DEGRADED, reason="max_steps")
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        view = await open_home(bot, ASKER)

    assert view["type"] == "home"
    text = text_of(view)
    assert order_of(text, [first.question, second.question]) == [second.question, first.question]
    assert "Weather in Paris?" not in text
    assert f"⚠️ *degraded* · max_steps · <!date^{int(second.created_at.timestamp())}^" in text
    assert f"run `{second.id[:12]}`" in text
    # Not a reviewer: nothing of anyone else, and no buttons at all (one page, read-only).
    assert "Waiting for review" not in text and "Recent terminations" not in text
    assert buttons(view) == []


async def test_home_messages_tab_publishes_nothing(db, slack_api, llm_server):
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        assert (await bot.post(app_home_opened(user=OTHER, tab="messages"))).status_code == 200
        await open_home(bot, ASKER)  # handled after the Messages tab's event
    assert publishes_for(slack_api, OTHER) == []


async def test_home_of_a_reviewer_shows_waiting_escalations_and_recent_terminations(db, slack_api, llm_server):
    slack_api.set_group_members(REVIEWER_GROUP, [REVIEWER])
    solved = await add_run(db, "What is 47 times 12?", asker=OTHER)
    held = await add_run(db, "Weather in Atlantis?", status=RunStatus.AWAITING_REVIEW, reason="llm_unavailable")
    await add_escalation(db, held, waiting=timedelta(hours=3, minutes=5))
    still_running = await add_run(db, "Still thinking about it", asker=OTHER, status=RunStatus.RUNNING, reason=None)
    review = ReviewConfig(reviewer_group=REVIEWER_GROUP)
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        view = await open_home(bot, REVIEWER)
        asker_view = await open_home(bot, ASKER)

    waiting = section_under(view, "Waiting for review")
    assert "Weather in Atlantis?" in waiting
    assert f"asked by <@{ASKER}>" in waiting
    assert re.search(r"waiting 3h \d+m", waiting)  # created 3 h 5 min before the test; a slow machine adds
    assert "exhausted · llm_unavailable · L2 — The model server stayed unreachable after 3 tries." in waiting
    assert f"run `{held.id[:12]}`" in waiting
    ended = section_under(view, "Recent terminations")
    assert order_of(ended, [solved.question, held.question]) == [held.question, solved.question]
    assert "✅ *solved* · answered · <@U0OTHER> · " in ended
    assert "⏸️ *awaiting_review* · llm_unavailable · <@U0ASKER> · " in ended
    assert still_running.question not in ended  # not terminated yet
    assert "You haven't asked Parley anything yet." in section_under(view, "Your questions")
    # Read-only: the only buttons anywhere are page buttons (decisions happen in the reviewer channel).
    assert all(PAGE_ACTIONS.match(button["action_id"]) for button in buttons(view))
    # The asker is no reviewer: only their own runs.
    assert "Waiting for review" not in text_of(asker_view)
    assert [call.params["usergroup"] for call in slack_api.calls("usergroups.users.list")] == [REVIEWER_GROUP]


async def test_home_older_and_newer_buttons_page_through_ten_at_a_time(db, slack_api, llm_server):
    questions = [f"Question number {n:02d}?" for n in range(1, 24)]  # 23 runs: pages of 10, 10, 3
    for question in questions:
        await add_run(db, question)
    newest_first = questions[::-1]
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        first = await open_home(bot, ASKER)
        second = await click(bot, ASKER, first, "Older →")
        third = await click(bot, ASKER, second, "Older →")
        back = await click(bot, ASKER, third, "← Newer")
        top = await click(bot, ASKER, back, "← Newer")
        # A value Parley did not write (forged, or from an older version) is the first page, not an error.
        forged = block_actions(f"{PAGE_ACTION}.next", value="not json", user=ASKER, view=top)
        assert (await bot.post(forged)).status_code == 200
        reset = await next_view(slack_api, ASKER, 5)

    def shown(view: dict[str, Any]) -> list[str]:
        return order_of(text_of(view), questions)

    assert shown(first) == newest_first[:10] and labels(first) == ["Older →"]
    assert shown(second) == newest_first[10:20] and labels(second) == ["← Newer", "Older →"]
    assert shown(third) == newest_first[20:] and labels(third) == ["← Newer"]
    assert shown(back) == newest_first[10:20] and labels(back) == ["← Newer", "Older →"]
    assert shown(top) == newest_first[:10] and labels(top) == ["Older →"]
    assert shown(reset) == newest_first[:10]
    assert {b["action_id"] for b in buttons(second)} == {f"{PAGE_ACTION}.previous", f"{PAGE_ACTION}.next"}


async def test_home_pages_of_one_list_leave_the_others_where_they_are(db, slack_api, llm_server):
    for n in range(12):
        held = await add_run(
            db, f"Held question {n:02d}?", asker=OTHER, status=RunStatus.AWAITING_REVIEW, reason="llm_unavailable"
        )
        await add_escalation(db, held, waiting=timedelta(minutes=100 - n))
    async with running_bot(db, slack_api, llm_server.base_url, review=ReviewConfig(reviewers=(REVIEWER,))) as bot:
        first = await open_home(bot, REVIEWER)
        waiting_next = await click_in(bot, REVIEWER, first, "home_waiting_pages", "Newer →")
        ended_next = await click_in(bot, REVIEWER, waiting_next, "home_ended_pages", "Older →")

    assert "Held question 00?" in section_under(first, "Waiting for review")  # oldest first
    assert "Held question 10?" not in section_under(first, "Waiting for review")
    assert "Held question 10?" in section_under(waiting_next, "Waiting for review")
    assert "Held question 11?" in section_under(waiting_next, "Waiting for review")
    assert "Held question 11?" in section_under(first, "Recent terminations")  # newest first
    assert "Held question 00?" in section_under(ended_next, "Recent terminations")
    # Paging the terminations kept the waiting list on its second page.
    assert section_under(ended_next, "Waiting for review") == section_under(waiting_next, "Waiting for review")


async def click_in(bot: RunningBot, user: str, view: dict[str, Any], block_id: str, label: str) -> dict[str, Any]:
    [block] = [block for block in view["blocks"] if block.get("block_id") == block_id]
    only = {**view, "blocks": [block]}  # the button of that list, whatever the others offer
    return await click(bot, user, only, label)


# -- /parley -----------------------------------------------------------------------------------------------------


async def test_parley_runs_lists_your_runs_and_a_reviewer_sees_everyones(db, slack_api, llm_server):
    mine = await add_run(db, "What is 47 times 12?")
    theirs = await add_run(db, "Weather in Paris?", asker=OTHER, status=RunStatus.DEGRADED, reason="gave_up")
    async with running_bot(db, slack_api, llm_server.base_url, review=ReviewConfig(reviewers=(REVIEWER,))) as bot:
        asker = await command(bot, "runs")
        reviewer = await command(bot, "runs", user=REVIEWER)

    assert "*Your newest runs*" in text_of(asker)
    assert mine.question in text_of(asker) and theirs.question not in text_of(asker)
    assert f"run `{mine.id[:12]}`" in text_of(asker)
    everyone = text_of(reviewer)
    assert order_of(everyone, [mine.question, theirs.question]) == [theirs.question, mine.question]
    assert "⚠️ *degraded* · gave_up · <@U0OTHER> · " in everyone


async def test_parley_runs_filters_by_status_and_names_the_valid_ones(db, slack_api, llm_server):
    await add_run(db, "What is 47 times 12?")
    degraded = await add_run(db, "Compare two cities", status=RunStatus.DEGRADED, reason="max_steps")
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        filtered = await command(bot, "runs degraded")
        bogus = await command(bot, "runs <!channel>bogus")
        none = await command(bot, "runs expired")

    assert degraded.question in text_of(filtered) and "47 times 12" not in text_of(filtered)
    assert "status `degraded`" in text_of(filtered)
    wrong = text_of(bogus)
    assert wrong.startswith("There is no status `&lt;!channel&gt;bogus`. Valid statuses: ")
    assert all(f"`{status.value}`" in wrong for status in RunStatus)
    assert "No runs · status `expired` yet." in text_of(none)


async def test_parley_show_one_run_to_its_asker_in_full(db, slack_api, llm_server):
    citation = {"marker": "[1]", "tool": "calculator", "arguments": {"expression": "47 * 12"}, "step": 1}
    run = await add_run(
        db,
        "What is 47 times 12?",
        answer="47 × 12 = 564 [1]",
        citations=[citation],
        steps=2,
        tool_calls=1,
        status=RunStatus.REJECTED,
        reason="answered",
    )
    async with db.sessions() as session, session.begin():
        session.add_all(
            [
                Step(run_id=run.id, step=1, decision="tool_calls", at=NOW),
                Step(run_id=run.id, step=2, decision="final", at=NOW),
                ToolCallRecord(
                    run_id=run.id,
                    step=1,
                    tool_call_id="call_1",
                    tool="calculator",
                    arguments={"expression": "47 * 12"},
                    ok=True,
                    observation='{"ok": true}',
                    at=NOW,
                ),
            ]
        )
    await add_escalation(
        db,
        run,
        waiting=timedelta(hours=1),
        status="rejected",
        decided_at=NOW,
        decided_by=REVIEWER,
        decision_reason="Ask the finance team instead.",
    )
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        answer = await command(bot, f"show {run.id[:8]}")

    text = text_of(answer)
    assert answer["blocks"][0]["type"] == "header" and answer["blocks"][0]["text"]["text"] == f"Run {run.id[:12]}"
    assert "*Question*\nWhat is 47 times 12?" in text
    assert "🚫 *rejected* · answered · 2 steps · 1 tool call · 0 retries · asked by <@U0ASKER>" in text
    # A reviewer rejected it: refused, and its text is not presented as an answer (as in `parley runs show`).
    assert "\n_Refused_\n" in text
    assert "*Final (as the user saw it)*\n47 × 12 = 564 [1]" in text and "*Answer*" not in text
    assert "[1] calculator(expression=47 * 12) · step 1" in text
    assert "1. tool_calls: calculator(expression=47 * 12) ✓\n2. final" in text
    assert "*Review* · rejected: exhausted · llm_unavailable · L2 — The model server stayed unreachable" in text
    assert "rejected by <@U0REVIEWER>, <!date^" in text
    assert "reason: Ask the finance team instead." in text


async def test_parley_show_refuses_someone_elses_run_and_leaks_nothing(db, slack_api, llm_server):
    theirs = await add_run(db, "Salary of my manager?", asker=OTHER, answer="It is 123,456 a year [1]")
    async with running_bot(db, slack_api, llm_server.base_url, review=ReviewConfig(reviewers=(REVIEWER,))) as bot:
        whole = await command(bot, f"show {theirs.id}")
        prefix = await command(bot, f"show {theirs.id[:8]}")
        unknown = await command(bot, "show 0123456789abcdef")
        reviewer = await command(bot, f"show {theirs.id[:8]}", user=REVIEWER)

    for refused in (whole, prefix):
        assert text_of(refused).startswith("No run of yours matches `")
        assert "Salary" not in str(refused) and "123,456" not in str(refused) and OTHER not in str(refused)
    # Someone else's run reads exactly like one that does not exist.
    assert text_of(prefix).replace(theirs.id[:8], "X") == text_of(unknown).replace("0123456789abcdef", "X")
    assert "Salary of my manager?" in text_of(reviewer) and "123,456" in text_of(reviewer)


async def test_parley_show_asks_for_more_characters_when_a_prefix_is_ambiguous_or_short(db, slack_api, llm_server):
    await add_run(db, "First", run_id="abcdef01" + uuid.uuid4().hex[8:])
    await add_run(db, "Second", run_id="abcdef02" + uuid.uuid4().hex[8:])
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        ambiguous = await command(bot, "show abcdef0")
        short = await command(bot, "show abc")
        missing = await command(bot, "show")
        unique = await command(bot, "show abcdef02")

    assert text_of(ambiguous) == "`abcdef0` matches more than one run; give more characters."
    assert text_of(short).endswith("Give the whole id or at least 6 characters.")
    assert text_of(missing).startswith("Which run?")
    assert "*Question*\nSecond" in text_of(unique)


async def test_parley_show_a_long_answer_goes_on_in_more_ephemeral_messages(db, slack_api, llm_server):
    sentences = [f"Sentence {n:04d} of a long answer." for n in range(700)]  # ~24,000 characters
    run = await add_run(db, "Tell me everything", answer=" ".join(sentences))
    with FakeHttpApi() as response_url:
        response_url.route("/commands/1", ApiReply.with_bytes(b"ok", content_type="text/plain"))
        async with running_bot(db, slack_api, llm_server.base_url) as bot:
            first = await command(bot, f"show {run.id[:8]}", response_url=response_url.url("/commands/1"))

            def everything() -> list[dict[str, Any]]:
                messages = [first, *(request.json for request in response_url.requests)]
                shown = "".join(text_of(message) for message in messages)
                assert all(sentence in shown for sentence in sentences), "not all of the answer yet"
                return messages

            messages = await slack_api.wait_for_async(everything, what="the whole answer")

    assert len(messages) >= 3  # ~24,000 characters do not fit one message, nor two
    assert sentences[0] in text_of(first)  # the first part at once, in the acknowledgement
    assert all(message["response_type"] == "ephemeral" for message in messages)
    assert all(len(message["blocks"]) <= 50 for message in messages)
    assert all(len(text) <= 3000 for message in messages for text in block_texts(message["blocks"]))


async def test_parley_help_and_unknown_words_show_the_usage(db, slack_api, llm_server):
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        bare = await command(bot, "")
        help_ = await command(bot, "help")
        unknown = await command(bot, "delete everything")

    for answer in (bare, help_):
        assert "`/parley runs STATUS`" in text_of(answer) and "`/parley show RUN_ID`" in text_of(answer)
    assert text_of(unknown).startswith("I don't know `delete`.")
    assert "`/parley show RUN_ID`" in text_of(unknown)


# -- failures and untrusted text ---------------------------------------------------------------------------------


async def test_database_down_is_a_plain_notice_for_the_command_and_the_home_tab(
    db, slack_api, llm_server, slack_pg_url
):
    proxy = await TcpProxy(PG_PORT).start()
    proxied = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{slack_pg_url.rsplit('/', 1)[1]}")
    try:
        async with running_bot(proxied, slack_api, llm_server.base_url) as bot:
            await proxy.close()  # the database is gone: new connections are refused
            runs = await command(bot, "runs")
            show = await command(bot, "show abcdef12")
            home = await open_home(bot, ASKER)
    finally:
        await proxy.close()
        await proxied.aclose()

    notice = "I can't read Parley's history right now: my database is unavailable. Please ask again in a minute."
    assert text_of(runs) == notice and text_of(show) == notice
    assert notice in text_of(home)
    assert "Traceback" not in str(runs) + str(show) + str(home)


async def test_questions_are_shown_inert_in_the_home_tab_and_the_commands(db, slack_api, llm_server):
    run = await add_run(db, HOSTILE, answer=f"You asked: {HOSTILE}")
    async with running_bot(db, slack_api, llm_server.base_url, review=ReviewConfig(reviewers=(REVIEWER,))) as bot:
        seen = [
            text_of(await open_home(bot, ASKER)),
            text_of(await open_home(bot, REVIEWER)),
            text_of(await command(bot, "runs")),
            text_of(await command(bot, f"show {run.id[:8]}")),
        ]

    for text in seen:
        assert "&lt;!channel&gt;" in text and "&lt;http://evil.example|click&gt; &amp; see" in text
        assert "<!channel>" not in text and "<http://evil" not in text and "@here" not in text


def test_manifest_declares_what_the_home_tab_and_the_command_need():
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    features, settings = manifest["features"], manifest["settings"]

    assert features["app_home"]["home_tab_enabled"] is True
    assert features["app_home"]["messages_tab_enabled"] is True
    [parley] = features["slash_commands"]
    assert parley["command"] == COMMAND and parley["url"].endswith("/slack/events")
    assert "app_home_opened" in settings["event_subscriptions"]["bot_events"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["interactivity"]["request_url"].endswith("/slack/events")
    assert {"commands", "usergroups:read", "chat:write"} <= set(manifest["oauth_config"]["scopes"]["bot"])
