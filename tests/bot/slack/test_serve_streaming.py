"""A real `parley serve` in a workspace that streams, and in one that refuses to: signed requests in, the fake
Slack Web API out, the command line reading the same database afterwards.

Streaming: the thread's status while the run works, one streamed message (start, task updates, the verified
answer last, stop with the sources, status line, 👍 / 👎 and the end-of-run mark); a colleague's 👎 with a note
goes to the reviewer channel and is listed by `parley runs list --feedback down` and `parley runs show`.
Refused (`not_allowed`): two questions are answered by updated messages, and the process says so once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.bot.slack.harness import ByQuestion, calculation
from tests.bot.slack.seen import STATUS_MARK, shown
from tests.bot.slack.test_serve_process import (
    PARLEY,
    STOP_S,
    environment,
    parley,
    serve_environment,
    wait_until_healthy,
)
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.slack_api import FakeSlackApi, SlackCall
from tests.fakes.slack_events import CHANNEL, SIGNING_SECRET, app_mention, feedback_click, post_event, view_submission
from tests.serving import free_port, server_process, terminate

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

QUESTION = "What is 47 times 12?"
COLLEAGUE = "U0COLLEAGUE"
REVIEW_CHANNEL = "C0REVIEWS"
ANSWER_S = 30
CONFIG = f"""\
limits: {{retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.05, llm_max_retries: 1}}
tools:
  - builtin: calculator
review:
  channel: {REVIEW_CHANNEL}
  reviewers: [U0REVIEWER]
  escalate_on_feedback: true
"""
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


@contextmanager
def served(tmp_path: Path, database: str, slack: FakeSlackApi, llm: FakeLLMServer) -> Iterator[tuple[str, Path]]:
    """`parley serve` on a free port (its events URL, its stderr file); SIGTERM on the way out."""
    config = tmp_path / "parley.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    env = serve_environment(tmp_path, database, slack, llm, workers=1)
    port = free_port()
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1", "--config", str(config)]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr, stdout=stdout) as server:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr)
        yield f"http://127.0.0.1:{port}/slack/events", stderr
        terminate(server, STOP_S)


def appended_text(call: SlackCall) -> str:
    return "".join(
        chunk.get("text", "") for chunk in call.params.get("chunks") or [] if chunk["type"] == "markdown_text"
    )


def feedback_values(blocks: list[dict]) -> dict[str, str]:
    [buttons] = [
        element
        for block in blocks
        if block["type"] == "context_actions"
        for element in block["elements"]
        if element["type"] == "feedback_buttons"
    ]
    return {"up": buttons["positive_button"]["value"], "down": buttons["negative_button"]["value"]}


def test_parley_serve_streams_a_verified_answer_and_a_colleagues_thumbs_down_reaches_reviewers_and_the_cli(
    tmp_path: Path, serve_db: str, llm_server: FakeLLMServer
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    with FakeSlackApi(streaming=True) as slack, served(tmp_path, serve_db, slack, llm_server) as (events, _):
        mention = app_mention(QUESTION)
        thread = mention["event"]["ts"]
        assert post_event(events, mention, SIGNING_SECRET).status_code == 200
        [stop] = slack.wait_for(lambda: slack.calls("chat.stopStream"), timeout_s=ANSWER_S, what="the stream's end")
        streamed = [call for call in slack.calls() if call.method in STREAM_METHODS]
        [message] = slack.messages_in(CHANNEL, thread)

        run_id = stop.params["metadata"]["event_payload"]["run_id"]
        down = feedback_values(stop.params["blocks"])["down"]
        clicked = feedback_click(down, user=COLLEAGUE, message_ts=message["ts"])
        assert post_event(events, clicked, SIGNING_SECRET).status_code == 200
        slack.wait_for(lambda: slack.calls("views.open"), what="the 'what was wrong?' form")
        note = {"comment": {"comment_input": {"type": "plain_text_input", "value": "The unit is missing"}}}
        form = view_submission("parley_feedback_comment", note, user=COLLEAGUE, private_metadata=run_id)
        assert post_event(events, form, SIGNING_SECRET).status_code == 200
        [review] = slack.wait_for(
            lambda: (posted := slack.messages_in(REVIEW_CHANNEL)) and "unit is missing" in shown(posted[0]) and posted,
            what="the reviewer message with the note",
        )
        statuses = [call.params["status"] for call in slack.calls("assistant.threads.setStatus")]

    # One streamed message: started, task updates, the answer appended last (after the checks), then stopped.
    assert streamed[0].method == "chat.startStream" and streamed[-1] is stop
    appends = [call for call in streamed if call.method == "chat.appendStream"]
    assert [call for call in appends if appended_text(call)] == [appends[-1]]
    assert "564" in appended_text(appends[-1])
    tasks = [chunk for call in streamed for chunk in call.params.get("chunks") or [] if chunk["type"] == "task_update"]
    assert any(task["status"] == "complete" and "calculator" in task["title"] for task in tasks)
    assert statuses[0] and statuses[-1] == ""  # the status showed while it worked, and was cleared at the end
    # No placeholder posted or rewritten in the asker's thread: the stream was the reply.
    in_thread = [call.method for call in slack.calls() if call.params.get("channel") == CHANNEL]
    assert "chat.update" not in in_thread and "chat.postMessage" not in in_thread
    assert STATUS_MARK in shown({"blocks": stop.params["blocks"]})
    assert "564" in message["text"] and message["streaming"] is False
    assert "👎" in shown(review) and COLLEAGUE in shown(review)

    env = environment(tmp_path, PARLEY_DATABASE_URL=serve_db)
    listed = parley("runs", "list", "--feedback", "down", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["runs"]
    assert row["run_id"] == run_id and row["feedback"] == {"up": 0, "down": 1}
    assert json.loads(parley("runs", "list", "--feedback", "up", "--json", env=env, cwd=tmp_path).stdout)["runs"] == []
    detail = parley("runs", "show", run_id, env=env, cwd=tmp_path)
    assert detail.returncode == 0, detail.stderr
    assert COLLEAGUE in detail.stdout and "not the asker" in detail.stdout and "The unit is missing" in detail.stdout


def test_parley_serve_where_slack_refuses_streaming_answers_by_updated_messages_and_says_so_once(
    tmp_path: Path, serve_db: str, llm_server: FakeLLMServer
):
    questions = {"What is 47 times 12?": ("47 * 12", "564"), "What is 6 times 7?": ("6 * 7", "42")}
    llm_server.respond_with(ByQuestion({q: calculation(*math) for q, math in questions.items()}))
    slack = FakeSlackApi(streaming=True, refuse={"chat.startStream": "not_allowed"})
    threads = {}
    with slack, served(tmp_path, serve_db, slack, llm_server) as (events, stderr):
        for question in questions:
            mention = app_mention(question)
            thread = threads[question] = mention["event"]["ts"]
            assert post_event(events, mention, SIGNING_SECRET).status_code == 200
            slack.wait_for(
                lambda thread=thread: (found := slack.messages_in(CHANNEL, thread)) and STATUS_MARK in shown(found[-1]),
                timeout_s=ANSWER_S,
                what="the answer",
            )

    assert len(slack.calls("chat.startStream")) == 1  # tried once; the workspace is known to refuse it after
    assert not slack.calls("chat.appendStream") and not slack.calls("chat.stopStream")
    for question, thread in threads.items():
        [answer] = slack.messages_in(CHANNEL, thread)  # the placeholder, updated into the answer
        assert questions[question][1] in shown(answer) and feedback_values(answer["blocks"])
    said = stderr.read_text(encoding="utf-8")
    assert said.count("refused streaming") == 1 and "not_allowed" in said
