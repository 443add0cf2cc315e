"""Loop configuration, hook contexts, budgets and stop reasons.

Hooks may be plain functions or coroutine functions; the loop awaits whatever they return.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypeVar

from apex_agent.messages import AgentMessage, default_convert_to_llm
from apex_agent.tools import AgentTool, AgentToolResult
from apex_ai._wire import WireModel
from apex_ai.abort import AbortSignal
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.options import SimpleStreamOptions
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    ModelThinkingLevel,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)

T = TypeVar("T")
MaybeAwaitable: TypeAlias = T | Awaitable[T]

AgentStopReason: TypeAlias = Literal["completed", "error", "aborted", "budget-exhausted"]
"""How a run ended; the vocabulary of the json-mode result envelope's `status`."""

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]
QueueMode: TypeAlias = Literal["one-at-a-time", "all"]
BudgetLimit: TypeAlias = Literal["maxTurns", "maxToolCalls", "maxTokens", "maxCost", "maxDurationMs"]


class RunBudget(WireModel):
    """Limits of one run (wire `runBudget`); unset limits are unlimited. Checked only before a new request."""

    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    max_duration_ms: int | None = None


class BudgetUsage(WireModel):
    """What a run consumed so far, counted as the run budget counts it."""

    turns: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost: float = 0
    duration_ms: int = 0


class BudgetReport(WireModel):
    """`agent_end.budget`: which limit stopped the run and the usage at that point."""

    limit: BudgetLimit
    usage: BudgetUsage


@dataclass
class AgentContext:
    """What the loop works on: the fallback prompt and tools, and the transcript (mutated in place)."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] = field(default_factory=list)


@dataclass
class BeforeToolCallContext:
    """`args` are the validated arguments; a hook may mutate them in place (they run unvalidated)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: dict[str, Any]
    context: AgentContext


@dataclass
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None
    terminate: bool = False


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: dict[str, Any]
    result: AgentToolResult
    is_error: bool
    context: AgentContext


@dataclass
class AfterToolCallResult:
    """Overrides for a finished call: every field that is not None replaces the result's (no deep merge)."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


@dataclass
class StopAfterTurnContext:
    """The turn that just ended. `new_messages` are all messages of the run so far (prompts included)."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


@dataclass
class NextTurnUpdate:
    """What `prepare_next_turn` may replace; None keeps the current value. `thinking_level="off"` drops reasoning."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: ModelThinkingLevel | None = None


@dataclass
class SystemUpdate:
    """System deltas held by the host until a turn boundary, plus the executable tools that go with them."""

    messages: list[SystemMessage]
    tools: list[AgentTool] | None = None


@dataclass
class QueuedMessages:
    """What `Agent.abort()` took out of the queues, so a UI can put it back into the editor."""

    steering: list[AgentMessage] = field(default_factory=list)
    follow_up: list[AgentMessage] = field(default_factory=list)


StreamFn: TypeAlias = Callable[
    [Model, Context, SimpleStreamOptions], "AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]"
]
"""A streaming function like `apex_ai.stream_simple`: must not raise, reports failures as events."""

ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], MaybeAwaitable[Sequence[Message]]]
TransformContext: TypeAlias = Callable[[list[AgentMessage], AbortSignal | None], MaybeAwaitable[list[AgentMessage]]]
GetApiKey: TypeAlias = Callable[[str], MaybeAwaitable[str | None]]
BeforeToolCall: TypeAlias = Callable[
    [BeforeToolCallContext, AbortSignal | None], MaybeAwaitable[BeforeToolCallResult | None]
]
AfterToolCall: TypeAlias = Callable[
    [AfterToolCallContext, AbortSignal | None], MaybeAwaitable[AfterToolCallResult | None]
]
ShouldStopAfterTurn: TypeAlias = Callable[[StopAfterTurnContext], MaybeAwaitable[bool]]
PrepareNextTurn: TypeAlias = Callable[[StopAfterTurnContext], MaybeAwaitable[NextTurnUpdate | None]]
GetMessages: TypeAlias = Callable[[], MaybeAwaitable[Sequence[AgentMessage]]]
HasQueuedMessages: TypeAlias = Callable[[], bool]
GetSystemUpdate: TypeAlias = Callable[[], SystemUpdate | None]
GetTurnTools: TypeAlias = Callable[[list[AgentTool]], Sequence[AgentTool] | None]


@dataclass(kw_only=True)
class AgentLoopConfig(SimpleStreamOptions):
    """`SimpleStreamOptions` for every request plus the model and the loop's hooks.

    Hooks receive the run's signal where they take one and must honour it. `signal` of the options is replaced
    per request by the run's signal. With `credentials` (an `apex_ai.credentials.Credentials`, say), each
    request's key and credential headers are resolved before `stream_fn` is called; `get_api_key` is the older
    per-request hook for the key alone.
    """

    model: Model
    convert_to_llm: ConvertToLlm = default_convert_to_llm
    transform_context: TransformContext | None = None
    get_api_key: GetApiKey | None = None
    should_stop_after_turn: ShouldStopAfterTurn | None = None
    prepare_next_turn: PrepareNextTurn | None = None
    get_steering_messages: GetMessages | None = None
    get_follow_up_messages: GetMessages | None = None
    has_queued_messages: HasQueuedMessages | None = None
    get_system_update: GetSystemUpdate | None = None
    """Agent-internal: held system deltas to apply at the next turn boundary."""
    get_turn_tools: GetTurnTools | None = None
    """Asked right before each turn's `turn_start` with the tools the run's requests carry so far: the tools from
    this turn on, or None to keep them. The turn's request declares them as they are at that moment, so a host
    that records what it returned knows exactly what each request declares."""
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    run_budget: RunBudget | None = None
    budget_usage: BudgetUsage | None = None
    """Counters shared across runs for one user prompt (auto-retry, overflow recovery): the run counts into
    this object in place, so passing the same object to the continuation run gives it the remaining budget."""


__all__ = [
    "AfterToolCall",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentLoopConfig",
    "AgentStopReason",
    "BeforeToolCall",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "BudgetLimit",
    "BudgetReport",
    "BudgetUsage",
    "ConvertToLlm",
    "GetApiKey",
    "GetMessages",
    "GetTurnTools",
    "MaybeAwaitable",
    "NextTurnUpdate",
    "PrepareNextTurn",
    "QueueMode",
    "QueuedMessages",
    "RunBudget",
    "ShouldStopAfterTurn",
    "StopAfterTurnContext",
    "StreamFn",
    "SystemUpdate",
    "ToolExecutionMode",
    "TransformContext",
]
