"""`AgentEventRouter`: where each event of the session's agent goes.

Extensions get their view of it first (a `message_end` handler may replace the message), then the collaborators
react (the recorder persists finished messages and the system record, the compaction runner tracks replies, the
retry runner its attempts, the queues what was delivered), and session subscribers get it last. `agent_end`
decides whether a retry or an automatic compaction follows and becomes the session's `agent_end{willRetry}`.
"""

from __future__ import annotations

from apex_agent.agent import Agent, declarations
from apex_agent.tools import AgentTool
from apex_ai.abort import AbortSignal
from apex_ai.types import AssistantMessage, UserMessage
from apex_coding_agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    SessionAgentEndEvent,
    TurnStartEvent,
)
from apex_coding_agent.runtime.compaction_policy import CompactionPlan
from apex_coding_agent.runtime.extension_host import TurnCounter, advance_turns, to_extension_event
from apex_coding_agent.runtime.session_parts import RunState
from apex_coding_agent.runtime.session_wiring import SessionParts


class AgentEventRouter:
    """Receives every agent event of one session (installed by `AgentHooks.install`)."""

    def __init__(self, agent: Agent, parts: SessionParts, state: RunState) -> None:
        self._agent = agent  # not the complete-list accessor: routing needs no message list
        self._parts = parts
        self._state = state
        self._turns = TurnCounter()

    async def on_agent_event(self, event: AgentEvent, signal: AbortSignal | None) -> None:
        parts = self._parts
        if isinstance(event, AgentStartEvent):
            # The run copied the agent's tools as it started, and a prompt rebuilt mid-run waits for the next run:
            # the record follows what this run's requests are sent with (taken before any listener runs; tools
            # that join at a later turn update it in `turn_tools`).
            self._state.run_declared = (parts.tools.base_system_prompt, declarations(self._agent.state.tools))
        runner = parts.services.extension_runner
        if runner is not None:
            if isinstance(event, MessageEndEvent):
                if runner.has_handlers("message_end"):
                    event = await parts.recorder.replace_message_end(event, runner)
            elif runner.has_handlers(event.type):  # extension events share the agent events' type names
                await runner.emit(to_extension_event(event, self._turns))
            else:
                # Nobody listens: skip building the pydantic event (it showed up in start-up profiles).
                advance_turns(event, self._turns)
        if isinstance(event, MessageStartEvent):
            if isinstance(event.message, UserMessage):
                parts.compaction.new_user_message()
            await parts.queues.message_started(event.message)
            await parts.events.emit(event)
        elif isinstance(event, MessageEndEvent):
            await parts.recorder.persist_in_run(event.message, self.stop_unsaved_run)
            await parts.events.emit(event)
            message = event.message
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "length"):
                parts.compaction.reply_ok()
            if (
                parts.retry.attempt > 0
                and isinstance(message, AssistantMessage)
                and message.stop_reason not in ("error", "aborted")
            ):
                await parts.retry.succeeded()
        elif isinstance(event, AgentEndEvent):
            await self._on_agent_end(event, signal)
        else:
            await parts.events.emit(event)
            if isinstance(event, TurnStartEvent):
                prompt, tools = self._state.run_declared or (
                    parts.tools.base_system_prompt,
                    declarations(self._agent.state.tools),
                )
                await parts.recorder.record_system(prompt, tools)

    async def _on_agent_end(self, event: AgentEndEvent, signal: AbortSignal | None) -> None:
        parts = self._parts
        if parts.recorder.write_error is not None:
            event = event.model_copy(update={"stop_reason": "error"})  # stopped because the session is not saved
        failed = parts.retry.retryable_failure(event, signal)
        parts.retry.failed = failed
        plan: CompactionPlan | None = None
        if failed is None:
            self._state.last_stop_reason = event.stop_reason
            if signal is None or not signal.aborted:
                plan = parts.compaction.plan_after_run(event.messages)
        parts.compaction.pending_plan = plan
        will_retry = failed is not None or (plan is not None and plan.will_retry)
        session_event = SessionAgentEndEvent(
            messages=event.messages, stop_reason=event.stop_reason, budget=event.budget, will_retry=will_retry
        )
        await parts.events.emit(session_event)
        if failed is None and parts.retry.attempt > 0:
            await parts.retry.gave_up(event)

    def turn_tools(self, current: list[AgentTool]) -> list[AgentTool] | None:
        """The agent loop asks before each turn: the tools of this turn's request (None keeps `current`).

        A change of the active tools that leaves the system prompt as the run started with it (an MCP server's
        tools arriving late or changing, an extension tool without a prompt snippet) joins here, at the turn
        boundary; one that changes the prompt waits for the next run, whose prompt says so. What this returns is
        what the `turn_start` that follows records, so the record stays what each request declares.
        """
        declared = self._state.run_declared
        if declared is None:
            return None
        prompt, recorded = declared
        tools = current
        active = self._agent.state.tools
        if self._parts.tools.base_system_prompt == prompt and not _same(active, current):
            tools = list(active)
        now = declarations(tools)
        if now != recorded:
            self._state.run_declared = (prompt, now)
        return tools if tools is not current else None

    def stop_unsaved_run(self) -> None:
        self._agent.abort()  # drops the agent's queues: keep the displayed queues in step
        self._parts.queues.clear()


def _same(a: list[AgentTool], b: list[AgentTool]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


__all__ = ["AgentEventRouter"]
