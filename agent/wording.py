"""Every sentence the engine says to the model or to a person, in one place."""

from __future__ import annotations

from agent.result import TerminationReason

# Short on purpose: it is sent with every decision. What only matters after a failure is said then (FAILURE_NOTE).
SYSTEM_PROMPT = """Answer from the tools' results only, in the user's language. Cite each fact with its result's \
tag right after it, e.g. "28°C [1]". Write numbers in digits."""

FAILURE_NOTE = (
    '[Note] A result with "ok": false is a failure, not data. Fix the arguments (L1), switch tools (L2) or stop '
    "using that tool (L3); never repeat a failed call unchanged. If the tools cannot answer, call give_up and say "
    "what is missing."
)
QUALITY_CHECK = "[Quality check] Not yet satisfied: {gaps}. Continue with the plan."
REPAIR_ANSWER = (
    "[Quality check] Your answer cannot be accepted yet: {problems}. Answer again, citing every fact with the "
    "[n] tag of the tool result it came from and using only numbers that appear in those results."
)
INVALID_REPLY = (
    "[Quality check] Your last reply could not be used: {problem}. Reply with a tool call or a final answer."
)
OUTPUT_JSON = "Your final answer must be a single JSON object that validates against this JSON Schema:\n{schema}"

REPLAY_NOTICE = "replayed: the model's decisions were played back from a recording; tools and checks ran for real"

EXPLANATIONS: dict[TerminationReason, str] = {
    TerminationReason.GAVE_UP: "the agent gave up: {detail}",
    TerminationReason.MAX_STEPS: "the step limit ({detail}) was reached before every part was answered",
    TerminationReason.REPEAT_SAME_CALL: "the agent kept making the same call ({detail}) without getting further",
    TerminationReason.REPEAT_SAME_ERROR: "the same call kept failing with the same error ({detail})",
    TerminationReason.REPEAT_ALTERNATION: "the agent went back and forth between the same two calls ({detail})",
    TerminationReason.NO_PROGRESS: "{detail} steps went by without completing anything more",
    TerminationReason.CRITIQUE_SPIN: "the same gaps remained after repeated quality checks: {detail}",
    TerminationReason.UNGROUNDED_ANSWER: "{detail}",
    TerminationReason.INVALID_OUTPUT: "the answer did not match the required format: {detail}",
    TerminationReason.IRRECOVERABLE_ERROR: "the run could not go on: {detail}",
    TerminationReason.POLICY_VIOLATION: "a policy forbids this request: {detail}",
    TerminationReason.ALL_TOOLS_FAILED: "every tool that was tried failed: {detail}",
    TerminationReason.LLM_UNAVAILABLE: "the language model could not be reached: {detail}",
    TerminationReason.RUN_TIMEOUT: "the run hit its time budget of {detail} seconds",
    TerminationReason.CANCELLED: "the run was cancelled",
    TerminationReason.STOPPED_BY_USER: "stopped by {detail} before it was finished",
}

NEXT_STEPS: dict[TerminationReason, str] = {
    TerminationReason.GAVE_UP: "Ask again later, or rephrase the question around what the tools can look up.",
    TerminationReason.MAX_STEPS: "Ask about the missing parts on their own, or raise limits.max_steps.",
    TerminationReason.REPEAT_SAME_CALL: "Rephrase the question or give the exact name of what you are looking for.",
    TerminationReason.REPEAT_SAME_ERROR: "Check the spelling of the name (try its pinyin or English form) or ask for "
    "something else the tools know.",
    TerminationReason.REPEAT_ALTERNATION: "Rephrase the question so it needs one lookup at a time.",
    TerminationReason.NO_PROGRESS: "Ask about the missing parts on their own.",
    TerminationReason.CRITIQUE_SPIN: "Ask about the missing parts on their own.",
    TerminationReason.UNGROUNDED_ANSWER: "Ask again, or rely on the facts listed above: the tools confirmed them.",
    TerminationReason.INVALID_OUTPUT: "Ask again, or use the plain-text answer above.",
    TerminationReason.IRRECOVERABLE_ERROR: "Ask an operator to check the tools' access rights and configuration, or "
    "Parley's log for this run.",
    TerminationReason.POLICY_VIOLATION: "A person will review this request.",
    TerminationReason.ALL_TOOLS_FAILED: "Try again once the services are back, or ask an operator.",
    TerminationReason.LLM_UNAVAILABLE: "If the model was unreachable, try again in a few minutes; if it refused "
    "the request (a rejected key, an unknown model), ask an operator to check PARLEY_LLM_BASE_URL, PARLEY_LLM_MODEL "
    "and PARLEY_LLM_API_KEY.",
    TerminationReason.RUN_TIMEOUT: "Ask about fewer things at once, or try again later.",
    TerminationReason.CANCELLED: "Ask again if you still need the answer.",
    TerminationReason.STOPPED_BY_USER: "Ask again if you still need the rest of the answer.",
}

NOTHING_KNOWN = "No tool returned usable data, so I cannot answer without guessing."


def unbacked(statements: int) -> str:
    """Why a draft answer was not given as it stood, in words a person uses (no figure: it may be invented)."""
    if statements == 1:
        return "one statement of my answer is not backed by any tool result, so it is not shown as fact"
    return f"{statements} statements of my answer are not backed by any tool result, so they are not shown as fact"


def answered_in_part(missing: str) -> str:
    """Why a run ended with an answer that covers part of the question: what no tool could return."""
    return f"the answer covers what the tools returned; nothing could be fetched for {missing}"


def more_results(count: int) -> str:
    return "and 1 more result" if count == 1 else f"and {count} more results"


def explain(reason: TerminationReason, detail: str) -> str:
    return EXPLANATIONS.get(reason, "{detail}").format(detail=detail)


def next_step(reason: TerminationReason) -> str:
    return NEXT_STEPS.get(reason, "")
