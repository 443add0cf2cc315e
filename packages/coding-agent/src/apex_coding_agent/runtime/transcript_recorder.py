"""`TranscriptRecorder`: how an `AgentSession`'s messages become session entries.

Every finished message becomes an entry (pending assistants, compaction and branch summaries never do); system
messages are written only at turn boundaries, when the prompt or tools the run's requests carry changed
(runtime/system_record.py, docs/sessions.md). A write that fails during a run stops the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from apex_agent.agent import Agent
from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage, SystemMessage, Tool, now_ms
from apex_coding_agent.events import MessageEndEvent, MessageStartEvent, SessionEvent, SessionWriteErrorEvent
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.messages import CompactionSummaryMessage, CustomMessage
from apex_coding_agent.runtime.system_record import SystemRecord
from apex_coding_agent.session.file_errors import SessionFileError
from apex_coding_agent.session.session_manager import SessionManager


class TranscriptRecorder:
    def __init__(
        self,
        agent: Callable[[], Agent],
        session_manager: SessionManager,
        emit: Callable[[SessionEvent], Awaitable[None]],
    ) -> None:
        self._agent = agent
        self._manager = session_manager
        self._emit = emit
        self.system_record = SystemRecord(session_manager)
        self.write_error: str | None = None
        """Why saving an entry of the current run failed (the run was stopped; it ends as `error`)."""

    def persist(self, message: AgentMessage) -> None:
        """Store a finished message as a session entry (pending messages never are; system messages are written
        by `record_system` only)."""
        if isinstance(message, SystemMessage | CompactionSummaryMessage):
            return
        if isinstance(message, AssistantMessage) and message.stop_reason == "pending":
            return
        if getattr(message, "role", None) == "branchSummary":
            return
        if isinstance(message, CustomMessage):
            self._manager.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details
            )
            return
        self._manager.append_message(message)

    def record(self, message: AgentMessage) -> None:
        """Add a message outside a run: to the agent's transcript and the file."""
        agent = self._agent()
        agent.state.messages = [*agent.state.messages, message]
        self.persist(message)

    async def persist_in_run(self, message: AgentMessage, stop_run: Callable[[], None]) -> None:
        """`persist` during a run, where an exception would only be logged by the agent loop: a failed write
        is reported as a `session_write_error` event and stops the run (`stop_run`), which then ends with status
        `error` (going on would lose every later entry, and tools would act with no record kept)."""
        try:
            self.persist(message)
        except (SessionFileError, OSError) as exc:
            first = self.write_error is None
            self.write_error = str(exc)
            stop_run()
            if first:
                await self._emit(SessionWriteErrorEvent(error=str(exc)))

    async def record_system(self, prompt: str, tools: list[Tool]) -> None:
        """At a turn boundary (before the turn's first message), append the system message that brings the
        session's record of the prompt and tools up to date; JSON and RPC clients see it as a message."""
        record = self.system_record
        if record.session_id != self._manager.session_id:
            record.invalidate(self._manager)
        delta = record.delta(prompt, tools, now_ms())
        if delta is None:
            return
        self._manager.append_message(delta)
        record.appended(delta)
        await self._emit(MessageStartEvent(message=delta))
        await self._emit(MessageEndEvent(message=delta))

    async def replace_message_end(self, event: MessageEndEvent, runner: ExtensionRunner) -> MessageEndEvent:
        """`message_end` handlers may replace the finished message (same role): the transcript gets the new one.

        The agent loop keeps its own reference to the message for the rest of the run, so a replacement of the
        same class is copied into that object; another class only replaces the transcript entry.
        """
        original = event.message
        replaced = await runner.emit_message_end(original)
        if replaced is original:
            return event
        if type(replaced) is type(original) and isinstance(original, BaseModel):
            for name in type(original).model_fields:
                object.__setattr__(original, name, getattr(replaced, name))
            return event
        agent = self._agent()
        messages = agent.state.messages
        if messages and messages[-1] is original:
            agent.state.messages = [*messages[:-1], replaced]
        return MessageEndEvent(message=replaced)


__all__ = ["TranscriptRecorder"]
