"""Parley's engine: a ReAct loop whose observation layer never lets a run fake an answer.

Pure library: nothing of Slack or SQL. Front ends build an `Agent` from a `Brain`, tools and an
`AgentConfig`, call `run`, and implement `Recorder` to see every step as it happens.
"""

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
