"""The `Agent` class: state, listeners, queues and runs of the loop.

The agent owns a transcript and runs `run_agent_loop` on a snapshot of it, folding every event into
its state before awaiting its listeners in subscription order. Run failures become events, never
exceptions out of `prompt()`; only misuse (a second prompt while running, an impossible continue)
raises.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel

from apex_agent.agent_loop import RunTracker, run_agent_loop_continue
from apex_agent.events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    TurnEndEvent,
)
from apex_agent.messages import AgentMessage, MessageRegistry, default_convert_to_llm, default_registry
from apex_agent.tools import AgentTool
from apex_agent.types import (
    AfterToolCall,
    AgentContext,
    AgentLoopConfig,
    AgentStopReason,
    BeforeToolCall,
    BudgetUsage,
    ConvertToLlm,
    GetApiKey,
    GetTurnTools,
    PrepareNextTurn,
    QueuedMessages,
    QueueMode,
    RunBudget,
    ShouldStopAfterTurn,
    StreamFn,
    SystemUpdate,
    ToolExecutionMode,
    TransformContext,
)
from apex_ai.abort import ABORTED_MESSAGE, AbortController, AbortSignal
from apex_ai.options import CredentialStore
from apex_ai.transcript import current_system_message, initial_system_message, tool_state_changes
from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    ModelThinkingLevel,
    SystemMessage,
    TextContent,
    Tool,
    ToolReference,
    UserMessage,
    now_ms,
)

log = logging.getLogger(__name__)

Listener = Callable[[AgentEvent, AbortSignal | None], "Awaitable[None] | None"]
PromptInput = str | AgentMessage | Sequence[AgentMessage]

BUSY_TEXT = (
    "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
)


def declarations(tools: Sequence[AgentTool]) -> list[Tool]:
    """The declarations the model sees for executable tools."""
    return [tool.declaration() for tool in tools]


class AgentState:
    """What the agent holds. `messages` and `tools` assignments copy the list; runtime fields are read-only."""

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: ModelThinkingLevel = "off",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[AgentMessage] = (),
    ) -> None:
        self.system_prompt = system_prompt
        self.model = model
        self.thinking_level: ModelThinkingLevel = thinking_level
        self._tools = list(tools)
        self._messages = list(messages)
        self._is_streaming = False
        self._streaming_message: AgentMessage | None = None
        self._pending_tool_calls: frozenset[str] = frozenset()
        self._error_message: str | None = None
        self._last_stop_reason: AgentStopReason | None = None

    @property
    def messages(self) -> list[AgentMessage]:
        return self._messages

    @messages.setter
    def messages(self, value: Sequence[AgentMessage]) -> None:
        self._messages = list(value)

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, value: Sequence[AgentTool]) -> None:
        self._tools = list(value)

    @property
    def is_streaming(self) -> bool:
        return self._is_streaming

    @property
    def streaming_message(self) -> AgentMessage | None:
        return self._streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        return self._pending_tool_calls

    @property
    def error_message(self) -> str | None:
        return self._error_message

    @property
    def last_stop_reason(self) -> AgentStopReason | None:
        return self._last_stop_reason


class Agent:
    """A conversation with one model: `prompt()` runs the loop; `steer()`/`follow_up()` queue input mid-run."""

    def __init__(
        self,
        initial_state: AgentState | None = None,
        *,
        stream_fn: StreamFn | None = None,
        convert_to_llm: ConvertToLlm = default_convert_to_llm,
        transform_context: TransformContext | None = None,
        get_api_key: GetApiKey | None = None,
        credentials: CredentialStore | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        should_stop_after_turn: ShouldStopAfterTurn | None = None,
        prepare_next_turn: PrepareNextTurn | None = None,
        get_turn_tools: GetTurnTools | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        thinking_budgets: dict[str, int] | None = None,
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
        run_budget: RunBudget | None = None,
        registry: MessageRegistry = default_registry,
        system_messages: bool = True,
    ) -> None:
        self.state = initial_state or AgentState()
        self.stream_fn = stream_fn
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.get_api_key = get_api_key
        self.credentials = credentials
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.should_stop_after_turn = should_stop_after_turn
        self.prepare_next_turn = prepare_next_turn
        self.get_turn_tools = get_turn_tools
        """Asked before each turn of a run for its tools (see `AgentLoopConfig.get_turn_tools`); without it a run
        keeps the tools it started with, except for held system deltas."""
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.session_id = session_id
        self.thinking_budgets = thinking_budgets
        self.max_retry_delay_ms = max_retry_delay_ms
        self.tool_execution: ToolExecutionMode = tool_execution
        self.run_budget = run_budget
        self.budget_usage: BudgetUsage | None = None
        """Set by a host to carry budget counters into continuation runs of one user prompt (see `AgentLoopConfig`)."""
        self.registry = registry
        self.system_messages = system_messages

        self._listeners: list[Listener] = []
        self._steering: deque[AgentMessage] = deque()
        self._follow_up: deque[AgentMessage] = deque()
        self._held_system: list[SystemMessage] = []
        self._held_tools: list[AgentTool] | None = None
        self._controller: AbortController | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._notifications: list[asyncio.Task[None]] = []
        if system_messages and not any(m.role == "system" for m in self.state.messages):
            initial = initial_system_message(self.state.system_prompt, declarations(self.state.tools))
            if initial is not None:
                self.state.messages = [initial, *self.state.messages]

    # ----------------------------------------------------------------- listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event, signal)` for every event (awaited if async); returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def signal(self) -> AbortSignal | None:
        """The current run's abort signal (None when idle)."""
        return self._controller.signal if self._controller is not None else None

    def _reduce(self, event: AgentEvent) -> None:
        state = self.state
        if isinstance(event, MessageStartEvent | MessageUpdateEvent):
            state._streaming_message = event.message
        elif isinstance(event, MessageEndEvent):
            state._streaming_message = None
            state._messages.append(event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            state._pending_tool_calls = state._pending_tool_calls | {event.tool_call_id}
        elif isinstance(event, ToolExecutionEndEvent):
            state._pending_tool_calls = state._pending_tool_calls - {event.tool_call_id}
        elif isinstance(event, TurnEndEvent):
            if isinstance(event.message, AssistantMessage) and event.message.error_message:
                state._error_message = event.message.error_message
        elif isinstance(event, AgentEndEvent):
            state._streaming_message = None
            state._last_stop_reason = event.stop_reason

    async def _emit(self, event: AgentEvent) -> None:
        self._reduce(event)
        signal = self.signal
        for listener in list(self._listeners):
            try:
                result = listener(event, signal)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a broken listener must not break the run or starve the other listeners
                log.exception("agent listener failed on %s", event.type)

    # ----------------------------------------------------------------- runs

    @property
    def is_running(self) -> bool:
        return self._controller is not None

    async def prompt(self, input: PromptInput, images: Sequence[ImageContent] | None = None) -> AgentStopReason:
        """Run the loop on new prompt messages; returns how the run ended. Raises only on misuse."""
        if self.is_running:
            raise RuntimeError(BUSY_TEXT)
        return await self._run(self._prompt_messages(input, images))

    async def continue_(self) -> AgentStopReason:
        """Continue from the transcript: a user/toolResult tail re-requests, an assistant tail takes queued input."""
        if self.is_running:
            raise RuntimeError(BUSY_TEXT)
        messages = self.state.messages
        if not messages:
            raise ValueError("No messages to continue from")
        if messages[-1].role == "assistant":
            steering = self._drain(self._steering, self.steering_mode)
            if steering:
                return await self._run(steering, poll_steering=False)
            follow_ups = self._drain(self._follow_up, self.follow_up_mode)
            if follow_ups:
                return await self._run(follow_ups)
            raise ValueError("Cannot continue from message role: assistant")
        return await self._run(None)

    def _prompt_messages(self, input: PromptInput, images: Sequence[ImageContent] | None) -> list[AgentMessage]:
        if isinstance(input, str):
            content: list[TextContent | ImageContent] = [TextContent(text=input), *(images or [])]
            return [UserMessage(content=content, timestamp=now_ms())]
        if isinstance(input, list | tuple):
            return list(input)
        if isinstance(input, BaseModel):
            return [input]
        raise TypeError(f"Cannot prompt with {type(input).__name__}")

    def _config(self) -> AgentLoopConfig:
        state = self.state
        if state.model is None:
            raise ValueError("No model configured: set agent.state.model before prompting")
        config = AgentLoopConfig(
            model=state.model,
            reasoning=None if state.thinking_level == "off" else state.thinking_level,
            session_id=self.session_id,
            thinking_budgets=self.thinking_budgets,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            credentials=self.credentials,
            should_stop_after_turn=self.should_stop_after_turn,
            prepare_next_turn=self.prepare_next_turn,
            get_steering_messages=lambda: self._drain(self._steering, self.steering_mode),
            get_follow_up_messages=lambda: self._drain(self._follow_up, self.follow_up_mode),
            has_queued_messages=self.has_queued_messages,
            get_system_update=self._take_system_update,
            get_turn_tools=self.get_turn_tools,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            run_budget=self.run_budget,
            budget_usage=self.budget_usage,
        )
        if self.max_retry_delay_ms is not None:
            config.max_retry_delay_ms = self.max_retry_delay_ms
        return config

    async def _run(self, prompts: list[AgentMessage] | None, *, poll_steering: bool = True) -> AgentStopReason:
        config = self._config()
        state = self.state
        context = AgentContext(state.system_prompt, list(state.messages), list(state.tools))
        controller = self._controller = AbortController()
        self._idle.clear()
        state._is_streaming = True
        state._error_message = None
        state._last_stop_reason = None
        tracker = RunTracker(self._emit)
        try:
            if prompts is None:
                await run_agent_loop_continue(context, config, tracker, controller.signal, self.stream_fn)
            else:
                await run_agent_loop_continue(
                    context,
                    config,
                    tracker,
                    controller.signal,
                    self.stream_fn,
                    prompts=prompts,
                    poll_steering=poll_steering,
                )
        except asyncio.CancelledError:
            self._record_cancelled()
            raise
        except Exception as exc:  # a run failure is reported as events, never raised out of prompt()
            if await tracker.fail(exc, config.model, controller.signal) is None:
                log.exception("agent run failed after agent_end")
        finally:
            state._is_streaming = False
            state._streaming_message = None
            state._pending_tool_calls = frozenset()
            self._controller = None
            self._idle.set()
        return state.last_stop_reason or "completed"

    def _record_cancelled(self) -> None:
        # The task was cancelled rather than aborted: keep what streamed so far, marked as aborted.
        partial = self.state.streaming_message
        if isinstance(partial, AssistantMessage):
            update = {"stop_reason": "aborted", "error_message": ABORTED_MESSAGE}
            self.state._messages.append(partial.model_copy(update=update))
        self.state._last_stop_reason = "aborted"

    def abort(self) -> QueuedMessages:
        """Abort the current run; clears both queues and returns what they held (idle: no-op, empty result)."""
        if self._controller is None:
            return QueuedMessages()
        queued = QueuedMessages(steering=list(self._steering), follow_up=list(self._follow_up))
        self.clear_all_queues()
        self._controller.abort()
        return queued

    async def wait_for_idle(self) -> None:
        """Return once no run is active and every listener (also of idle system deltas) has finished."""
        await self._idle.wait()
        while self._notifications:
            await asyncio.gather(*self._notifications)
            self._notifications = [task for task in self._notifications if not task.done()]

    def reset(self) -> None:
        """Forget the transcript (except the replayed system baseline), queues and runtime fields."""
        if self.is_running:
            raise RuntimeError("Cannot reset while the agent is running")
        baseline = current_system_message(self.state.messages) if self.system_messages else None
        self.state.messages = [] if baseline is None else [baseline]
        self.state._error_message = None
        self.state._last_stop_reason = None
        self.state._streaming_message = None
        self.state._pending_tool_calls = frozenset()
        self._held_system.clear()
        self._held_tools = None
        self.clear_all_queues()

    # ----------------------------------------------------------------- queues

    @staticmethod
    def _as_message(message: str | AgentMessage) -> AgentMessage:
        return (
            UserMessage(content=[TextContent(text=message)], timestamp=now_ms())
            if isinstance(message, str)
            else message
        )

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for injection after the current turn (after all its tool calls)."""
        self._steering.append(self._as_message(message))

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._follow_up.append(self._as_message(message))

    @staticmethod
    def _drain(queue: deque[AgentMessage], mode: QueueMode) -> list[AgentMessage]:
        if not queue:
            return []
        if mode == "one-at-a-time":
            return [queue.popleft()]
        drained = list(queue)
        queue.clear()
        return drained

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return bool(self._steering or self._follow_up)

    @property
    def steering_queue(self) -> list[AgentMessage]:
        return list(self._steering)

    @property
    def follow_up_queue(self) -> list[AgentMessage]:
        return list(self._follow_up)

    # ----------------------------------------------------------------- system prompt and tools

    def set_system_prompt(self, text: str) -> None:
        """Replace the prompt: a `replace` system message carrying the current tools (or, without system
        messages, just `state.system_prompt`)."""
        self.state.system_prompt = text
        if self.system_messages:
            tools = declarations(self.state.tools) or None
            self._deliver(SystemMessage(content=text, tools_added=tools, replace=True, timestamp=now_ms()), None)

    def set_tools(self, tools: Sequence[AgentTool]) -> None:
        """Replace the executable tools; with system messages, a delta of what changed is appended."""
        previous = declarations(self.state.tools)
        self.state.tools = tools
        if not self.system_messages:
            return
        changes = tool_state_changes(previous, declarations(tools))
        message = None
        if changes.tools_added or changes.tools_removed:
            message = SystemMessage(
                tools_added=changes.tools_added or None,
                tools_removed=changes.tools_removed or None,
                timestamp=now_ms(),
            )
        self._deliver(message, list(tools))

    def update_system(
        self,
        *,
        content: str = "",
        sections: dict[str, str | None] | None = None,
        tools_added: Sequence[Tool] | None = None,
        tools_removed: Sequence[ToolReference | str] | None = None,
    ) -> None:
        """Append a raw system delta (prompt text, named sections, tool declarations)."""
        removed = [ToolReference(name=r) if isinstance(r, str) else r for r in tools_removed or []]
        message = SystemMessage(
            content=content,
            sections=sections,
            tools_added=list(tools_added) if tools_added else None,
            tools_removed=removed or None,
            timestamp=now_ms(),
        )
        self._deliver(message, None)

    def _deliver(self, message: SystemMessage | None, tools: list[AgentTool] | None) -> None:
        if self.is_running:  # held for the next turn boundary: never between a tool call and its result
            if message is not None:
                self._held_system.append(message)
            if tools is not None:
                self._held_tools = tools
            return
        if message is None:
            return
        self._notify(MessageStartEvent(message=message), MessageEndEvent(message=message))

    def _take_system_update(self) -> SystemUpdate | None:
        if not self._held_system and self._held_tools is None:
            return None
        update = SystemUpdate(messages=self._held_system, tools=self._held_tools)
        self._held_system, self._held_tools = [], None
        return update

    def _notify(self, *events: AgentEvent) -> None:
        """Apply events now and run listeners in a task (sync callers cannot await them)."""
        for event in events:
            self._reduce(event)
        if not self._listeners:
            return

        async def deliver() -> None:
            for event in events:
                for listener in list(self._listeners):
                    try:
                        result = listener(event, None)
                        if inspect.isawaitable(result):
                            await result
                    except Exception:  # same policy as during runs
                        log.exception("agent listener failed on %s", event.type)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: run the listeners to completion right here
            asyncio.run(deliver())
            return
        self._notifications.append(loop.create_task(deliver()))


__all__ = ["BUSY_TEXT", "Agent", "AgentState", "Listener", "PromptInput", "declarations"]
