"""`parley runs list|show|export`: the history, for people and for analysis."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from agent import DecisionKind, ErrorCode, OutcomeKind, RunResult, RunStatus, TerminationReason, shorten
from bot.cli.render import render_citations
from bot.cli.usage import UsageError
from bot.core import (
    BadCursor,
    FeedbackVerdict,
    History,
    RunFilter,
    RunSource,
    RunSummary,
    StoredEscalation,
    StoredFeedback,
    StoredTrace,
    StoredVerdict,
    Tally,
    VerdictKind,
)
from bot.settings import Settings
from bot.store import open_store
from bot.store.queries import EXPORT_COLUMNS
from bot.wording import InFeedback

_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
NOT_A_CURSOR = "--cursor {cursor!r} is not a cursor printed by `parley runs list`"


def add_parser(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="browse the history of runs")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)

    listing = runs_sub.add_parser("list", help="runs, newest first, a page at a time")
    _add_filters(listing)
    listing.add_argument("--limit", type=int, default=50, help="runs per page (default 50)")
    listing.add_argument("--cursor", help="continue after the page that printed this cursor")
    listing.add_argument("--json", action="store_true")

    show = runs_sub.add_parser("show", help="one run's whole trace, step by step")
    show.add_argument("run_id", help="the run id, or a unique prefix of at least 6 characters")
    show.add_argument("--json", action="store_true")

    export = runs_sub.add_parser("export", help="every matching run, for analysis")
    _add_filters(export)
    export.add_argument("--format", choices=("jsonl", "csv"), required=True)
    export.add_argument("--output", type=Path, help="file to write (default: standard output)")
    runs.set_defaults(handler=run)


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", action="append", choices=[s.value for s in RunStatus], help="repeatable")
    parser.add_argument(
        "--reason", action="append", choices=[r.value for r in TerminationReason], help="termination reason"
    )
    parser.add_argument("--since", help="ISO date or time (2026-11-30, 2026-11-30T08:00Z) or 30m, 2h, 7d, 1w")
    parser.add_argument("--asker", help="who asked (a Slack user id, or cli:NAME)")
    parser.add_argument(
        "--feedback", choices=[v.value for v in FeedbackVerdict], help="runs someone gave this verdict (👍 up, 👎 down)"
    )
    parser.add_argument(
        "--source",
        choices=[s.value for s in RunSource],
        help="only runs asked this way (default: every run but `parley eval`'s; `eval` lists those)",
    )


def parse_since(text: str | None, *, now: datetime | None = None) -> datetime | None:
    if not text:
        return None
    text = text.strip()
    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = relative.groups()
        try:
            return (now or datetime.now(UTC)) - timedelta(**{_UNITS[unit]: int(amount)})
        except OverflowError:
            raise UsageError(f"--since {text!r} reaches back before any date") from None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since {text!r}: use an ISO date or time, or an age such as 30m, 2h, 7d") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _filters(args: argparse.Namespace) -> RunFilter:
    return RunFilter(
        statuses=args.status or (),
        reasons=args.reason or (),
        since=parse_since(args.since),
        asker=args.asker,
        feedback=args.feedback,
        source=args.source,
    )


async def run(args: argparse.Namespace, settings: Settings) -> int:
    db = await open_store(settings.database_url)
    try:
        return await run_runs_command(args, History(db), sys.stdout)
    finally:
        await db.aclose()


async def run_runs_command(args: argparse.Namespace, history: History, out: TextIO) -> int:
    if args.runs_command == "list":
        if args.limit < 1 or args.limit > 1000:
            raise UsageError("--limit must be between 1 and 1000")
        try:
            page = await history.runs(_filters(args), limit=args.limit, cursor=args.cursor)
        except BadCursor as exc:
            raise UsageError(NOT_A_CURSOR.format(cursor=exc.cursor)) from None
        counted = await history.tallies([run.id for run in page.runs])
        if args.json:
            listed = [run_summary(r) | {"feedback": asdict(counted.get(r.id, Tally()))} for r in page.runs]
            body = {"runs": listed, "next_cursor": page.next_cursor}
            out.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        else:
            out.write(render_list(page.runs, page.next_cursor, counted))
        return 0
    if args.runs_command == "show":
        trace = await history.trace(args.run_id)
        if args.json:
            out.write(json.dumps(trace_as_dict(trace), ensure_ascii=False, indent=2, default=str) + "\n")
        else:
            out.write(render_trace(trace))
        return 0
    filters = _filters(args)  # a refused filter must leave an existing --output alone
    if not args.output:
        await export_runs(history, filters, args.format, out)
        return 0
    # Written beside the target and moved over it at the end: a failed export never leaves half a file.
    partial = args.output.with_name(args.output.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as target:
            count = await export_runs(history, filters, args.format, target)
        partial.replace(args.output)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write --output {args.output}: {exc.strerror or exc}") from None
    print(f"exported {count} run{'' if count == 1 else 's'} to {args.output}")
    return 0


async def export_runs(history: History, filters: RunFilter, fmt: str, out: TextIO) -> int:
    writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS) if fmt == "csv" else None
    if writer:
        writer.writeheader()
    count = 0
    async for row in history.export(filters):
        if writer:
            writer.writerow(
                {k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v for k, v in row.items()}
            )
        else:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        count += 1
    return count


def run_summary(run: RunSummary) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "created_at": run.created_at.isoformat(),
        "source": run.source,
        "asker": run.asker,
        "question": run.question,
        "status": run.status,
        "termination_reason": run.termination_reason,
        "steps": run.steps,
        "tool_calls": run.tool_calls,
        "duration_ms": run.duration_ms,
    }


def render_list(runs: list[RunSummary], next_cursor: str | None, feedback: dict[str, Tally] | None = None) -> str:
    if not runs:
        return "no runs match\n"
    lines = [
        f"{'RUN':<12}  {'CREATED (UTC)':<19}  {'STATUS':<15}  {'REASON':<19}  {'STEPS':>5}  {'ASKER':<16}  "
        f"{'FEEDBACK':<9}  QUESTION"
    ]
    for run in runs:
        created = run.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        tally = (feedback or {}).get(run.id)
        given = f"👍{tally.up}·👎{tally.down}" if tally else "-"
        lines.append(
            f"{run.id[:12]:<12}  {created:<19}  {run.status:<15}  {run.termination_reason or '-':<19}  "
            f"{run.steps:>5}  {shorten(run.asker, 16):<16}  {given:<9}  {shorten(run.question, 60)}"
        )
    if next_cursor:
        lines.append(f"more: add --cursor {next_cursor}")
    return "\n".join(lines) + "\n"


def render_trace(trace: StoredTrace) -> str:
    run = trace.run
    result = run.result
    lines = [
        f"run {run.id}",
        f"  status       {run.status} ({result.termination_reason if result else 'not finished'})",
        f"  outcome      {run.outcome or 'not finished'}",
        f"  asked by     {run.asker} via {run.source}" + (f" in {run.channel_id}" if run.channel_id else ""),
        f"  created      {run.created_at.isoformat()}"
        + (f" · {result.duration_ms} ms" if result and result.duration_ms else ""),
        f"  brain        {run.brain}" + (" (replayed)" if run.replayed else "") + f" · config {run.config_hash}",
        _counters(result),
        "",
        f"Q: {run.question}",
    ]
    if trace.done_plan:
        lines.append("Definition of Done:")
        lines.extend(f"  - {item.get('description')}" for item in trace.done_plan)
    calls_by_step: dict[int, list] = {}
    for call in trace.tool_calls:
        calls_by_step.setdefault(call.step, []).append(call)
    verdicts_by_step: dict[int | None, list] = {}
    for verdict in trace.verdicts:
        verdicts_by_step.setdefault(verdict.step, []).append(verdict)
    for step in trace.steps:
        lines.append("")
        head = f"step {step.step} · {step.decision}"
        if step.thought:
            head += f" — {shorten(step.thought, 100)}"
        lines.append(head)
        if step.decision in (DecisionKind.FINAL, DecisionKind.GIVE_UP, DecisionKind.INVALID) and step.text:
            lines.append(f"  text: {step.text}")
        for call in calls_by_step.get(step.step, []):
            args = json.dumps(call.arguments, ensure_ascii=False)
            outcome = "ok" if call.ok else f"{call.error_code} ({call.error_level})"
            retries = f" · {call.retries} retries" if call.retries else ""
            lines.append(f"  {call.tool}({args}) → {outcome} · {call.latency_ms} ms{retries} · id {call.tool_call_id}")
            lines.append(f"    observation: {shorten(call.observation, 300)}")
            if call.raw_truncated:
                lines.append(f"    raw result: {call.raw_bytes} bytes, stored cut")
        for verdict in verdicts_by_step.get(step.step, []):
            lines.append(f"  {_verdict_line(verdict)}")
    lines.extend(_crash_lines(trace))
    lines.append("")
    lines.append("Answer:" if run.outcome is OutcomeKind.ANSWERED else "Final (as the user saw it):")
    lines.append((result.answer if result else run.answer) or "(none yet)")
    if result is not None:
        lines.extend(_result_details(result))
    for esc in trace.escalations:
        lines.append(f"Escalation ({esc.status}): {esc.reason} {esc.level} — {esc.message}")
        if esc.tool:
            lines.append(f"  held action: {esc.tool}({json.dumps(esc.arguments, ensure_ascii=False)})")
    if trace.feedback:
        lines.append("Feedback:")
        lines.extend(_feedback_line(given) for given in trace.feedback)
    lines.append("Audit:")
    for event in trace.audit:
        change = f"{event.from_status or '-'} → {event.to_status or '-'}"
        lines.append(f"  {event.at.isoformat()} {event.actor}: {event.action} {change}")
    return "\n".join(lines) + "\n"


def _crash_lines(trace: StoredTrace) -> list[str]:
    """Who went on with the run after its process stopped, and the calls whose outcome is unknown."""
    lines = []
    for event in trace.audit:
        if event.action == "run_recovered" and event.detail.get("outcome") == "resumed":
            lines.append(f"resumed by {event.detail.get('by')} after step {event.detail.get('after_step')}")
    unknown = [call for call in trace.tool_calls if call.error_code == ErrorCode.OUTCOME_UNKNOWN]
    for call in unknown:
        args = json.dumps(call.arguments, ensure_ascii=False)
        lines.append(
            f"outcome unknown: {call.tool}({args}) at step {call.step} (Parley stopped during it; not made again)"
        )
    return ["", *lines] if lines else []


def _counters(result: RunResult | None) -> str:
    if result is None:  # counted when the run ends
        return "  counters     not finished"
    return (
        f"  counters     {result.steps} steps · {result.llm_calls} LLM calls · {result.tool_calls} tool calls · "
        f"{result.retries} retries · {result.critique_rounds} critique rounds · {result.tokens} tokens"
    )


def _result_details(result: RunResult) -> list[str]:
    """What backs the answer: its sources (the footnotes `parley ask` prints), how each figure is grounded, and
    what was done and is missing (a partial answer already lists both)."""
    lines = []
    if result.citations:
        lines.append("Sources:")
        lines.extend(render_citations(result.citations))
    if result.grounding:
        lines.append("Grounded figures:")
        lines.extend(f"  {g.figure} — {g.rule.value}: {g.how}" for g in result.grounding)
    if result.completed and not result.degraded:
        lines.append("Completed: " + "; ".join(result.completed))
    if result.missing and not result.degraded:
        lines.append("Missing: " + "; ".join(result.missing))
    return lines


def _verdict_line(verdict: StoredVerdict) -> str:
    if verdict.kind == VerdictKind.DONE_TICK:
        return f"☑ {verdict.item}"
    if verdict.kind == VerdictKind.CRITIQUE:
        state = "on track" if verdict.satisfied else "gaps: " + "; ".join(verdict.gaps)
        return f"critique {verdict.stage} ({verdict.source}, round {verdict.round}): {shorten(state, 200)}"
    if verdict.kind == VerdictKind.FINAL_REJECTED:
        return f"✗ final not accepted ({verdict.stage}): {shorten('; '.join(verdict.gaps), 200)}"
    return f"{verdict.kind}: {verdict.decision or ''} {verdict.reason or ''}".strip()


def _feedback_line(given: StoredFeedback) -> str:
    verdict = "👍 up" if given.verdict == FeedbackVerdict.UP else "👎 down"
    who = given.user if given.by_asker else f"{given.user} ({InFeedback.NOT_ASKER_MARK})"
    line = f"  {given.updated_at.isoformat()} {who}: {verdict}"
    return line + (f" — {given.comment}" if given.comment else "")


def trace_as_dict(trace: StoredTrace) -> dict[str, Any]:
    """Everything recorded about the run, column by column, as `--json` prints it."""
    return {
        "run": trace.columns,
        "steps": [asdict(s) for s in trace.steps],
        "tool_calls": [asdict(c) for c in trace.tool_calls],
        "verdicts": [asdict(v) for v in trace.verdicts],
        "escalations": [_escalation_dict(e) for e in trace.escalations],
        "audit": [asdict(a) for a in trace.audit],
        "feedback": [asdict(f) for f in trace.feedback],
    }


def _escalation_dict(escalation: StoredEscalation) -> dict[str, Any]:
    held = {"held_calls": [call.model_dump() for call in escalation.held_calls]}
    return asdict(escalation) | held
