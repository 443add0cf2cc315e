"""The session's events, defined once: the agent's events plus what the session adds.

`AgentSession.subscribe` listeners receive `SessionEvent`s. The agent's own `agent_end` is replaced by
`SessionAgentEndEvent`, which adds `willRetry`. The other views are derived, never redefined:

- JSON/RPC: `to_json_event` gives the wire dict of any event here (a `message_update` carries only its
  `assistantMessageEvent` without `partial`).
- Extensions: handlers subscribe to the types in `EXTENSION_VISIBLE` and receive these same classes
  (`apex_coding_agent.extensions.events.extension_view` adds the turn number where the extension API has one).

A new session event is a class here, a member of `SessionOnlyEvent`, and (if extensions may see it) a line
in `EXTENSION_VISIBLE`.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

from pydantic import ConfigDict

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
from apex_ai._wire import WireModel
from apex_coding_agent.session.entries import CustomEntry

CompactionReason: TypeAlias = Literal["manual", "threshold", "overflow"]
SummarySource: TypeAlias = Literal["compaction", "branchSummary"]


class _RareEvent(WireModel):
    """An event most runs never emit: its pydantic schema is built on first use, not on every start."""

    model_config = ConfigDict(defer_build=True)


class SessionAgentEndEvent(AgentEndEvent):
    """`agent_end` as the session reports it: `willRetry` is true when an automatic retry follows."""

    will_retry: bool = False


class AgentSettledEvent(WireModel):
    """Nothing is left to do for the last prompt: no retry, no compaction retry, no queued continuation."""

    type: Literal["agent_settled"] = "agent_settled"


class QueueUpdateEvent(WireModel):
    """The full pending queues, as display strings, after every change."""

    type: Literal["queue_update"] = "queue_update"
    steering: list[str]
    follow_up: list[str]


class AutoRetryStartEvent(_RareEvent):
    type: Literal["auto_retry_start"] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class AutoRetryEndEvent(_RareEvent):
    type: Literal["auto_retry_end"] = "auto_retry_end"
    success: bool
    attempt: int
    final_error: str | None = None


class CompactionStartEvent(_RareEvent):
    type: Literal["compaction_start"] = "compaction_start"
    reason: CompactionReason


class CompactionEndEvent(_RareEvent):
    """`result` is the compaction's wire dict when one was applied."""

    type: Literal["compaction_end"] = "compaction_end"
    reason: CompactionReason
    # The compaction result's own wire dict: a JSON object whose shape the compaction module owns.
    result: dict[str, Any] | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    warning: str | None = None
    """Set when the compaction freed less than 10% of the context (automatic compaction then pauses)."""


class SummarizationRetryScheduledEvent(_RareEvent):
    """A summarization request (compaction or branch summary) failed transiently and will be retried."""

    type: Literal["summarization_retry_scheduled"] = "summarization_retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class SummarizationRetryAttemptStartEvent(_RareEvent):
    """A retried summarization request starts; `reason` only for `source="compaction"`."""

    type: Literal["summarization_retry_attempt_start"] = "summarization_retry_attempt_start"
    source: SummarySource
    reason: CompactionReason | None = None


class SummarizationRetryFinishedEvent(_RareEvent):
    """The retried summarization ended (successfully or not); sent only after a retry was scheduled."""

    type: Literal["summarization_retry_finished"] = "summarization_retry_finished"


class SessionInfoChangedEvent(_RareEvent):
    """The session name changed; `name` is absent when it was cleared."""

    type: Literal["session_info_changed"] = "session_info_changed"
    name: str | None = None


class ThinkingLevelChangedEvent(_RareEvent):
    type: Literal["thinking_level_changed"] = "thinking_level_changed"
    level: str


class EntryAppendedEvent(_RareEvent):
    """An extension's `append_entry` wrote `entry` (a `custom` session entry, as stored in the file).

    JSON and RPC clients learn of entries that carry no message this way; message entries already
    arrive as `message_end`.
    """

    type: Literal["entry_appended"] = "entry_appended"
    entry: CustomEntry


class BashExecutionUpdateEvent(_RareEvent):
    """One processed output chunk of a user shell command (`!cmd`, RPC `bash`)."""

    type: Literal["bash_execution_update"] = "bash_execution_update"
    id: str | None = None
    delta: str


class SessionWriteErrorEvent(_RareEvent):
    """Saving an entry to the session file failed (disk full, file size limit, file taken by another writer...):
    the run stops and ends with status `error`. `error` names the file and the cause."""

    type: Literal["session_write_error"] = "session_write_error"
    error: str


class McpServerStatusEvent(_RareEvent):
    """An MCP server's status changed: `connecting`, `connected` (with its tool count), `restarting` or `failed`
    (with the error), `disabled`, `closed`."""

    type: Literal["mcp_server_status"] = "mcp_server_status"
    server: str
    status: str
    tools: int = 0
    error: str | None = None


SessionOnlyEvent: TypeAlias = (
    SessionAgentEndEvent
    | AgentSettledEvent
    | QueueUpdateEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | SummarizationRetryScheduledEvent
    | SummarizationRetryAttemptStartEvent
    | SummarizationRetryFinishedEvent
    | SessionInfoChangedEvent
    | ThinkingLevelChangedEvent
    | BashExecutionUpdateEvent
    | EntryAppendedEvent
    | SessionWriteErrorEvent
    | McpServerStatusEvent
)

SessionEvent: TypeAlias = (
    AgentStartEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | SessionOnlyEvent
)
"""Everything a session subscriber can receive. A raw apex_agent `agent_end` is never delivered."""

EXTENSION_VISIBLE: Final[frozenset[str]] = frozenset(
    {
        "agent_start",
        "agent_end",
        "agent_settled",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "session_info_changed",
    }
)
"""The session event types extension handlers may subscribe to (`pi.on(type, handler)`); the others
(queues, retries, compaction progress, bash output, write errors) have extension events of their own or none."""


def to_json_event(event: SessionEvent | AgentEvent) -> dict[str, Any]:
    """The JSON/RPC wire dict of an event (slim `message_update`, every other event unchanged)."""
    return to_wire(event, for_stream=True)


__all__ = [
    "EXTENSION_VISIBLE",
    "AgentEndEvent",
    "AgentEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "BashExecutionUpdateEvent",
    "CompactionEndEvent",
    "CompactionReason",
    "CompactionStartEvent",
    "EntryAppendedEvent",
    "McpServerStatusEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueUpdateEvent",
    "SessionAgentEndEvent",
    "SessionEvent",
    "SessionInfoChangedEvent",
    "SessionOnlyEvent",
    "SessionWriteErrorEvent",
    "SummarizationRetryAttemptStartEvent",
    "SummarizationRetryFinishedEvent",
    "SummarizationRetryScheduledEvent",
    "SummarySource",
    "ThinkingLevelChangedEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "to_json_event",
]
