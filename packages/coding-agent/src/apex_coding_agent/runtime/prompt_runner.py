"""`PromptRunner`: how a session's runs start, queue, stop and settle.

A prompt passes the input pipeline (prompt_input.py), waits for a due compaction, gets the `before_agent_start`
additions and runs; the retries and automatic compactions that follow (run_loop.py) belong to the same run, which
settles with `agent_settled`. While a run streams, text is queued as steering or follow-up messages; extension
messages are delivered by `send_custom_message` / `send_user_message`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apex_agent.agent import Agent
from apex_agent.messages import AgentMessage
from apex_agent.types import AgentStopReason, BudgetUsage
from apex_ai.types import ImageContent, Model, TextContent, UserMessage, now_ms
from apex_coding_agent.events import AgentSettledEvent, MessageEndEvent, MessageStartEvent
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.bindings import DeliverAs
from apex_coding_agent.runtime.prompt_input import PromptSource, StreamingBehavior, custom_message
from apex_coding_agent.runtime.run_loop import continue_run
from apex_coding_agent.runtime.session_errors import (
    COMPACTING_TEXT,
    NO_MODEL_TEXT,
    STREAMING_WITHOUT_BEHAVIOR,
    no_api_key_text,
)
from apex_coding_agent.runtime.session_parts import RunState
from apex_coding_agent.runtime.session_wiring import SessionHost, SessionParts


@dataclass(frozen=True)
class ClearedQueues:
    steering: list[str]
    follow_up: list[str]


def _queued_message(text: str, images: Sequence[ImageContent] | None) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text), *(images or [])]
    return UserMessage(content=content, timestamp=now_ms())


class PromptRunner:
    """Runs of one session (see the module docstring); `AgentSession` delegates its prompting methods here."""

    def __init__(self, agent: Agent, host: SessionHost, parts: SessionParts, state: RunState) -> None:
        self._agent = agent  # not `host.agent`: stopping or waiting needs no message list
        self._host = host
        self._parts = parts
        self._state = state

    def check_alive(self) -> None:
        if self._state.disposed:
            raise RuntimeError("This session was disposed; use the runtime's current session")

    def check_ready(self) -> Model:
        if self._parts.compaction.is_compacting:
            raise RuntimeError(COMPACTING_TEXT)
        model = self._host.model
        if model is None:
            raise RuntimeError(NO_MODEL_TEXT)
        if not self._parts.services.model_runtime.is_available(model):
            raise RuntimeError(no_api_key_text(model.provider))
        return model

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        streaming_behavior: StreamingBehavior | None,
        source: PromptSource,
        expand_prompt_templates: bool,
        preflight_result: Callable[[bool], None] | None,
    ) -> AgentStopReason | None:
        self.check_alive()
        parts = self._parts

        def preflight(ok: bool) -> None:
            if preflight_result is not None:
                preflight_result(ok)

        accepted = await parts.input.before_checks(text, images, source, streaming_behavior)
        if accepted is None:
            preflight(True)
            return None
        text, images = accepted

        if parts.compaction.is_compacting and streaming_behavior is None:
            preflight(False)
            raise RuntimeError(COMPACTING_TEXT)
        if self._host.is_streaming:
            if streaming_behavior is None:
                preflight(False)
                raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
            await self.queue(streaming_behavior, text, images, expand_prompt_templates)
            preflight(True)
            return None
        try:
            self.check_ready()
        except RuntimeError:
            preflight(False)
            raise
        if expand_prompt_templates:
            text = parts.input.expand(text)
        content: list[TextContent | ImageContent] = [TextContent(text=text), *(images or [])]
        message = UserMessage(content=content, timestamp=now_ms())
        self._begin()
        preflight(True)
        tools = parts.tools
        try:
            parts.bash.flush_pending()
            await parts.compaction.compact_before_prompt()
            if self._abort_requested():
                self._state.last_stop_reason = "aborted"
                await self._settled()
                return self._state.last_stop_reason
            batch: list[AgentMessage] = [message, *self._take_next_turn()]
            added, run_prompt = await parts.input.before_agent_start(
                text, images, tools.base_system_prompt, tools.system_prompt_options
            )
            batch.extend(added)
            if run_prompt is not None:
                self._host.agent.state.system_prompt = run_prompt
            return await self._run(lambda: self._host.agent.prompt(batch))
        finally:
            self._host.agent.state.system_prompt = tools.base_system_prompt
            self._end()

    def _take_next_turn(self) -> list[AgentMessage]:
        pending, self._state.next_turn = self._state.next_turn, []
        return pending

    async def continue_(self) -> AgentStopReason | None:
        self.check_alive()
        if self._host.is_streaming:
            raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
        self.check_ready()
        self._begin()
        try:
            return await self._run(self._host.agent.continue_)
        finally:
            self._end()

    async def _run_messages(self, messages: list[AgentMessage]) -> None:
        if self._host.is_streaming:
            for message in messages:
                self._host.agent.steer(message)
            return
        self.check_ready()
        self._begin()
        try:
            await self._run(lambda: self._host.agent.prompt(messages))
        finally:
            self._end()

    def _begin(self) -> None:
        state = self._state
        state.busy = True
        state.aborted = False
        self._parts.recorder.write_error = None
        state.idle.clear()
        agent = self._host.agent
        agent.run_budget = self._host.run_budget
        agent.budget_usage = BudgetUsage()  # one budget per user prompt; continuations share it

    def _abort_requested(self) -> bool:
        """`abort()` was called during the current prompt (a method: the flag changes across awaits)."""
        return self._state.aborted

    def _end(self) -> None:
        self._state.busy = False
        self._state.idle.set()

    async def _run(self, start: Callable[[], Awaitable[AgentStopReason]]) -> AgentStopReason | None:
        state = self._state
        state.last_stop_reason = None
        self._parts.compaction.pending_plan = None
        await start()
        await continue_run(
            lambda: self._host.agent,
            self._parts.retry,
            self._parts.compaction,
            disposed=lambda: state.disposed,
            abort_requested=self._abort_requested,
            on_retry_cancelled=self._retry_cancelled,
        )
        await self._settled()
        return state.last_stop_reason

    async def _settled(self) -> None:
        runner = self._parts.services.extension_runner
        if runner is not None and runner.has_handlers("agent_settled"):
            await runner.emit(ext.extension_view(AgentSettledEvent()))
        await self._parts.events.emit(AgentSettledEvent())

    def _retry_cancelled(self) -> None:
        self._state.last_stop_reason = "aborted"

    async def abort(self) -> None:
        self._parts.retry.abort()
        if self._state.busy:
            self._state.aborted = True
            if self._parts.compaction.auto_running:
                self._parts.compaction.abort()
        self._agent.abort()  # a run already has its message list
        self._parts.queues.clear()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        await self._state.idle.wait()
        await self._agent.wait_for_idle()
        await self._parts.events.drain()

    # ----------------------------------------------------------------- queues

    async def queue(
        self, behavior: StreamingBehavior, text: str, images: Sequence[ImageContent] | None, expand: bool
    ) -> None:
        self.check_alive()
        parts = self._parts
        parts.input.reject_command(text)
        if expand:
            text = parts.input.expand(text)
        message = _queued_message(text, images)
        if behavior == "steer":
            self._host.agent.steer(message)
            await parts.queues.added(parts.queues.steering, text)
        else:
            self._host.agent.follow_up(message)
            await parts.queues.added(parts.queues.follow_up, text)

    def clear_queue(self) -> ClearedQueues:
        queues = self._parts.queues
        cleared = ClearedQueues(list(queues.steering), list(queues.follow_up))
        self._host.agent.clear_all_queues()
        queues.clear()
        return cleared

    # ----------------------------------------------------------------- extension messages

    def send_custom_message(self, message: dict[str, Any], deliver_as: DeliverAs | None, trigger_turn: bool) -> None:
        custom = custom_message(message)
        if deliver_as == "nextTurn":
            self._state.next_turn.append(custom)
        elif self._host.is_streaming:
            if deliver_as == "followUp":
                self._host.agent.follow_up(custom)
            else:
                self._host.agent.steer(custom)
        elif trigger_turn:
            self._parts.events.spawn(self._run_messages([custom]), "send_message")
        else:
            self._parts.recorder.record(custom)
            self._parts.events.emit_soon(MessageStartEvent(message=custom))
            self._parts.events.emit_soon(MessageEndEvent(message=custom))

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: DeliverAs | None) -> None:
        if isinstance(content, str):
            text, images = content, None
        else:
            text = "".join(b.text for b in content if isinstance(b, TextContent))
            images = [b for b in content if isinstance(b, ImageContent)] or None
        spawn = self._parts.events.spawn
        if self._host.is_streaming:
            if deliver_as is None:
                raise RuntimeError(STREAMING_WITHOUT_BEHAVIOR)
            spawn(self.queue("steer" if deliver_as == "steer" else "followUp", text, images, True), "send_user_message")
            return
        spawn(self.prompt(text, images, None, "extension", True, None), "send_user_message")


__all__ = ["ClearedQueues", "PromptRunner"]
