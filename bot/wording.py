"""Every sentence the bot says to people, in one place (the engine's are in `agent/wording.py`).

Grouped by where people read them: a class per medium, so `InThread.WORKING` reads as what it is.

A situation people meet in several places is said one way everywhere: only the clause that names what could
not be done changes with the place.
"""

from __future__ import annotations

from typing import ClassVar

from agent import ErrorCode, OutcomeKind
from bot.store.vocabulary import Decision, EscalationKind, EscalationStatus

# The store cannot be reached: said when a question comes in, when a worker starts it, when history is read.
DATABASE_UNAVAILABLE = "my database is unavailable. Please ask again in a minute."
NOT_TAKEN_DATABASE_UNAVAILABLE = f"I could not take your question: {DATABASE_UNAVAILABLE}"
NOT_STARTED_DATABASE_UNAVAILABLE = f"I could not start on your question: {DATABASE_UNAVAILABLE}"
NO_HISTORY_DATABASE_UNAVAILABLE = f"I can't read Parley's history right now: {DATABASE_UNAVAILABLE}"


class InThread:
    """What people read in the asker's thread: the answer, its notices, its progress (bot/slack/blocks.py)."""

    # A run's outcome (RunResult.outcome) in a few words, wherever Slack lists or sums up a run.
    OUTCOME: ClassVar[dict[OutcomeKind, str]] = {
        OutcomeKind.ANSWERED: "Answered",
        OutcomeKind.HELD: "Waiting for a reviewer",
        OutcomeKind.REFUSED: "Refused",
        OutcomeKind.ESCALATED: "Partial answer, a person will look at it",
        OutcomeKind.PARTIAL: "Partial answer",
    }
    PARTIAL_HEADER = f"⚠️ {OUTCOME[OutcomeKind.PARTIAL]}"
    REFUSED_HEADER = "⛔ I can't do this"
    REVIEW_NOTE = "A person will review this request."
    HELD_HEADER = f"⏸️ {OUTCOME[OutcomeKind.HELD]}"
    HELD = "Held (not done)"
    HELD_NOTE = "Nothing held was done. A reviewer will approve or reject it, and I'll continue here."
    REVIEWING = "🧑‍⚖️ *A person will look at this.* Why: {why}"
    WHY = "Why"
    STOPPED_BY = "🛑 *Stopped by {person}.* Here is what I had found:"
    FOUND = "What I found"
    FOUND_MORE = "What else I found"
    VERIFIED = "What I could verify"
    UNCHECKED = "What I could not check"
    DONE = "Done"
    MISSING = "Missing"
    NEXT_STEPS = "What you can do"
    SOURCES = "Sources"
    FOOTNOTE = "{marker} {tool}({arguments}) · step {step}"
    EMPTY_ANSWER = "_(The answer was empty.)_"
    NO_REASON = "This request is not allowed."
    STATUS_LINE = "{emoji} {status} · {steps} · run `{run}`"
    STATUS_REASON_LINE = "{emoji} {status} · {reason} · {steps} · run `{run}`"
    WORKING = "⏳ Working on it…"
    QUEUED_NEXT = "🕒 Queued — you're next"
    QUEUED_BEHIND = "🕒 Queued — {count} ahead of you"
    QUEUED_NOTE = "I'll start as soon as a worker is free; this message will show the progress."
    QUESTION = "❓ {question}"
    FOLDED = "… {count} folded"
    FAILURE = "⚠️ I couldn't answer this: {problem}"
    FAILURE_RUN = "If you tell an operator, mention run `{run}`."
    # A run whose process stopped (a crash, a kill) before it ended: its notice, and its recorded answer.
    STOPPED_AFTER_STEP = (
        "Parley stopped (a crash or restart) while answering this question; step {steps} was the last one on "
        "record, and nothing will go on from there. Please ask again."
    )
    STOPPED_BEFORE_A_STEP = (
        "Parley stopped (a crash or restart) while answering this question, before any step of it was on record. "
        "Please ask again."
    )
    STOPPED_BEFORE_START = (
        "Parley stopped (a crash or restart) before it started on this question, so nothing was done. Please ask again."
    )
    SOMETHING_BROKE = "Something went wrong on Parley's side while answering; the operators can see it in the logs."
    HELD_CHANGED = (
        "the approved action could not be run as it was shown to the reviewer, so nothing was done; please ask again"
    )
    INTERRUPTED = "Parley was stopped (a restart or a deploy) before it could answer. Please ask again."
    # The streamed reply's task timeline (bot/slack/chunks.py) and the thread's native status (bot/slack/status.py).
    PLAN_TITLE = "Definition of Done"
    STREAM_STARTED = "Working on it"
    TASK_CHECK = "Checking the answer"
    TASK_DRAFT_REJECTED = "the draft did not pass the checks; improving it"
    TASK_RETRY = "retry {attempt}: {why}"
    TASK_RETRIED = " (after {count} retries)"
    STATUS_WORKING = "is working on it…"
    STATUS_CHECKING = "is checking {tools}…"
    STATUS_CHECKING_ANSWER = "is checking the answer…"
    # What a failed tool call means, in plain words, by its error code (agent.ErrorCode; config/errors.yaml).
    TOOL_PROBLEMS: ClassVar[dict[str, str]] = {
        ErrorCode.TIMEOUT: "the service timed out",
        ErrorCode.RATE_LIMIT: "the service asked to slow down (too many requests)",
        ErrorCode.CONNECTION_ERROR: "the service could not be reached",
        ErrorCode.INVALID_ARGS: "the request was not valid",
        ErrorCode.NOT_FOUND: "nothing was found",
        ErrorCode.CITY_NOT_FOUND: "city not found",
        ErrorCode.MATH_ERROR: "the expression could not be calculated",
        ErrorCode.INVALID_RESPONSE: "the tool's answer did not follow the protocol",
        ErrorCode.UPSTREAM_DOWN: "the service is down",
        ErrorCode.BAD_RESPONSE: "the service's answer could not be used",
        ErrorCode.TOOL_CRASHED: "the tool crashed",
        ErrorCode.FORBIDDEN: "access was refused",
        ErrorCode.UNKNOWN_TOOL: "no such tool",
        ErrorCode.TOOL_DISABLED: "the tool is switched off for this run",
        ErrorCode.POLICY_VIOLATION: "a policy forbids this call",
        ErrorCode.TOOL_REPORTED_FAILURE: "the tool reported a failure",
        ErrorCode.OUTCOME_UNKNOWN: "Parley or its connection stopped during the call: whether it acted is unknown",
        ErrorCode.TOOL_CHANGED: "the tool's definition changed and an operator must trust it again",
    }
    TOOL_PROBLEM_UNKNOWN = "the tool failed"


class InStop:
    """What a person who stops a run is told, only them (bot/slack/stop.py); the run's own answer says the rest."""

    REQUESTED = "Stopping run `{run}`: its thread shows what it had found."
    REQUESTED_HELD = "Stopped run `{run}`: its held action will not run, even if a reviewer approves it."
    ALREADY = "Run `{run}` is being stopped already."
    NOTHING_RUNNING = "Nothing is running there: there is nothing to stop."
    NOTHING_OF_YOURS = "You have no run to stop."
    REFUSED = "Only the person who asked, or a reviewer, can stop run `{run}`."
    ELSEWHERE = (
        "Run `{run}` is under way in a `parley` command, not in Parley's server: it can only be stopped where it "
        "runs (Ctrl-C). Nothing was changed."
    )
    UNAVAILABLE = "I could not stop it: Parley's database cannot be reached. Try again in a moment."
    NEED_ONE = "`/parley stop` takes at most one run id."


class InCommand:
    """What people read in the `/parley` command's answers (bot/slack/commands.py)."""

    HOME_HINT = "Parley's Home tab lists your runs too, page by page."
    UNKNOWN_COMMAND = "I don't know `{word}`."
    UNKNOWN_STATUS = "There is no status `{status}`. Valid statuses: {valid}."
    ONE_STATUS = "`/parley runs` takes at most one status."
    ONE_RUN_ID = "`/parley show` takes one run id."
    NO_RUN_OF_YOURS = "No run of yours matches `{wanted}`. You can see the runs you asked; reviewers can see every run."
    NO_RUN = "No run matches `{wanted}`."
    AMBIGUOUS = "`{wanted}` matches more than one run; give more characters."
    MINE_HEADING = "*Your newest runs*"
    EVERYONE_HEADING = "*Everyone's newest runs* (you are a reviewer)"
    OF_STATUS = " · status `{status}`"
    NONE_FOUND = "No runs{of_status} yet."
    MORE = "Showing the newest {count}. `/parley show RUN_ID` shows one run in full."
    FEEDBACK = "*Feedback*"
    RUN_TITLE = "Run {run}"
    QUESTION = "*Question*"
    ANSWER = "*Answer*"
    FINAL = "*Final (as the user saw it)*"
    NO_ANSWER = "_No answer yet._"
    MISSING = "*Missing*"
    STEPS = "*Steps*"
    NO_STEPS = "_No steps recorded._"
    MORE_STEPS = "… {count} more: `parley runs show {run}` on the server has the whole trace"
    REVIEW = "*Review* · {status}: {why}"
    HELD = "held action: {call}"
    DECIDED = "{decision} by {person}, {when}"
    DECISION_REASON = "reason: {reason}"


class InHome:
    """What people read in the Home tab (bot/slack/home.py)."""

    MINE_TITLE = "Your questions"
    MINE_NOTE = "Newest first, {size} at a time."
    MINE_EMPTY = "You haven't asked Parley anything yet. Mention me in a channel, or send me a direct message."
    WAITING_TITLE = "Waiting for review"
    WAITING_NOTE = "Oldest first. Decisions are taken in the reviewer channel; this tab only shows them."
    WAITING_EMPTY = "Nothing is waiting for review."
    ENDED_TITLE = "Recent terminations"
    ENDED_NOTE = "Everyone's finished runs, newest first, with the reason each one ended."
    ENDED_EMPTY = "No run has finished yet."
    UNAVAILABLE_TITLE = "Parley"
    UNAVAILABLE = "⚠️ {problem}"
    SERVERS_TITLE = "Tool servers"
    SERVER = "{icon} *{server}*: {state}, {offered} tools offered"
    SERVER_UP = "🟢"
    SERVER_DOWN = "🔴"
    SERVER_PROBLEM = "Its tools cannot be used until it answers ({problem}); Parley keeps trying."
    SERVER_CHANGED = "Changed since trusted, so not used: {tools}. An operator runs `parley mcp trust {server}`."


class InAssistant:
    """What people read in Slack's assistant pane (bot/slack/assistant_pane.py, bot/suggested_prompts.py)."""

    PROMPTS_TITLE = "Try asking"
    # One suggested prompt per configured tool, in plain words: the tool's name → (title, message). The
    # placeholders are the tool's argument names, filled with the example its own schema gives.
    TOOL_PROMPTS: ClassVar[dict[str, tuple[str, str]]] = {
        "calculator": ("Calculate {expression}", "What is {expression}?"),
        "get_weather": ("Weather in {city}", "What's the weather in {city} right now?"),
        "knowledge_lookup": ("Look up a fact", "Look up {key} in the knowledge base."),
        "web_search": ("Search the web", "Search the web for {query}."),
    }
    # Any other tool: its description's first sentence, with the example arguments.
    TOOL_PROMPT = "{description}: {example}"


class InListings:
    """What people read in a run as Home and `/parley` list it (bot/slack/history.py)."""

    STORE_SLOW = "I can't read Parley's history right now: it took too long to read. Please try again in a minute."
    RUN_HEAD = "{emoji} *{status}*"
    RUN_ID = "run `{run}`"
    WAITING_SINCE = "waiting {age}"
    ASKED_BY = "asked by {person}"
    WHY = "why: {why}"


class InTerminal:
    """What people read in the terminal: `parley ask`, `parley demo`, `parley runs show` (bot/cli/render.py)."""

    REFUSED = "REFUSED — {reason}"
    REFUSED_NOTE = "This request needs a person's review; nothing was done on it."
    HELD = "WAITING FOR A REVIEWER — {why}"
    HELD_CALL = "  held: {call} — not run"
    HELD_NOTE = "A person decides on it (`parley review list`); nothing held was done."
    ESCALATED = "⚠ PARTIAL ANSWER (awaiting review: {reason})"
    ESCALATED_NOTE = "A reviewer will look at this run (`parley review list`)."
    PARTIAL = "⚠ PARTIAL ANSWER (degraded: {reason})"
    SOURCES = "Sources:"


class InReview:
    """What reviewers and askers read about an escalation: the reviewer message, its forms, the decisions
    told in the asker's thread (bot/slack/review_blocks.py)."""

    # The reviewer message's title, by why the run went to people.
    TITLE: ClassVar[dict[EscalationKind, str]] = {
        EscalationKind.HELD_ACTION: "⏸️ An action is waiting for approval",
        EscalationKind.POLICY: "⛔ A policy refused this request",
        EscalationKind.EXHAUSTED: "🧯 Parley could not finish this on its own",
        EscalationKind.FEEDBACK: "👎 Someone says this answer is wrong",
    }
    # Buttons named otherwise than Approve / Reject for a kind of escalation.
    BUTTONS: ClassVar[dict[EscalationKind, dict[Decision, str]]] = {
        EscalationKind.FEEDBACK: {Decision.APPROVED: "Correct the answer", Decision.REJECTED: "Withdraw the answer"},
    }
    DECIDED: ClassVar[dict[EscalationStatus, str]] = {
        EscalationStatus.APPROVED: "✅ Approved by {who} at {at}",
        EscalationStatus.REJECTED: "⛔ Rejected by {who} at {at}: {reason}",
        EscalationStatus.EXPIRED: "⌛ Expired at {at}: {reason}",
        EscalationStatus.RETRIED: "🔁 Run again by {who} at {at}",
    }
    NOTIFICATION = "Review needed: {question}"
    REMINDER = "⏰ Still waiting for a decision ({age}). Approve or reject above."
    STOPPED = "Parley stopped before it finished this question."  # a run ended without an answer of its own
    GONE = "This escalation no longer exists."
    NOT_OFFERED = "This decision is not offered for this kind of escalation."
    ALREADY_DECIDED = "Already decided: {line}"
    SOMEONE_DECIDED = "someone else decided"
    FORM_NOT_OPENED = "Slack did not open the form in time; please click again."
    ANSWER_REQUIRED = "Write the answer the asker will see."
    REASON_REQUIRED = "A reason is required: the asker will read it."
    QUESTION = "*Question* from {asker}"
    WHY = "*Why*\n{why} (`{reason}`, {level})"
    DONE = "*Done*"
    MISSING = "*Missing*"
    SOURCES = "*Sources*"
    HELD = "*Held action (runs exactly as shown if approved)*"
    HELD_TOO_LONG = (
        "⚠️ The arguments are {chars:,} characters long: read them in full in this message's thread before you decide."
    )
    DRAFT = "*Draft answer*"
    GIVEN = "*The answer, as the asker saw it*"
    IN_THE_FORM = "the Approve form"
    MORE_CHARACTERS = "_({count:,} more characters: {where})_"
    MORE_ITEMS = "_… and {count} more: {where}_"
    APPROVE = "Approve"
    REJECT = "Reject"
    RETRY = "Retry"
    CANCEL = "Cancel"
    FOOTER = "run `{run}` · escalated {at}"
    HELD_APPROVED = "▶️ Held action, approved"
    HELD_NOT_DONE = "⏸️ Held action, not done"
    WHY_HELD = "*Why it was held*"
    HELD_RUN = "*Held, now run as shown*"
    HELD_NEVER_RUN = "*Held (never run)*"
    ANSWER_FOLLOWS = " — the answer follows below."
    HELD_NOTIFICATION = "Held action: {status}"
    HELD_PART = "Held action, part {n} of {of}"
    REVIEWED = "✅ Reviewed and approved by {who} · run `{run}`"
    REJECTED = "⛔ A reviewer ({who}) declined this request: {reason}"
    EXPIRED = (
        "⌛ No reviewer decided within {hours:g} h, so this request expired. "
        "Nothing held was done; ask again if you still need it."
    )
    ANSWER_FORM_TITLE = "Approve with answer"
    ANSWER_FORM_LABEL = "The answer posted in the thread (edit the draft as needed)"
    DRAFT_CUT = (
        "The draft is {chars:,} characters; this form holds {holds:,}, so it starts with the first {holds:,}. "
        "The whole draft: `/parley show {run}`."
    )
    REASON_LABEL = "Why? The asker will read it"


class InFeedback:
    """What people read about feedback on an answer: its 👍 / 👎 buttons, the "what was wrong?" form, the
    private replies to a click, the reviewers' note, and the tally wherever a run is listed
    (bot/slack/feedback_blocks.py, bot/slack/feedback.py, bot/cli/runs.py)."""

    UP = "Good answer"
    DOWN = "Bad answer"
    UP_LABEL = "Mark this answer as helpful"
    DOWN_LABEL = "Mark this answer as not helpful"
    FORM_TITLE = "What was wrong?"
    FORM_SUBMIT = "Send"
    FORM_CLOSE = "Skip"
    FORM_LABEL = "What was wrong? (optional)"
    FORM_HINT = "Your 👎 is recorded either way; this note helps whoever improves Parley. At most 3,000 characters."
    THANKS_UP = "Thanks — your 👍 on run `{run}` is recorded."
    THANKS_DOWN = "Thanks — your 👎 on run `{run}` is recorded."
    CHANGED = "Changed: your verdict on run `{run}` is now {verdict}."
    UNKNOWN_RUN = "I can't record this feedback: it names no run I know."
    UNFINISHED = "I can't record feedback on run `{run}` yet: it has not finished."
    NOT_RECORDED = f"I couldn't record your feedback: {DATABASE_UNAVAILABLE}"
    COMMENT_NOT_RECORDED = f"I couldn't keep your note: {DATABASE_UNAVAILABLE}"
    COMMENT_NO_DOWN = "Your 👎 on this run is no longer there (you changed it), so the note was not kept."
    # The reviewer message's "why" for a run a 👎 sent to people.
    ESCALATED = "A person marked this answer 👎: {person} ({whose})."
    ESCALATED_COMMENT = " What was wrong, in their words: “{comment}”"
    THE_ASKER = "the asker"
    NOT_THE_ASKER = "not the asker"
    TALLY = "👍 {up} · 👎 {down}"
    NOT_ASKER_MARK = "not the asker"
