"""Parley's engine: a ReAct loop whose observation layer never lets a run fake an answer.

Pure library: nothing of Slack or SQL. Front ends build an `Agent` from a `Brain`, tools and an
`AgentConfig`, call `run`, and implement `Recorder` to see every step as it happens.

Each name is loaded from its module when first used (PEP 562): a front end that needs the run history does
not pay for the fact-checker, nor one without MCP servers for the MCP SDK.
"""

import typing as _typing

from agent.exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # what the type checker reads; at run time each name is loaded from `_MODULES`
    from agent.backoff import Backoff, parse_retry_after
    from agent.brains.base import Brain, BrainError, LLMUnavailable, NotRecorded
    from agent.brains.chat import ChatCompletionsClient
    from agent.brains.jsonreact import JsonReactBrain
    from agent.brains.openai import OpenAIBrain
    from agent.brains.replay import ReplayBrain, ReplayScript
    from agent.config import AgentConfig, BuiltinToolEntry, HttpToolEntry, McpServerEntry, McpSpec, ToolEntry
    from agent.context import Exchange
    from agent.critique import Critique, CritiqueVerdict
    from agent.done import DoneChecklist, DoneItem
    from agent.errors import ConfigError, ErrorCode, InvalidQuestion, ToolError
    from agent.escalation import DEFAULT_ESCALATE_ON, escalates
    from agent.grading import ErrorLevel, GradingTable
    from agent.journal import CallIntent, Interrupted, Journal, JournalRefused
    from agent.limits import Limits
    from agent.loop import Agent, check_question
    from agent.messages import Completion, Decision, DecisionKind, Message, ToolCallRequest, Usage
    from agent.observation import Observation, ObservationError, normalise, serialise
    from agent.plain import plain_json, plain_text
    from agent.policy import HoldCondition, Policies, ToolPolicy
    from agent.recovery import RecoveryPolicy
    from agent.repeat import RepeatDetector
    from agent.result import (
        Citation,
        DegradedFinal,
        Escalation,
        EscalationKind,
        GroundedFigure,
        GroundingRule,
        HeldCall,
        OutcomeKind,
        RunResult,
        RunStatus,
        TerminationReason,
    )
    from agent.snapshot import RunCounters, RunSnapshot
    from agent.source import Source
    from agent.stop import StopRequest
    from agent.text import clip, exception_line, shorten
    from agent.tools.base import FunctionTool, Tool, ToolSpec
    from agent.tools.mcp import (
        McpServer,
        McpServers,
        McpServerStatus,
        McpToolStatus,
        MemoryPins,
        PinStore,
        ServerState,
        definition_digest,
        mcp_status,
    )
    from agent.tools.registry import build_tools
    from agent.tools.toolbox import Toolbox, ToolSource
    from agent.trace import (
        CritiqueVerdictMade,
        DoneItemTicked,
        FanoutRecorder,
        FinalRejected,
        LLMCallFinished,
        LLMPurpose,
        LLMRetry,
        MemoryRecorder,
        PlanMade,
        Recorder,
        RetryScheduled,
        RunFinished,
        RunHeld,
        RunResumed,
        RunStarted,
        RunTakenOver,
        StepDecided,
        ToolAttempt,
        ToolCallFinished,
        TraceEvent,
    )
    from agent.wording import REPLAY_NOTICE

__all__ = [
    "DEFAULT_ESCALATE_ON",
    "REPLAY_NOTICE",
    "Agent",
    "AgentConfig",
    "Backoff",
    "Brain",
    "BrainError",
    "BuiltinToolEntry",
    "CallIntent",
    "ChatCompletionsClient",
    "Citation",
    "Completion",
    "ConfigError",
    "Critique",
    "CritiqueVerdict",
    "CritiqueVerdictMade",
    "Decision",
    "DecisionKind",
    "DegradedFinal",
    "DoneChecklist",
    "DoneItem",
    "DoneItemTicked",
    "ErrorCode",
    "ErrorLevel",
    "Escalation",
    "EscalationKind",
    "Exchange",
    "FanoutRecorder",
    "FinalRejected",
    "FunctionTool",
    "GradingTable",
    "GroundedFigure",
    "GroundingRule",
    "HeldCall",
    "HoldCondition",
    "HttpToolEntry",
    "Interrupted",
    "InvalidQuestion",
    "Journal",
    "JournalRefused",
    "JsonReactBrain",
    "LLMCallFinished",
    "LLMPurpose",
    "LLMRetry",
    "LLMUnavailable",
    "Limits",
    "McpServer",
    "McpServerEntry",
    "McpServerStatus",
    "McpServers",
    "McpSpec",
    "McpToolStatus",
    "MemoryPins",
    "MemoryRecorder",
    "Message",
    "NotRecorded",
    "Observation",
    "ObservationError",
    "OpenAIBrain",
    "OutcomeKind",
    "PinStore",
    "PlanMade",
    "Policies",
    "Recorder",
    "RecoveryPolicy",
    "RepeatDetector",
    "ReplayBrain",
    "ReplayScript",
    "RetryScheduled",
    "RunCounters",
    "RunFinished",
    "RunHeld",
    "RunResult",
    "RunResumed",
    "RunSnapshot",
    "RunStarted",
    "RunStatus",
    "RunTakenOver",
    "ServerState",
    "Source",
    "StepDecided",
    "StopRequest",
    "TerminationReason",
    "Tool",
    "ToolAttempt",
    "ToolCallFinished",
    "ToolCallRequest",
    "ToolEntry",
    "ToolError",
    "ToolPolicy",
    "ToolSource",
    "ToolSpec",
    "Toolbox",
    "TraceEvent",
    "Usage",
    "build_tools",
    "check_question",
    "clip",
    "definition_digest",
    "escalates",
    "exception_line",
    "mcp_status",
    "normalise",
    "parse_retry_after",
    "plain_json",
    "plain_text",
    "serialise",
    "shorten",
]

# Where each exported name is defined: the imports above, as data (tests/agent/test_exported_members.py keeps
# the two in step).
_MODULES: dict[str, tuple[str, ...]] = {
    "agent.backoff": ("Backoff", "parse_retry_after"),
    "agent.brains.base": ("Brain", "BrainError", "LLMUnavailable", "NotRecorded"),
    "agent.brains.chat": ("ChatCompletionsClient",),
    "agent.brains.jsonreact": ("JsonReactBrain",),
    "agent.brains.openai": ("OpenAIBrain",),
    "agent.brains.replay": ("ReplayBrain", "ReplayScript"),
    "agent.config": ("AgentConfig", "BuiltinToolEntry", "HttpToolEntry", "McpServerEntry", "McpSpec", "ToolEntry"),
    "agent.context": ("Exchange",),
    "agent.critique": ("Critique", "CritiqueVerdict"),
    "agent.done": ("DoneChecklist", "DoneItem"),
    "agent.errors": ("ConfigError", "ErrorCode", "InvalidQuestion", "ToolError"),
    "agent.escalation": ("DEFAULT_ESCALATE_ON", "escalates"),
    "agent.grading": ("ErrorLevel", "GradingTable"),
    "agent.journal": ("CallIntent", "Interrupted", "Journal", "JournalRefused"),
    "agent.limits": ("Limits",),
    "agent.loop": ("Agent", "check_question"),
    "agent.messages": ("Completion", "Decision", "DecisionKind", "Message", "ToolCallRequest", "Usage"),
    "agent.observation": ("Observation", "ObservationError", "normalise", "serialise"),
    "agent.plain": ("plain_json", "plain_text"),
    "agent.policy": ("HoldCondition", "Policies", "ToolPolicy"),
    "agent.recovery": ("RecoveryPolicy",),
    "agent.repeat": ("RepeatDetector",),
    "agent.result": (
        "Citation",
        "DegradedFinal",
        "Escalation",
        "EscalationKind",
        "GroundedFigure",
        "GroundingRule",
        "HeldCall",
        "OutcomeKind",
        "RunResult",
        "RunStatus",
        "TerminationReason",
    ),
    "agent.snapshot": ("RunCounters", "RunSnapshot"),
    "agent.source": ("Source",),
    "agent.stop": ("StopRequest",),
    "agent.text": ("clip", "exception_line", "shorten"),
    "agent.tools.base": ("FunctionTool", "Tool", "ToolSpec"),
    "agent.tools.mcp": (
        "McpServer",
        "McpServers",
        "McpServerStatus",
        "McpToolStatus",
        "MemoryPins",
        "PinStore",
        "ServerState",
        "definition_digest",
        "mcp_status",
    ),
    "agent.tools.registry": ("build_tools",),
    "agent.tools.toolbox": ("Toolbox", "ToolSource"),
    "agent.trace": (
        "CritiqueVerdictMade",
        "DoneItemTicked",
        "FanoutRecorder",
        "FinalRejected",
        "LLMCallFinished",
        "LLMPurpose",
        "LLMRetry",
        "MemoryRecorder",
        "PlanMade",
        "Recorder",
        "RetryScheduled",
        "RunFinished",
        "RunHeld",
        "RunResumed",
        "RunStarted",
        "RunTakenOver",
        "StepDecided",
        "ToolAttempt",
        "ToolCallFinished",
        "TraceEvent",
    ),
    "agent.wording": ("REPLAY_NOTICE",),
}
if not _typing.TYPE_CHECKING:  # hidden from the type checker, which would take any misspelt name for an export
    __getattr__, __dir__ = _lazy_exports(__name__, _MODULES)
