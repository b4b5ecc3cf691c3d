"""Block Kit rendering: what a Slack thread shows for each way a run can end, escaped and within Slack's limits.

Every message a test builds is checked against Block Kit's basics by hand and by slack_sdk's own models, so a
shape Slack would refuse (`invalid_blocks`, `msg_blocks_too_long`) fails here first.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from agent import REPLAY_NOTICE, Citation, DegradedFinal, Escalation, RunResult, RunStatus, TerminationReason
from bot.slack.blocks import (
    MESSAGE_CHARS,
    SlackMessage,
    answer_messages,
    escape,
    failure_message,
    progress_blocks,
    queued_message,
    status_emoji,
)

RUN_ID = "0f3c2a9e-5b7d-4c1e-9a8f-2d6b4e1c7a35"
ZWJ = "\u200d"
WEATHER = Citation(marker="[1]", tool="get_weather", tool_call_id="call_1", step=1, arguments={"city": "上海"})
SEARCH = Citation(
    marker="[2]", tool="web_search", tool_call_id="call_2", step=2, arguments={"query": "上海 空气质量", "limit": 3}
)
CHINESE_ANSWER = "上海今天晴，气温 28°C [1]。空气质量良好，AQI 为 42 [2]。"


def make_result(**fields: Any) -> RunResult:
    values: dict[str, Any] = {
        "run_id": RUN_ID,
        "question": "上海今天天气怎么样？空气质量呢？",
        "status": RunStatus.SOLVED,
        "termination_reason": TerminationReason.ANSWERED,
        "answer": CHINESE_ANSWER,
        "citations": [WEATHER, SEARCH],
        "completed": ["weather in Shanghai", "air quality in Shanghai"],
        "missing": [],
        "steps": 2,
        "llm_calls": 3,
        "tool_calls": 2,
        "retries": 0,
        "critique_rounds": 1,
    }
    return RunResult(**(values | fields))


def degraded_result(**fields: Any) -> RunResult:
    final = DegradedFinal(
        reason=TerminationReason.MAX_STEPS,
        explanation="the step limit (8) was reached before every part was answered",
        completed=["weather in Shanghai"],
        missing=["air quality in Shanghai"],
        known_facts=['weather in Shanghai: {"temp_c": 28, "note": "<!channel> sunny"} [1]'],
        citations=[WEATHER],
        next_steps=["Ask about the missing parts on their own, or raise limits.max_steps."],
    )
    values: dict[str, Any] = {
        "status": RunStatus.DEGRADED,
        "termination_reason": TerminationReason.MAX_STEPS,
        "answer": final.render(),
        "citations": [WEATHER],
        "completed": final.completed,
        "missing": final.missing,
        "steps": 8,
        "degraded": final,
    }
    return make_result(**(values | fields))


def refused_result() -> RunResult:
    escalation = Escalation(
        reason="policy_violation",
        level="L4",
        message="Wiring money to an outside account needs a person's approval.",
        tool="transfer_funds",
        arguments={"to": "DE00 1234", "amount": 5000},
        tool_call_id="call_9",
    )
    return make_result(
        status=RunStatus.REFUSED,
        termination_reason=TerminationReason.POLICY_VIOLATION,
        answer="Partial answer — a policy forbids this request: transfer_funds",
        citations=[],
        completed=[],
        missing=["transfer 5000 EUR"],
        steps=1,
        escalation=escalation,
    )


def texts(block: dict[str, Any]) -> list[str]:
    if "text" in block:
        return [block["text"]["text"]]
    return [element["text"] for element in block["elements"]]


def all_texts(messages: list[SlackMessage]) -> list[str]:
    return [message.text for message in messages] + [t for m in messages for b in m.blocks for t in texts(b)]


def sections(messages: list[SlackMessage]) -> list[str]:
    return [block["text"]["text"] for m in messages for block in m.blocks if block["type"] == "section"]


def status_line(messages: list[SlackMessage]) -> str:
    last = messages[-1].blocks[-1]
    assert last["type"] == "context"
    return last["elements"][0]["text"]


def unescape(text: str) -> str:
    text = text.replace("@" + ZWJ, "@")
    return re.sub(r"&(amp|lt|gt);", lambda m: {"amp": "&", "lt": "<", "gt": ">"}[m.group(1)], text)


def assert_block_kit(messages: list[SlackMessage]) -> None:
    """Every message fits Slack: block shapes, per-block limits, ≤ 50 blocks, bounded total and fallback text."""
    assert messages
    for message in messages:
        assert 1 <= len(message.blocks) <= 50
        assert 0 < len(message.text) <= 4000
        assert sum(len(t) for b in message.blocks for t in texts(b)) <= MESSAGE_CHARS
        json.dumps(message.blocks)
        for block in message.blocks:
            if block["type"] == "section":
                assert set(block) == {"type", "text"}
                assert set(block["text"]) == {"type", "text"} and block["text"]["type"] == "mrkdwn"
                assert block["text"]["text"].strip() and len(block["text"]["text"]) <= 3000
            elif block["type"] == "context":
                assert set(block) == {"type", "elements"} and 1 <= len(block["elements"]) <= 10
                for element in block["elements"]:
                    assert set(element) == {"type", "text"} and element["type"] == "mrkdwn"
                    assert element["text"].strip() and len(element["text"]) <= 2000
            elif block["type"] == "header":
                assert block["text"]["type"] == "plain_text" and 0 < len(block["text"]["text"]) <= 150
            else:
                pytest.fail(f"unexpected block type {block['type']!r}")
            parsed = Block.parse(block)
            parsed.validate_json()
            assert parsed.to_dict() == block


def test_escape_defuses_links_mentions_and_broadcasts() -> None:
    raw = "<!channel> <!here|here> <@U123> <https://evil.com|bank.com> @here @Channel @everyone a & b"
    escaped = escape(raw)
    assert "<" not in escaped and ">" not in escaped
    assert "&lt;!channel&gt;" in escaped and "&lt;https://evil.com|bank.com&gt;" in escaped
    assert "a &amp; b" in escaped
    assert re.search(r"@(here|channel|everyone)", escaped, re.IGNORECASE) is None
    assert unescape(escaped) == raw


def test_escape_keeps_every_other_text_intact() -> None:
    text = "上海今天晴 28°C，ありがとう, Привет, مرحبا 👋🏽 *bold* _it_ `code` ops@example.com #general [1]"
    assert escape(text) == text


def test_solved_answer_is_cited_with_sources_and_status() -> None:
    messages = answer_messages(make_result())
    assert_block_kit(messages)
    assert len(messages) == 1
    blocks = messages[0].blocks
    assert [b["type"] for b in blocks] == ["section", "context", "context"]
    assert blocks[0]["text"]["text"] == CHINESE_ANSWER
    sources = blocks[1]["elements"][0]["text"]
    assert sources.splitlines() == [
        "*Sources*",
        "[1] get_weather(city=上海) · step 1",
        # Arguments in key order: the same live and read back from the store (JSONB keeps no order of its own).
        "[2] web_search(limit=3, query=上海 空气质量) · step 2",
    ]
    assert status_line(messages) == f"✅ solved · 2 steps · run `{RUN_ID[:12]}`"
    assert messages[0].text.startswith(CHINESE_ANSWER)


def test_solved_answer_cannot_spoof_links_or_ping_anyone() -> None:
    answer = "Log in at <https://evil.com|bank> now <!channel> @here [1]"
    messages = answer_messages(make_result(answer=answer, citations=[WEATHER]))
    assert_block_kit(messages)
    assert not any("<" in text or ">" in text for text in all_texts(messages))
    assert sections(messages) == [escape(answer)]
    assert "&lt;https://evil.com|bank&gt;" in messages[0].text


def test_tool_arguments_in_sources_are_escaped() -> None:
    evil = Citation(marker="[1]", tool="web_search", tool_call_id="c", step=1, arguments={"q": "<!everyone> & co"})
    messages = answer_messages(make_result(answer="Found it [1].", citations=[evil]))
    assert_block_kit(messages)
    assert "[1] web_search(q=&lt;!everyone&gt; &amp; co) · step 1" in messages[0].blocks[1]["elements"][0]["text"]


def test_degraded_answer_is_marked_partial_and_says_what_is_missing() -> None:
    messages = answer_messages(degraded_result())
    assert_block_kit(messages)
    blocks = messages[0].blocks
    assert blocks[0] == {"type": "header", "text": {"type": "plain_text", "text": "⚠️ Partial answer", "emoji": True}}
    body = "\n".join(sections(messages))
    assert "*Why*\nthe step limit (8) was reached" in body
    assert '*What I found*\n• weather in Shanghai: {"temp_c": 28, "note": "&lt;!channel&gt; sunny"} [1]' in body
    assert "*Done*\n• weather in Shanghai" in body
    assert "*Missing*\n• air quality in Shanghai" in body
    assert "*What you can do*\n• Ask about the missing parts on their own" in body
    assert "[1] get_weather(city=上海) · step 1" in blocks[-2]["elements"][0]["text"]
    assert status_line(messages) == f"⚠️ degraded · max_steps · 8 steps · run `{RUN_ID[:12]}`"
    assert messages[0].text.startswith("⚠️ Partial answer")


def test_degraded_answer_quotes_the_verified_sentences_and_hides_the_failed_figure() -> None:
    final = degraded_result().degraded
    assert final is not None
    kept = final.model_copy(
        update={
            "verified": ["Shanghai is at 28 °C and cloudy [1]."],
            "unchecked": ["Beijing is at … [2]. — a figure matches no tool result"],
        }
    )
    messages = answer_messages(degraded_result(degraded=kept, answer=kept.render()))
    assert_block_kit(messages)
    body = "\n".join(sections(messages))
    assert "*What I could verify*\n• Shanghai is at 28 °C and cloudy [1]." in body
    assert "*What I could not check*\n• Beijing is at … [2]. — a figure matches no tool result" in body
    assert "*What I found*" not in body  # the verified sentences say it better than the raw facts


def test_degraded_answer_is_never_dressed_as_solved() -> None:
    messages = answer_messages(degraded_result())
    everything = "\n".join(all_texts(messages))
    assert "solved" not in everything and "✅" not in everything
    assert not any("<" in text or ">" in text for text in all_texts(messages))


def test_degraded_answer_without_its_final_still_shows_partial_with_the_answer() -> None:
    messages = answer_messages(degraded_result(degraded=None, answer="Partial answer — no usable tool remained"))
    assert_block_kit(messages)
    assert messages[0].blocks[0]["text"]["text"] == "⚠️ Partial answer"
    assert "no usable tool remained" in "\n".join(sections(messages))
    assert "*Missing*\n• air quality in Shanghai" in "\n".join(sections(messages))


def test_refused_request_says_why_and_that_a_person_reviews_it() -> None:
    messages = answer_messages(refused_result())
    assert_block_kit(messages)
    blocks = messages[0].blocks
    assert [b["type"] for b in blocks] == ["header", "section", "section", "context"]
    assert blocks[0]["text"]["text"] == "⛔ I can't do this"
    assert blocks[1]["text"]["text"] == "Wiring money to an outside account needs a person's approval."
    assert blocks[2]["text"]["text"] == "A person will review this request."
    assert status_line(messages) == f"⛔ refused · policy_violation · 1 step · run `{RUN_ID[:12]}`"


def test_status_emoji_one_for_every_status_and_one_for_a_status_it_does_not_know() -> None:
    shown = {status: status_emoji(status) for status in RunStatus}
    assert len(set(shown.values())) == len(RunStatus)  # each status has its own
    assert status_emoji("awaiting_review") == status_emoji(RunStatus.AWAITING_REVIEW) == "⏸️"
    assert status_emoji("archived") == "❔"  # written by a newer version


def test_status_line_of_an_answer_uses_the_same_emoji_as_the_history() -> None:
    rejected = refused_result().model_copy(update={"status": RunStatus.REJECTED})
    assert status_line(answer_messages(rejected)).startswith(f"{status_emoji(RunStatus.REJECTED)} rejected · ")
    held = refused_result().model_copy(update={"status": RunStatus.AWAITING_REVIEW})
    assert status_line(answer_messages(held)).startswith("⏸️ awaiting_review · ")


@pytest.mark.parametrize("status", [s for s in RunStatus if s is not RunStatus.SOLVED])
def test_every_unsolved_status_renders_without_a_solved_look(status: RunStatus) -> None:
    messages = answer_messages(degraded_result(status=status))
    assert_block_kit(messages)
    assert "✅" not in "\n".join(all_texts(messages))
    assert status.value in status_line(messages)


def test_replayed_run_says_so_in_its_status_line() -> None:
    messages = answer_messages(make_result(replayed=True))
    assert [e["text"] for e in messages[-1].blocks[-1]["elements"]][1] == REPLAY_NOTICE


def test_empty_answer_is_shown_as_empty_not_as_an_invalid_block() -> None:
    messages = answer_messages(make_result(answer="  ", citations=[]))
    assert_block_kit(messages)
    assert "empty" in sections(messages)[0]


def test_long_answer_of_20000_chars_is_split_across_messages_without_loss() -> None:
    paragraph = "上海 <b>today</b> & tomorrow: sunny, 28°C [1]. Wind 3 m/s; AQI 42 [2]! 明天多云。 @here "
    answer = "\n\n".join(f"{n}. " + paragraph * (1 + n % 7) for n in range(200))[:20_000]
    assert len(answer) == 20_000
    messages = answer_messages(make_result(answer=answer))
    assert_block_kit(messages)
    assert len(messages) > 1
    assert unescape("".join(sections(messages))) == answer
    assert all(len(text) <= 3000 for text in sections(messages))
    assert status_line(messages).startswith("✅ solved")
    assert sum(b["type"] == "context" for m in messages[:-1] for b in m.blocks) == 0


def test_answer_of_200_short_paragraphs_is_split_only_between_paragraphs() -> None:
    answer = "\n\n".join(f"Paragraph {n}: Shanghai was 28°C on day {n} [1]." for n in range(200))
    messages = answer_messages(make_result(answer=answer))
    assert_block_kit(messages)
    pieces = sections(messages)
    assert len(pieces) > 1
    assert "".join(pieces) == answer
    assert all(piece.endswith("[1].\n\n") for piece in pieces[:-1])


def test_text_without_any_break_is_hard_split_outside_entities() -> None:
    answer = "&<>" * 5000
    messages = answer_messages(make_result(answer=answer))
    assert_block_kit(messages)
    pieces = sections(messages)
    assert all(re.fullmatch(r"(&amp;|&lt;|&gt;)+", piece) for piece in pieces)
    assert unescape("".join(pieces)) == answer


def test_long_chinese_text_is_split_at_sentence_ends() -> None:
    answer = "上海今天晴，气温二十八度，空气质量良好，适合出门散步 [1]。" * 400
    pieces = sections(answer_messages(make_result(answer=answer)))
    assert len(pieces) > 1
    assert all(piece.endswith("[1]。") for piece in pieces)
    assert "".join(pieces) == answer


def test_defused_broadcast_is_never_split_apart() -> None:
    answer = ("x" * 2999 + "@here") * 3
    pieces = sections(answer_messages(make_result(answer=answer)))
    assert not any(piece.endswith("@") or piece.startswith(ZWJ) for piece in pieces)
    assert unescape("".join(pieces)) == answer


def test_many_sources_are_all_listed_within_limits() -> None:
    citations = [
        Citation(marker=f"[{n}]", tool="web_search", tool_call_id=f"c{n}", step=n, arguments={"query": "q" * 80})
        for n in range(1, 301)
    ]
    messages = answer_messages(make_result(answer="Many sources [1].", citations=citations))
    assert_block_kit(messages)
    listed = "\n".join(e["text"] for m in messages for b in m.blocks if b["type"] == "context" for e in b["elements"])
    assert all(f"[{n}] web_search(query={'q' * 80}) · step {n}" in listed for n in range(1, 301))


def test_long_degraded_parts_survive_the_split() -> None:
    facts = [f"fact {n}: " + "温度 28°C <ok> " * 40 + f"[{n}]" for n in range(60)]
    final = degraded_result().degraded
    assert final is not None
    messages = answer_messages(degraded_result(degraded=final.model_copy(update={"known_facts": facts})))
    assert_block_kit(messages)
    body = unescape("".join(sections(messages)))
    assert all(f"• {fact}" in body for fact in facts)
    assert messages[0].blocks[0]["type"] == "header"
    assert status_line(messages).startswith("⚠️ degraded")


def test_progress_shows_working_the_question_and_step_lines() -> None:
    lines = [
        "✓ get_weather(city=上海)",
        "✗ get_weather(city=上嗨) CITY_NOT_FOUND",
        "↻ retrying web_search (UPSTREAM_DOWN)",
    ]
    message = progress_blocks("@here 上海天气 <!channel>?", lines, state="working")
    assert_block_kit([message])
    assert message.text == "⏳ Working on it…"
    assert message.blocks[0]["text"]["text"] == "⏳ Working on it…"
    assert message.blocks[1]["elements"][0]["text"] == f"❓ @{ZWJ}here 上海天气 &lt;!channel&gt;?"
    assert message.blocks[-1]["text"]["text"] == "\n".join(lines)


def test_progress_without_lines_has_no_empty_section() -> None:
    message = progress_blocks("上海天气?", [], state="working")
    assert_block_kit([message])
    assert [b["type"] for b in message.blocks] == ["section", "context"]


def test_progress_folds_earlier_lines_and_says_how_many() -> None:
    lines = [f"✓ get_weather(city=城市{n})" for n in range(100)]
    message = progress_blocks("天气?", lines, state="working")
    assert_block_kit([message])
    assert message.blocks[2]["elements"][0]["text"] == "… 85 earlier lines folded"
    assert message.blocks[3]["text"]["text"].splitlines() == lines[-15:]


def test_progress_with_huge_lines_stays_in_one_valid_message() -> None:
    lines = ["✗ " + "<" * 5000 for _ in range(20)]
    message = progress_blocks("?" * 10_000, lines, state="working")
    assert_block_kit([message])
    shown = message.blocks[-1]["text"]["text"].splitlines()
    folded = int(re.search(r"(\d+) earlier", message.blocks[2]["elements"][0]["text"]).group(1))
    assert folded + len(shown) == 20 and shown
    assert all(line.endswith("…") for line in shown)


def test_progress_while_queued_counts_runs_ahead() -> None:
    message = progress_blocks("天气?", [], state="queued", ahead=3)
    assert_block_kit([message])
    assert message.text == "🕒 Queued — 3 runs ahead of you"


@pytest.mark.parametrize(
    ("position", "headline"),
    [(0, "🕒 Queued — you're next"), (1, "🕒 Queued — 1 run ahead of you"), (4, "🕒 Queued — 4 runs ahead of you")],
)
def test_queued_message_says_how_many_runs_are_ahead(position: int, headline: str) -> None:
    message = queued_message(position)
    assert_block_kit([message])
    assert message.text == headline and message.blocks[0]["text"]["text"] == headline


def test_failure_message_is_calm_and_names_the_run() -> None:
    message = failure_message("the language model could not be reached", RUN_ID)
    assert_block_kit([message])
    assert message.blocks[0]["text"]["text"] == "⚠️ I couldn't answer this: the language model could not be reached."
    assert message.blocks[1]["elements"][0]["text"] == f"If you tell an operator, mention run `{RUN_ID[:12]}`."


def test_failure_message_never_shows_a_traceback() -> None:
    problem = 'the database is unavailable <@U1>.\nTraceback (most recent call last):\n  File "x.py", line 1\nOSError'
    message = failure_message(problem, None)
    assert_block_kit([message])
    assert [b["type"] for b in message.blocks] == ["section"]
    assert message.text == "⚠️ I couldn't answer this: the database is unavailable &lt;@U1&gt;."
    assert "Traceback" not in message.text


def test_an_answer_as_posted_ends_with_the_feedback_buttons_after_its_status_line() -> None:
    plain = answer_messages(make_result())
    [posted] = answer_messages(make_result(), feedback=True)
    [block] = [b for b in posted.blocks if b["type"] == "context_actions"]

    assert posted.blocks[:-1] == plain[0].blocks and posted.blocks[-1] is block  # after the status line
    [buttons] = block["elements"]
    assert buttons["type"] == "feedback_buttons" and buttons["action_id"] == "parley_feedback"
    assert buttons["positive_button"]["value"] == f"up:{RUN_ID}"
    assert buttons["negative_button"]["value"] == f"down:{RUN_ID}"
