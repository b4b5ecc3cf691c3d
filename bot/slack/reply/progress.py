"""RunProgress: where a run stands, as people follow it in its thread — one typed state, two renderers.

`SlackProgress` applies the run's trace events here; the chat.update medium renders the state as progress lines
(`lines`, shown by `blocks.progress_blocks`), the streaming medium as task-timeline chunks (`bot.slack.reply.chunks`).
Nothing of the model's draft text is kept: only tool calls, the Definition of Done and the checks' progress.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent import (
    DecisionKind,
    DoneItemTicked,
    FinalRejected,
    PlanMade,
    RetryScheduled,
    StepDecided,
    ToolCallFinished,
    TraceEvent,
    clip,
)
from bot.wording import InThread

MAX_ARGUMENT_CHARS = 60


class TaskStatus(StrEnum):
    """A task's state in Slack's task timeline (the chunk's `status`)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETE = "complete"
    ERROR = "error"


class TaskKind(StrEnum):
    TOOL_CALL = "tool_call"  # id: the tool call's id
    DONE_ITEM = "done_item"  # an item of the Definition of Done (the plan)
    CHECK = "check"  # the closing checks of a drafted answer


@dataclass
class Task:
    """One task of the timeline; `version` grows with every change (a renderer sends what changed since)."""

    id: str
    kind: TaskKind
    title: str
    status: TaskStatus = TaskStatus.PENDING
    details: str | None = None
    output: str | None = None
    code: str | None = None  # a failed tool call's error code (the lines show it; the timeline its meaning)
    version: int = 0


@dataclass
class RunProgress:
    """The progress of one run: its tasks in the order they appeared, and the progress lines of today's message."""

    question: str
    plan_title: str | None = None
    tasks: dict[str, Task] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    _line_of: dict[str, int] = field(default_factory=dict)  # tool_call_id → index of its "…" line
    _version: int = 0

    def apply(self, event: TraceEvent) -> bool:
        """Take one trace event in; False when it changes nothing people see."""
        match event:
            case PlanMade():
                self.plan_title = InThread.PLAN_TITLE
                for number, item in enumerate(event.items, 1):
                    self._set(f"done-{number}", TaskKind.DONE_ITEM, item.description)
            case StepDecided(decision=DecisionKind.TOOL_CALLS):
                for call in event.tool_calls:
                    self._line_of[call.id] = len(self.lines)
                    self.lines.append(f"… {call_text(call.name, call.arguments)}")
                    self._set(call.id, TaskKind.TOOL_CALL, call_text(call.name, call.arguments))
            case StepDecided(decision=DecisionKind.FINAL):
                self.lines.append("… checking the answer")
                self._set(f"check-{event.step}", TaskKind.CHECK, InThread.TASK_CHECK, TaskStatus.IN_PROGRESS)
            case RetryScheduled():
                self.lines.append(f"↻ retrying {event.tool} ({event.code})")
                meaning = problem_of(event.code)
                self._set(event.tool_call_id, details=InThread.TASK_RETRY.format(attempt=event.attempt, why=meaning))
            case ToolCallFinished():
                self._finish_call(event)
            case DoneItemTicked():
                items = [t for t in self.tasks.values() if t.kind is TaskKind.DONE_ITEM and t.title == event.item]
                if not items:
                    return False
                self._set(items[0].id, status=TaskStatus.COMPLETE)
            case FinalRejected():
                self._set(f"check-{event.step}", status=TaskStatus.ERROR, details=InThread.TASK_DRAFT_REJECTED)
            case _:
                return False
        return True

    def start_calls(self) -> bool:
        """The calls just decided are running now (the engine runs a step's calls as one batch)."""
        pending = [t for t in self.tasks.values() if t.kind is TaskKind.TOOL_CALL and t.status is TaskStatus.PENDING]
        for task in pending:
            self._set(task.id, status=TaskStatus.IN_PROGRESS)
        return bool(pending)

    def close_checks(self) -> None:
        """The run ended and its answer passed: the checks still open are complete."""
        for task in self.tasks.values():
            if task.kind is TaskKind.CHECK and task.status is TaskStatus.IN_PROGRESS:
                self._set(task.id, status=TaskStatus.COMPLETE)

    def running_tools(self) -> list[str]:
        """The tools being called now, once each, in order (the thread's status names them)."""
        active = (TaskStatus.PENDING, TaskStatus.IN_PROGRESS)
        names = [
            t.title.split("(", 1)[0] for t in self.tasks.values() if t.kind is TaskKind.TOOL_CALL and t.status in active
        ]
        return list(dict.fromkeys(names))

    def _finish_call(self, event: ToolCallFinished) -> None:
        mark = "✓" if event.ok else "✗"
        outcome = "" if event.ok else f" {event.code}"
        line = f"{mark} {call_text(event.tool, event.arguments)}{outcome}"
        index = self._line_of.pop(event.tool_call_id, None)
        if index is None:
            self.lines.append(line)
        else:
            self.lines[index] = line
        if event.tool_call_id not in self.tasks:
            self._set(event.tool_call_id, TaskKind.TOOL_CALL, call_text(event.tool, event.arguments))
        if event.ok:
            self._set(event.tool_call_id, status=TaskStatus.COMPLETE, output=event.cite)
        else:
            meaning = problem_of(event.code)
            retried = InThread.TASK_RETRIED.format(count=event.retries) if event.retries else ""
            self._set(event.tool_call_id, status=TaskStatus.ERROR, output=meaning + retried, code=event.code)

    def _set(
        self,
        task_id: str,
        kind: TaskKind | None = None,
        title: str | None = None,
        status: TaskStatus | None = None,
        **changes: Any,
    ) -> None:
        task = self.tasks.get(task_id)
        if task is None:
            if kind is None or title is None:
                return  # an event about a task never announced (a resumed run): nothing to change
            task = self.tasks[task_id] = Task(task_id, kind, title)
        if status is not None:
            task.status = status
        for name, value in changes.items():
            setattr(task, name, value)
        self._version += 1
        task.version = self._version


def problem_of(code: str | None) -> str:
    """A tool failure's plain meaning, for people (its code is for operators and the model)."""
    return InThread.TOOL_PROBLEMS.get(code or "", InThread.TOOL_PROBLEM_UNKNOWN)


def call_text(tool: str, arguments: Any) -> str:
    """A tool call as people read it in progress: `get_weather(city="Paris")` (not yet escaped)."""
    if not isinstance(arguments, dict) or not arguments:
        return f"{tool}()"
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{tool}({clip(shown, MAX_ARGUMENT_CHARS)})"
