"""The streaming medium's renderer: a run's progress as task-timeline chunks, a message's text as markdown.

Pure functions, no I/O (`bot.slack.reply.stream` sends them). Tool and model text goes through `escape`, as in
blocks, so nothing in a task or an answer can mention, link or broadcast.
"""

from __future__ import annotations

from typing import Any

from agent import clip, shorten
from bot.slack.blocks import SlackMessage, escape
from bot.slack.reply.progress import RunProgress, Task

TITLE_CHARS = 200
DETAILS_CHARS = 500
MARKDOWN_CHARS = 12_000  # chat.appendStream's markdown_text limit


def task_chunk(task: Task) -> dict[str, Any]:
    """One task's current state, as a `task_update` chunk (slack_sdk's TaskUpdateChunk, as a dict)."""
    chunk: dict[str, Any] = {
        "type": "task_update",
        "id": task.id,
        "title": escape(shorten(task.title, TITLE_CHARS)),
        "status": task.status.value,
    }
    if task.details:
        chunk["details"] = escape(shorten(task.details, DETAILS_CHARS))
    if task.output:
        chunk["output"] = escape(shorten(task.output, DETAILS_CHARS))
    return chunk


def progress_chunks(progress: RunProgress, *, plan_title: str | None, sent: dict[str, int]) -> list[dict[str, Any]]:
    """What changed since the last append: the plan's title if it is new, then each changed task's latest state,
    in the order the tasks appeared. `plan_title` is the title already shown; `sent` maps task ids to the
    version last sent."""
    chunks: list[dict[str, Any]] = []
    if progress.plan_title is not None and progress.plan_title != plan_title:
        chunks.append({"type": "plan_update", "title": escape(shorten(progress.plan_title, TITLE_CHARS))})
    chunks.extend(task_chunk(t) for t in progress.tasks.values() if sent.get(t.id) != t.version)
    return chunks


def markdown_of(message: SlackMessage) -> str:
    """The text of a message's blocks before its closing ones (headers in bold), as a stream appends it.

    The blocks' text is already escaped mrkdwn; Slack reads `*bold*` of mrkdwn as emphasis in markdown, which
    keeps it readable.
    """
    parts: list[str] = []
    for block in message.body:
        text = block.get("text")
        if isinstance(text, dict):
            parts.append(f"**{text.get('text', '')}**" if block.get("type") == "header" else str(text.get("text", "")))
            continue
        parts.extend(str(e.get("text", "")) for e in block.get("elements") or [] if isinstance(e, dict) and "text" in e)
    return clip("\n\n".join(part for part in parts if part.strip()), MARKDOWN_CHARS)
