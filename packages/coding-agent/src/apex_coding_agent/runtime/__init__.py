"""The session runtime: `AgentSession`, its events, and `create_agent_session` and the runtime that builds and replaces sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.events import AgentSettledEvent as AgentSettledEvent
    from apex_coding_agent.events import AutoRetryEndEvent as AutoRetryEndEvent
    from apex_coding_agent.events import AutoRetryStartEvent as AutoRetryStartEvent
    from apex_coding_agent.events import BashExecutionUpdateEvent as BashExecutionUpdateEvent
    from apex_coding_agent.events import CompactionEndEvent as CompactionEndEvent
    from apex_coding_agent.events import CompactionStartEvent as CompactionStartEvent
    from apex_coding_agent.events import EntryAppendedEvent as EntryAppendedEvent
    from apex_coding_agent.events import QueueUpdateEvent as QueueUpdateEvent
    from apex_coding_agent.events import SessionAgentEndEvent as SessionAgentEndEvent
    from apex_coding_agent.events import SessionEvent as SessionEvent
    from apex_coding_agent.events import SessionInfoChangedEvent as SessionInfoChangedEvent
    from apex_coding_agent.events import SessionWriteErrorEvent as SessionWriteErrorEvent
    from apex_coding_agent.events import (
        SummarizationRetryAttemptStartEvent as SummarizationRetryAttemptStartEvent,
    )
    from apex_coding_agent.events import SummarizationRetryFinishedEvent as SummarizationRetryFinishedEvent
    from apex_coding_agent.events import SummarizationRetryScheduledEvent as SummarizationRetryScheduledEvent
    from apex_coding_agent.events import ThinkingLevelChangedEvent as ThinkingLevelChangedEvent
    from apex_coding_agent.events import to_json_event as to_json_event
    from apex_coding_agent.runtime.agent_session import AgentSession as AgentSession
    from apex_coding_agent.runtime.agent_session import ClearedQueues as ClearedQueues
    from apex_coding_agent.runtime.agent_session import ForkMessage as ForkMessage
    from apex_coding_agent.runtime.agent_session import ModelCycleResult as ModelCycleResult
    from apex_coding_agent.runtime.agent_session import NavigateTreeResult as NavigateTreeResult
    from apex_coding_agent.runtime.agent_session import ScopedModel as ScopedModel
    from apex_coding_agent.runtime.agent_session import SessionListener as SessionListener
    from apex_coding_agent.runtime.bash_executor import BashResult as BashResult
    from apex_coding_agent.runtime.bash_executor import execute_user_bash as execute_user_bash
    from apex_coding_agent.runtime.create import BUILTIN_TOOL_TYPES as BUILTIN_TOOL_TYPES
    from apex_coding_agent.runtime.create import CreateAgentSessionResult as CreateAgentSessionResult
    from apex_coding_agent.runtime.create import create_agent_session as create_agent_session
    from apex_coding_agent.runtime.create import select_tools as select_tools
    from apex_coding_agent.runtime.session_runtime import AgentSessionRuntime as AgentSessionRuntime
    from apex_coding_agent.runtime.session_runtime import ForkResult as ForkResult
    from apex_coding_agent.runtime.session_runtime import ReloadResult as ReloadResult
    from apex_coding_agent.runtime.session_runtime import create_agent_session_runtime as create_agent_session_runtime

# Names load on first access (PEP 562): a session that runs no user shell command (`!cmd`) never loads the executor.
_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
