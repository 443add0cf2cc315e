"""The agent layer of Apex Code: the loop that turns prompts into model turns and tool runs.

`Agent` owns one conversation: it streams replies through an `apex_ai` stream function, runs the
tools the model calls, queues steering and follow-up messages, and reports everything through one
event stream. Hosts add their own message roles through a `MessageRegistry`.
"""

from apex_agent.agent import BUSY_TEXT, Agent, AgentState, Listener, PromptInput
from apex_agent.agent_loop import agent_loop, agent_loop_continue, run_agent_loop, run_agent_loop_continue
from apex_agent.event_stream import AgentEventStream
from apex_agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
    to_wire,
)
from apex_agent.messages import (
    AgentMessage,
    CustomAgentMessage,
    MessageRegistry,
    UnknownMessage,
    default_convert_to_llm,
    default_registry,
    dump_message,
    is_llm_message,
)
from apex_agent.tool_execution import LENGTH_STOP_TEXT
from apex_agent.tools import AgentTool, AgentToolResult, ExecutionMode, FunctionTool, ToolExecutionError
from apex_agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentStopReason,
    BeforeToolCallContext,
    BeforeToolCallResult,
    BudgetLimit,
    BudgetReport,
    BudgetUsage,
    NextTurnUpdate,
    QueuedMessages,
    QueueMode,
    RunBudget,
    StopAfterTurnContext,
    StreamFn,
    ToolExecutionMode,
)

__version__ = "0.1.0"

__all__ = [
    "BUSY_TEXT",
    "LENGTH_STOP_TEXT",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventStream",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentStartEvent",
    "AgentState",
    "AgentStopReason",
    "AgentTool",
    "AgentToolResult",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "BudgetLimit",
    "BudgetReport",
    "BudgetUsage",
    "CustomAgentMessage",
    "ExecutionMode",
    "FunctionTool",
    "Listener",
    "MessageEndEvent",
    "MessageRegistry",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "NextTurnUpdate",
    "PromptInput",
    "QueueMode",
    "QueuedMessages",
    "RunBudget",
    "StopAfterTurnContext",
    "StreamFn",
    "ToolExecutionEndEvent",
    "ToolExecutionError",
    "ToolExecutionMode",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "UnknownMessage",
    "__version__",
    "agent_loop",
    "agent_loop_continue",
    "default_convert_to_llm",
    "default_registry",
    "dump_message",
    "is_llm_message",
    "run_agent_loop",
    "run_agent_loop_continue",
    "to_wire",
]
