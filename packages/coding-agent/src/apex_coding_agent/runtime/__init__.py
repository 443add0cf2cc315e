"""The session runtime: `AgentSession`, its events, and `create_agent_session` and the runtime that builds and replaces sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.runtime.agent_session import (
        AgentSession,
        ClearedQueues,
        ForkMessage,
        ModelCycleResult,
        NavigateTreeResult,
        ScopedModel,
        SessionListener,
    )
    from apex_coding_agent.runtime.bash_executor import BashResult, execute_user_bash
    from apex_coding_agent.runtime.create import (
        BUILTIN_TOOL_TYPES,
        CreateAgentSessionResult,
        create_agent_session,
        select_tools,
    )
    from apex_coding_agent.runtime.events import (
        AgentSettledEvent,
        AutoRetryEndEvent,
        AutoRetryStartEvent,
        BashExecutionUpdateEvent,
        CompactionEndEvent,
        CompactionStartEvent,
        EntryAppendedEvent,
        QueueUpdateEvent,
        SessionAgentEndEvent,
        SessionEvent,
        SessionInfoChangedEvent,
        SessionWriteErrorEvent,
        SummarizationRetryAttemptStartEvent,
        SummarizationRetryFinishedEvent,
        SummarizationRetryScheduledEvent,
        ThinkingLevelChangedEvent,
        to_json_event,
    )
    from apex_coding_agent.runtime.session_runtime import (
        AgentSessionRuntime,
        ForkResult,
        ReloadResult,
        create_agent_session_runtime,
    )

# Names load on first access (PEP 562): a session that runs no user shell command (`!cmd`) never loads the executor.
_EXPORTS: dict[str, str] = {
    "AgentSession": ".agent_session",
    "ClearedQueues": ".agent_session",
    "ForkMessage": ".agent_session",
    "ModelCycleResult": ".agent_session",
    "NavigateTreeResult": ".agent_session",
    "ScopedModel": ".agent_session",
    "SessionListener": ".agent_session",
    "BashResult": ".bash_executor",
    "execute_user_bash": ".bash_executor",
    "AgentSettledEvent": ".events",
    "AutoRetryEndEvent": ".events",
    "AutoRetryStartEvent": ".events",
    "BashExecutionUpdateEvent": ".events",
    "CompactionEndEvent": ".events",
    "CompactionStartEvent": ".events",
    "EntryAppendedEvent": ".events",
    "QueueUpdateEvent": ".events",
    "SessionAgentEndEvent": ".events",
    "SessionEvent": ".events",
    "SessionInfoChangedEvent": ".events",
    "SessionWriteErrorEvent": ".events",
    "SummarizationRetryAttemptStartEvent": ".events",
    "SummarizationRetryFinishedEvent": ".events",
    "SummarizationRetryScheduledEvent": ".events",
    "ThinkingLevelChangedEvent": ".events",
    "to_json_event": ".events",
    "AgentSessionRuntime": ".session_runtime",
    "BUILTIN_TOOL_TYPES": ".create",
    "CreateAgentSessionResult": ".create",
    "ForkResult": ".session_runtime",
    "ReloadResult": ".session_runtime",
    "create_agent_session": ".create",
    "create_agent_session_runtime": ".session_runtime",
    "select_tools": ".create",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


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
    "EntryAppendedEvent",
    "ForkMessage",
    "ForkResult",
    "ModelCycleResult",
    "NavigateTreeResult",
    "QueueUpdateEvent",
    "ReloadResult",
    "ScopedModel",
    "SessionAgentEndEvent",
    "SessionEvent",
    "SessionInfoChangedEvent",
    "SessionListener",
    "SessionWriteErrorEvent",
    "SummarizationRetryAttemptStartEvent",
    "SummarizationRetryFinishedEvent",
    "SummarizationRetryScheduledEvent",
    "ThinkingLevelChangedEvent",
    "create_agent_session",
    "create_agent_session_runtime",
    "execute_user_bash",
    "select_tools",
    "to_json_event",
]
