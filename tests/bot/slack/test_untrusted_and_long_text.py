"""Text Parley does not control, end to end: what people and tools write is shown, never obeyed as Slack
syntax; and an answer longer than a message is split over sections and messages without losing a word."""

from __future__ import annotations

import itertools
import re
import string

from agent import ToolError
from tests.agent.toolbox import ScriptedTool
from tests.bot.slack.harness import EVERY_STATE, running_bot, scripted
from tests.bot.slack.seen import answer_in, everything_posted, runs, shown
from tests.fakes.slack_events import CHANNEL, app_mention

HOSTILE_QUESTION = "<!channel> @here <https://evil.com|bank> what does the notice board say?"
NOTICE = "<!everyone> urgent: confirm your password at <https://evil.com|the bank> @channel"
LINK_OR_BROADCAST = re.compile(r"<[!#@]|<https?:|<mailto:", re.IGNORECASE)
BARE_BROADCAST = re.compile(r"@(here|channel|everyone)\b", re.IGNORECASE)

SECTION_CHARS = 3000  # Slack: a section's text
MESSAGE_BLOCKS = 50  # Slack: blocks in one message


def notice_board() -> ScriptedTool:
    """A tool whose result (and whose error, for one argument) carries Slack control syntax."""

    def read(arguments):
        if arguments.get("board") == "<!here>":
            raise ToolError("NOT_FOUND", "no board named <!here>; try <https://evil.com|this one> @everyone")
        return {"board": arguments.get("board"), "notice": NOTICE}

    schema = {"type": "object", "properties": {"board": {"type": "string"}}, "required": ["board"]}
    return ScriptedTool("notice_board", read, parameters=schema)


async def test_slack_syntax_from_people_and_tools_is_never_posted_live(db, slack_api, llm_server):
    llm_server.respond_with(
        scripted(
            {"tool": "notice_board", "args": {"board": "<!here>"}},
            {"tool": "notice_board", "args": {"board": "lobby"}},
            {"final": f"The lobby board says: {NOTICE} [1]"},
        )
    )
    tools = ("calculator", notice_board())
    async with running_bot(db, slack_api, llm_server.base_url, tools=tools, update_interval_s=EVERY_STATE) as bot:
        body = app_mention(HOSTILE_QUESTION)
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])

    [run] = await runs(db)
    assert run.status == "solved", run.answer
    posted = everything_posted(slack_api)
    progress = "\n".join(posted)
    assert "notice_board(board=" in progress and "NOT_FOUND" in progress  # the calls were shown…
    live = [text for text in posted if LINK_OR_BROADCAST.search(text) or BARE_BROADCAST.search(text)]
    assert live == []  # …and nothing anyone posted could ping a channel or hide a link
    text = shown(answer)
    assert "&lt;!everyone&gt; urgent" in text  # shown as text, not dropped
    assert "&lt;https://evil.com|the bank&gt;" in text
    assert "\u200dchannel" in text  # "@channel" with a zero-width joiner: visible, inert


def long_answer() -> tuple[str, list[str]]:
    """About 12,000 characters in 55 paragraphs, each with a unique tag word and a cited number."""
    tags = ["".join(pair) + "tag" for pair in itertools.product(string.ascii_lowercase[:8], repeat=2)][:55]
    filler = "The calculator result stays the same whichever way the figures are grouped or read aloud. " * 2
    paragraphs = [f"Paragraph {tag}: six times seven is 42 [1]. {filler.strip()}" for tag in tags]
    return "\n\n".join(paragraphs), tags


async def test_a_long_answer_is_split_over_sections_and_messages_losing_nothing(db, slack_api, llm_server):
    final, tags = long_answer()
    assert 11_000 < len(final) < 13_000
    llm_server.respond_with(scripted({"tool": "calculator", "args": {"expression": "6 * 7"}}, {"final": final}))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = app_mention("what is 6 times 7, at length?")
        assert (await bot.post(body)).status_code == 200
        messages = await answer_in(slack_api, CHANNEL, body["event"]["ts"])

    [run] = await runs(db)
    assert run.status == "solved"
    assert len(messages) >= 2  # too long for one message: the first replaced the placeholder, more followed
    for message in messages:
        assert 0 < len(message["blocks"]) <= MESSAGE_BLOCKS
        for block in message["blocks"]:
            if block["type"] == "section":
                assert 0 < len(block["text"]["text"]) <= SECTION_CHARS
    sections = [b["text"]["text"] for m in messages for b in m["blocks"] if b["type"] == "section"]
    assert len(sections) > len(messages)  # split into several sections, not one cut-off block
    assert " ".join("".join(sections).split()) == " ".join(final.split())  # every word, in order
    assert all("".join(sections).count(tag) == 1 for tag in tags)
    last = shown(messages[-1])
    assert "*Sources*" in last and "[1] calculator(expression=6 * 7)" in last and f"run `{run.id[:12]}`" in last
