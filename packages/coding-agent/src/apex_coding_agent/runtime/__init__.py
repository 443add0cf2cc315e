"""The session runtime: `AgentSession`, its events, and the factory/runtime that build and replace sessions."""

from apex_coding_agent.runtime.agent_session import (
    AgentSession,
    ClearedQueues,
    ForkMessage,
    ModelCycleResult,
    ScopedModel,
    SessionListener,
)
from apex_coding_agent.runtime.bash_executor import BashResult, execute_user_bash
from apex_coding_agent.runtime.events import (
    AgentSettledEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    BashExecutionUpdateEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    QueueUpdateEvent,
    SessionAgentEndEvent,
    SessionEvent,
    SessionInfoChangedEvent,
    ThinkingLevelChangedEvent,
    to_json_event,
)
from apex_coding_agent.runtime.factory import (
    BUILTIN_TOOL_TYPES,
    AgentSessionRuntime,
    CreateAgentSessionResult,
    ForkResult,
    create_agent_session,
    create_agent_session_runtime,
    select_tools,
)

__all__ = [
    "BUILTIN_TOOL_TYPES",
    "AgentSession",
    "AgentSessionRuntime",
    "AgentSettledEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "BashExecutionUpdateEvent",
    "BashResult",
    "ClearedQueues",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "CreateAgentSessionResult",
    "ForkMessage",
    "ForkResult",
    "ModelCycleResult",
    "QueueUpdateEvent",
    "ScopedModel",
    "SessionAgentEndEvent",
    "SessionEvent",
    "SessionInfoChangedEvent",
    "SessionListener",
    "ThinkingLevelChangedEvent",
    "create_agent_session",
    "create_agent_session_runtime",
    "execute_user_bash",
    "select_tools",
    "to_json_event",
]
