"""`parley review list|approve|reject`: escalations decided from the command line, for operators without Slack.

The same rules as in Slack: one decision per escalation, whoever decides first (`settle`); an approved held
action runs exactly as it was held and the run goes on from its snapshot; an escalation with nothing to
resume (a refusal, or recovery that ran out) is approved with the reviewer's answer; a rejection says why.
Authorisation excepted: whoever runs this process is a trusted operator, recorded as `cli:<login name>`.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent import shorten
from bot.age import age
from bot.cli.progress import ConsoleProgress
from bot.cli.render import render_result
from bot.cli.usage import UsageError
from bot.config_file import LoadedConfig, load_config
from bot.core import (
    Decision,
    DecisionRefused,
    Escalated,
    EscalationKind,
    HeldCallsChanged,
    History,
    Notifier,
    NotResumed,
    RunService,
    StoredEscalation,
    StoredRun,
)
from bot.settings import Settings
from bot.store import Database, StorePins, open_store

if TYPE_CHECKING:
    from agent import Agent, Recorder

CLI_OPERATOR = "cli"  # the actor recorded for `parley review …` (trusted: the operator runs the process)
EXIT_OK = 0
EXIT_ALREADY_DECIDED = 1  # someone decided first: not a usage error, but nothing was done
SHOWN_ID = 12
QUESTION_WIDTH = 100
DRAFT_WIDTH = 300


class ReviewRefused(UsageError):
    """The command cannot be carried out as given (one line, exit 2)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    review = sub.add_parser("review", help="escalations waiting for a person: list, approve, reject")
    review.set_defaults(config=None, handler=run)
    review_sub = review.add_subparsers(dest="review_command", required=True)

    listing = review_sub.add_parser("list", help="escalations waiting for a decision, oldest first")
    listing.add_argument("--limit", type=int, default=50, help="how many to show (default 50)")
    listing.add_argument("--json", action="store_true")

    approve = review_sub.add_parser(
        "approve",
        help="approve: a held action runs as held and the run goes on; otherwise the asker gets --answer",
    )
    approve.add_argument("run_id", metavar="RUN", help="the run id, or a unique prefix of at least 6 characters")
    answer = approve.add_mutually_exclusive_group()
    answer.add_argument("--answer", help="the answer the asker gets (escalations without held calls)")
    answer.add_argument("--answer-file", type=Path, help="the answer, read from a file ('-': standard input)")
    approve.add_argument("--config", type=Path, help="YAML configuration (use the one the run was asked with)")
    approve.add_argument("--replay", type=Path, help="play back a recorded script for the rest of the run")
    approve.add_argument("--json", action="store_true", help="print the outcome as JSON")
    approve.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")

    reject = review_sub.add_parser("reject", help="reject: nothing held runs; the asker is told why")
    reject.add_argument("run_id", metavar="RUN", help="the run id, or a unique prefix of at least 6 characters")
    reject.add_argument("--reason", help="why (required): recorded, and what the asker is told")
    reject.add_argument("--json", action="store_true", help="print the outcome as JSON")


async def run(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    reason = None
    if args.review_command == "list":
        if args.limit < 1 or args.limit > 1000:
            raise ReviewRefused("--limit must be between 1 and 1000")
    elif args.review_command == "reject":
        reason = (args.reason or "").strip()
        if not reason:
            raise ReviewRefused("reject needs --reason TEXT: why, for the asker and the audit log")
    db = await open_store(settings.database_url)
    try:
        if args.review_command == "list":
            return await _list(db, args, sys.stdout)
        actor = operator(settings)
        found = await _escalation_of(db, args.run_id)
        escalation, run = found.escalation, found.run
        if not escalation.pending:
            return already_decided(escalation)
        # Deciding builds from the assembly (the engine, Slack when configured); listing, the frequent command,
        # starts without loading them.
        from bot.assembly import command_line_notifier

        notifier = command_line_notifier(settings, loaded)
        if args.review_command == "reject":
            assert reason
            return await _decide(db, args, run, actor, Decision.REJECTED, notifier, reason=reason)
        if escalation.kind == EscalationKind.HELD_ACTION:
            return await _approve_held(db, args, settings, loaded, escalation, run, actor, notifier)
        return await _approve_with_answer(db, args, escalation, run, actor, notifier)
    finally:
        await db.aclose()


def operator(settings: Settings) -> str:
    """The actor recorded for decisions taken here: `cli:<login name>` (trusted, like the asker of `parley ask`)."""
    user = settings.cli_user()
    return user if user.startswith(f"{CLI_OPERATOR}:") else f"{CLI_OPERATOR}:{user}"


async def _escalation_of(db: Database, wanted: str) -> Escalated:
    run_id = await History(db).run_id(wanted)
    found = await RunService(db).escalation_of(run_id)
    if found is None:
        trace = await History(db).trace(run_id)
        why = f"run {run_id[:SHOWN_ID]} ({trace.run.status}) has no escalation: there is nothing to decide"
        raise ReviewRefused(why)
    return found


def already_decided(escalation: StoredEscalation | None) -> int:
    if escalation is None:  # cannot happen once an escalation existed; said plainly all the same
        print("parley: Already decided", file=sys.stderr)
    else:
        print(
            f"parley: Already decided: {escalation.status} by {escalation.decided_by or 'unknown'} "
            f"at {_moment(escalation.decided_at)}",
            file=sys.stderr,
        )
    return EXIT_ALREADY_DECIDED


# --- list -------------------------------------------------------------------------------------------------


async def _list(db: Database, args: argparse.Namespace, out: TextIO) -> int:
    rows = await History(db).waiting(limit=args.limit + 1)
    more = len(rows) > args.limit
    rows = rows[: args.limit]
    now = datetime.now(UTC)
    if args.json:
        body = {"escalations": [escalation_summary(e.escalation, e.run, now=now) for e in rows], "more": more}
        out.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(render_pending(rows, more=more, now=now))
    return EXIT_OK


def escalation_summary(escalation: StoredEscalation, run: StoredRun, *, now: datetime) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "escalation_id": escalation.id,
        "kind": escalation.kind,
        "reason": escalation.reason,
        "level": escalation.level,
        "message": escalation.message,
        "created_at": escalation.created_at.isoformat(),
        "waiting_s": max(0, int((now - escalation.created_at).total_seconds())),
        "source": run.source,
        "asker": run.asker,
        "channel_id": run.channel_id,
        "question": run.question,
        "held_calls": [call.model_dump() for call in escalation.held_calls],
        "tool": escalation.tool,
        "arguments": escalation.arguments,
        "draft_answer": escalation.draft_answer,
    }


def render_pending(rows: list[Escalated], *, more: bool, now: datetime) -> str:
    if not rows:
        return "No escalations are waiting for a decision.\n"
    count = f"{len(rows)} escalation{'' if len(rows) == 1 else 's'}"
    lines = [f"{count} waiting for a decision, oldest first:"]
    for found in rows:
        esc, run = found.escalation, found.run
        where = f" in {run.channel_id}" if run.channel_id else ""
        lines.append("")
        lines.append(
            f"{run.id[:SHOWN_ID]}  waiting {age(esc.created_at, now=now)}  {esc.kind}  "
            f"asked by {run.asker} via {run.source}{where}"
        )
        lines.append(f"  Q: {shorten(run.question, QUESTION_WIDTH)}")
        lines.append(f"  why: {esc.message or esc.reason} ({esc.reason}, {esc.level})")
        for call in esc.held_calls:
            lines.append(f"  held: {call.tool} {_json(call.arguments)}  (call {call.id})")
        if not esc.held_calls and esc.tool:
            lines.append(f"  refused: {esc.tool} {_json(esc.arguments)}")
        if esc.kind is not EscalationKind.HELD_ACTION and esc.draft_answer:
            lines.append(f"  draft: {shorten(esc.draft_answer, DRAFT_WIDTH)}")
    lines.append("")
    if more:
        lines.append(f"More are waiting: the oldest {len(rows)} are shown (--limit).")
    lines.append(
        "Decide: parley review approve RUN (a held action runs; otherwise --answer TEXT) · "
        "parley review reject RUN --reason TEXT"
    )
    return "\n".join(lines) + "\n"


# --- approve ----------------------------------------------------------------------------------------------


async def _approve_held(
    db: Database,
    args: argparse.Namespace,
    settings: Settings,
    loaded: LoadedConfig,
    escalation: StoredEscalation,
    run: StoredRun,
    actor: str,
    notifier: Notifier,
) -> int:
    """Everything that can refuse is checked before the decision is taken: an approval always resumes the run."""
    short = run.id[:SHOWN_ID]
    if args.answer is not None or args.answer_file is not None:
        raise ReviewRefused(
            f"run {short} holds tool calls: approving runs them and the run answers itself (--answer is for "
            "escalations without held calls)"
        )
    from bot.assembly import build_brain, open_agent

    brain = build_brain(settings, loaded.agent, replay=args.replay, question=run.question)
    async with open_agent(settings, loaded, brain, pins=StorePins(db)) as agent:
        runs = RunService(db, notifier, agent)
        try:
            await runs.check_resumable(run.id)
        except HeldCallsChanged as exc:
            raise ReviewRefused(f"{exc}: reject it, or ask the question again") from None
        _check_tools(agent, escalation, run, loaded, quiet=args.quiet)
        settled = await runs.decide(run.id, Decision.APPROVED, actor=actor)
        if not settled.won:
            return already_decided(settled.escalation)
        if not args.quiet:
            print(f"Approved by {actor}: the held calls run and the run goes on.", file=sys.stderr)
        watchers: list[Recorder] = [] if args.quiet else [ConsoleProgress(sys.stderr)]
        result = await runs.resume(run.id, approved_by=actor, watchers=watchers)
    if isinstance(result, NotResumed):
        raise ReviewRefused(f"approved, but not resumed: {result.why}")
    print(result.model_dump_json(indent=2) if args.json else render_result(result))
    return EXIT_OK


def _check_tools(
    agent: Agent, escalation: StoredEscalation, run: StoredRun, loaded: LoadedConfig, *, quiet: bool
) -> None:
    """The held calls need their tools in this configuration; another configuration is noted, not refused."""
    short = run.id[:SHOWN_ID]
    missing = sorted({call.tool for call in escalation.held_calls} - set(agent.tool_names))
    if missing:
        raise ReviewRefused(
            f"run {short} holds calls to {', '.join(missing)}, which {loaded.path} does not configure: "
            "pass the --config the run was asked with"
        )
    if run.config_hash and run.config_hash != loaded.hash and not quiet:
        print(
            f"parley: note: run {short} was asked under another configuration; the held calls run as held, "
            f"the rest of the run follows {loaded.path}",
            file=sys.stderr,
        )


async def _approve_with_answer(
    db: Database,
    args: argparse.Namespace,
    escalation: StoredEscalation,
    run: StoredRun,
    actor: str,
    notifier: Notifier,
) -> int:
    short = run.id[:SHOWN_ID]
    if args.replay is not None:
        raise ReviewRefused(f"run {short} has no held calls to resume: --replay is for held actions")
    answer = _answer(args)
    if answer is None:
        raise ReviewRefused(
            f"run {short} is {escalation.kind} ({escalation.reason}): there is nothing to resume, so approving "
            "needs the answer the asker gets: --answer TEXT or --answer-file PATH (the draft is in "
            "`parley review list`)"
        )
    return await _decide(db, args, run, actor, Decision.APPROVED, notifier, answer=answer)


def _answer(args: argparse.Namespace) -> str | None:
    if args.answer is not None:
        text, given = args.answer, "--answer"
    elif args.answer_file is not None:
        given = "--answer-file"
        try:
            from_stdin = str(args.answer_file) == "-"
            text = sys.stdin.read() if from_stdin else args.answer_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ReviewRefused(f"cannot read --answer-file {args.answer_file}: {why}") from None
    else:
        return None
    text = text.strip()
    if not text:
        raise ReviewRefused(f"{given} is blank: give the answer the asker gets")
    return text


# --- decide ----------------------------------------------------------------------------------------------


async def _decide(
    db: Database,
    args: argparse.Namespace,
    run: StoredRun,
    actor: str,
    decision: Decision,
    notifier: Notifier,
    *,
    answer: str | None = None,
    reason: str | None = None,
) -> int:
    """Record the decision (unless someone decided first), show it in Slack when configured, print it."""
    try:
        settled = await RunService(db, notifier).decide(run.id, decision, actor=actor, answer=answer, reason=reason)
    except DecisionRefused as exc:
        raise ReviewRefused(f"run {run.id[:SHOWN_ID]}: {exc}") from None
    if not settled.won:
        return already_decided(settled.escalation)
    _print_decision(args, settled.escalation, run, answer=answer, reason=reason)
    return EXIT_OK


def _print_decision(
    args: argparse.Namespace,
    escalation: StoredEscalation | None,
    run: StoredRun,
    *,
    answer: str | None = None,
    reason: str | None = None,
) -> None:
    decision = escalation.status if escalation else (Decision.APPROVED if answer is not None else Decision.REJECTED)
    decided_by = escalation.decided_by if escalation else None
    decided_at = escalation.decided_at if escalation else None
    if args.json:
        body = {
            "run_id": run.id,
            "decision": decision,
            "decided_by": decided_by,
            "decided_at": decided_at.isoformat() if decided_at else None,
            "answer": answer,
            "reason": reason,
        }
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return
    lines = [f"{decision.capitalize()} by {decided_by}" + (f": {reason}" if reason else "")]
    if answer is not None:
        lines += ["", answer]
    lines += ["", f"status: {decision} · run: {run.id}"]
    print("\n".join(lines))


# --- text helpers -----------------------------------------------------------------------------------------


def _moment(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "an unknown time"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
