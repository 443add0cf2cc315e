"""The agent loop: prompts in, model turns and tool runs out, as events.

`run_agent_loop` / `run_agent_loop_continue` await an `emit` callback at every event (the `Agent`
class passes one that awaits its listeners). `agent_loop` / `agent_loop_continue` wrap them in an
`AgentEventStream` that never waits for its consumer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence

from apex_agent.event_stream import AgentEventStream
from apex_agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from apex_agent.messages import AgentMessage
from apex_agent.tool_execution import execute_tool_calls, maybe_await
from apex_agent.types import (
    AgentContext,
    AgentLoopConfig,
    AgentStopReason,
    BudgetLimit,
    BudgetReport,
    BudgetUsage,
    GetMessages,
    StopAfterTurnContext,
    StreamFn,
)
from apex_ai.abort import ABORTED_MESSAGE, AbortSignal
from apex_ai.credentials import apply_credentials
from apex_ai.options import SimpleStreamOptions
from apex_ai.types import AssistantMessage, Context, Model, StopReason, TextContent, Tool, ToolCall, Usage, now_ms

Emit = Callable[[AgentEvent], "Awaitable[None] | None"]

_OPTION_FIELDS = tuple(f.name for f in dataclasses.fields(SimpleStreamOptions))


def empty_assistant(
    model: Model, stop_reason: StopReason, error_message: str, *, text: bool = False
) -> AssistantMessage:
    """An assistant message the loop makes itself (closing aborted turn, run failure): zero usage."""
    return AssistantMessage(
        content=[TextContent(text="")] if text else [],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=now_ms(),
    )


def _default_stream_fn() -> StreamFn:
    # Imported on first use: the provider layer's dispatcher pulls in the API registry.
    from apex_ai.stream import stream_simple

    return stream_simple


class _Run:
    """State of one run: the working context, counters for the budget, and the messages it added."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: Emit,
        signal: AbortSignal | None,
        stream_fn: StreamFn | None,
    ) -> None:
        self.context = context
        self.config = config
        self.signal = signal
        self._emit = emit
        self._stream_fn = stream_fn or _default_stream_fn()
        self.model = config.model
        self.reasoning = config.reasoning
        self.new_messages: list[AgentMessage] = []
        self._declared: list[Tool] = []
        """The tool declarations of the current turn's request (taken as the turn starts)."""
        self.usage = config.budget_usage if config.budget_usage is not None else BudgetUsage()
        self._started = time.monotonic()
        self._base_duration_ms = self.usage.duration_ms

    # ----------------------------------------------------------------- plumbing used by tool execution

    async def emit(self, event: AgentEvent) -> None:
        result = self._emit(event)
        if result is not None:
            await result

    async def append(self, message: AgentMessage) -> None:
        """Add a whole message to the transcript and announce it (`message_start` + `message_end`)."""
        self.context.messages.append(message)
        self.new_messages.append(message)
        await self.emit(MessageStartEvent(message=message))
        await self.emit(MessageEndEvent(message=message))

    def count_tool_call(self) -> None:
        self.usage.tool_calls += 1

    def count_usage(self, usage: Usage | None) -> None:
        if usage is not None:
            self.usage.cost += usage.cost.total

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    # ----------------------------------------------------------------- the loop

    async def run(self, prompts: Sequence[AgentMessage] | None, *, poll_steering: bool = True) -> list[AgentMessage]:
        await self.emit(AgentStartEvent())
        await self._start_turn()
        for prompt in prompts or []:
            await self.append(prompt)
        pending = await self._poll(self.config.get_steering_messages) if poll_steering else []
        first_turn = True
        while True:
            more_tool_calls = True
            while more_tool_calls or pending:
                if not first_turn:
                    await self._start_turn()
                first_turn = False
                await self._apply_system_update()
                for message in pending:
                    await self.append(message)
                pending = []

                message = await self._request()
                if message.stop_reason in ("error", "aborted"):
                    await self.emit(TurnEndEvent(message=message, tool_results=[]))
                    return await self._end()
                calls = [block for block in message.content if isinstance(block, ToolCall)]
                results, terminates = await execute_tool_calls(self, message, calls)
                more_tool_calls = bool(calls) and not terminates
                await self.emit(TurnEndEvent(message=message, tool_results=results))

                turn = StopAfterTurnContext(message, results, self.context, self.new_messages)
                await self._prepare_next_turn(turn)
                stop_hook = self.config.should_stop_after_turn
                if stop_hook is not None and await maybe_await(stop_hook(turn)):
                    return await self._end()
                if self.aborted:
                    if more_tool_calls:
                        await self._closing_aborted_turn()
                    return await self._end()
                if await self._budget_exhausted(more_tool_calls or self._peek_queued()):
                    return self.new_messages
                pending = await self._poll(self.config.get_steering_messages)
            follow_ups = await self._poll(self.config.get_follow_up_messages)
            if not follow_ups:
                break
            pending = follow_ups
        return await self._end()

    async def _request(self) -> AssistantMessage:
        """One provider request; streams the assistant message into the transcript and returns it final."""
        config = self.config
        messages = self.context.messages
        if config.transform_context is not None:
            messages = await maybe_await(config.transform_context(messages, self.signal))
        llm = list(await maybe_await(config.convert_to_llm(messages)))
        request = Context(
            system_prompt=self.context.system_prompt or None,
            messages=llm,
            tools=self._declared or None,
        )
        options = SimpleStreamOptions(**{name: getattr(config, name) for name in _OPTION_FIELDS})
        options.signal = self.signal
        options.reasoning = self.reasoning
        if config.get_api_key is not None:
            options.api_key = await maybe_await(config.get_api_key(self.model.provider)) or config.api_key
        if options.credentials is not None:
            # Resolved here rather than in `stream()` so a stream function in between sees the key and headers.
            apply_credentials(self.model, options)
        stream = await maybe_await(self._stream_fn(self.model, request, options))

        started = False
        async for event in stream:
            if event.type == "start":
                started = True
                self.context.messages.append(event.partial)
                # The partial is live and the stream is buffered, so by now it may already hold blocks that
                # came after `start`; the message as it was at `start` has none.
                started_as = event.partial.model_copy(update={"content": []}, deep=True)
                await self.emit(MessageStartEvent(message=started_as))
            elif event.type == "done" or event.type == "error":
                final = await stream.result()
                if started:
                    self.context.messages[-1] = final
                else:  # failed before `start`: the message is announced and finished at once
                    self.context.messages.append(final)
                    await self.emit(MessageStartEvent(message=final))
                self.new_messages.append(final)
                self._count_request(final)
                await self.emit(MessageEndEvent(message=final))
                return final
            else:
                if started:
                    self.context.messages[-1] = event.partial
                await self.emit(MessageUpdateEvent(message=event.partial.model_copy(), assistant_message_event=event))
        raise RuntimeError("Assistant stream ended without a done or error event")

    def _count_request(self, message: AssistantMessage) -> None:
        self.usage.turns += 1
        self.usage.tokens += message.usage.total_tokens
        self.usage.cost += message.usage.cost.total

    async def _start_turn(self) -> None:
        """Take the tools of the turn (`get_turn_tools`), fix what its request declares, then `turn_start`."""
        getter = self.config.get_turn_tools
        tools = getter(self.context.tools) if getter is not None else None
        if tools is not None:
            self.context.tools = list(tools)
        # Declared now, with no await since the host was asked: a tool changed in place later waits for the next turn.
        self._declared = [tool.declaration() for tool in self.context.tools]
        await self.emit(TurnStartEvent())

    async def _apply_system_update(self) -> None:
        getter = self.config.get_system_update
        update = getter() if getter is not None else None
        if update is None:
            return
        if update.tools is not None:
            self.context.tools = list(update.tools)
            self._declared = [tool.declaration() for tool in self.context.tools]
        for message in update.messages:
            await self.append(message)

    async def _prepare_next_turn(self, turn: StopAfterTurnContext) -> None:
        hook = self.config.prepare_next_turn
        update = await maybe_await(hook(turn)) if hook is not None else None
        if update is None:
            return
        if update.context is not None:
            self.context = update.context
        if update.model is not None:
            self.model = update.model
        if update.thinking_level is not None:
            self.reasoning = None if update.thinking_level == "off" else update.thinking_level

    async def _poll(self, getter: GetMessages | None) -> list[AgentMessage]:
        return list(await maybe_await(getter())) if getter is not None else []

    def _peek_queued(self) -> bool:
        peek = self.config.has_queued_messages
        return peek() if peek is not None else False

    async def _closing_aborted_turn(self) -> None:
        """Abort landed after a tool batch that needs another request: close the run without sending it."""
        await self.emit(TurnStartEvent())
        message = empty_assistant(self.model, "aborted", ABORTED_MESSAGE)
        await self.append(message)
        await self.emit(TurnEndEvent(message=message, tool_results=[]))

    # ----------------------------------------------------------------- ending

    def _exhausted_limit(self) -> BudgetLimit | None:
        budget = self.config.run_budget
        if budget is None:
            return None
        self.usage.duration_ms = self._base_duration_ms + int((time.monotonic() - self._started) * 1000)
        checks: list[tuple[BudgetLimit, float | None, float]] = [
            ("maxTurns", budget.max_turns, self.usage.turns),
            ("maxToolCalls", budget.max_tool_calls, self.usage.tool_calls),
            ("maxTokens", budget.max_tokens, self.usage.tokens),
            ("maxCost", budget.max_cost, self.usage.cost),
            ("maxDurationMs", budget.max_duration_ms, self.usage.duration_ms),
        ]
        return next((name for name, limit, used in checks if limit is not None and used >= limit), None)

    async def _budget_exhausted(self, another_turn_needed: bool) -> bool:
        """End the run with `budget-exhausted` if another request is needed but a limit is reached."""
        if not another_turn_needed:
            return False
        limit = self._exhausted_limit()
        if limit is None:
            return False
        report = BudgetReport(limit=limit, usage=self.usage.model_copy())
        await self.emit(AgentEndEvent(messages=list(self.new_messages), stop_reason="budget-exhausted", budget=report))
        return True

    def stop_reason(self) -> AgentStopReason:
        last = next((m for m in reversed(self.new_messages) if isinstance(m, AssistantMessage)), None)
        if self.aborted or (last is not None and last.stop_reason == "aborted"):
            return "aborted"
        if last is not None and last.stop_reason == "error":
            return "error"
        return "completed"

    async def _end(self) -> list[AgentMessage]:
        await self.emit(AgentEndEvent(messages=list(self.new_messages), stop_reason=self.stop_reason()))
        return self.new_messages


def check_can_continue(messages: Sequence[AgentMessage]) -> None:
    """Raise ValueError unless a continue run may start from `messages` (non-empty, no assistant tail)."""
    if not messages:
        raise ValueError("Cannot continue: no messages in context")
    if messages[-1].role == "assistant":
        raise ValueError("Cannot continue from message role: assistant")


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run a prompt run, awaiting `emit` at every event; returns the new messages. `context` is mutated."""
    return await _Run(context, config, emit, signal, stream_fn).run(prompts)


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
    *,
    prompts: Sequence[AgentMessage] | None = None,
    poll_steering: bool = True,
) -> list[AgentMessage]:
    """Continue from the existing transcript (a continue run: no prompt messages unless `prompts` is given,
    which `Agent.continue_()` uses for drained steering with `poll_steering=False`)."""
    if prompts is None:
        check_can_continue(context.messages)
    return await _Run(context, config, emit, signal, stream_fn).run(prompts, poll_steering=poll_steering)


class RunTracker:
    """Wraps an `Emit` to know whether a turn is open and whether `agent_end` went out, so a run
    failure can close the run with balanced events (`turn_start` is added if no turn is open)."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self.turn_open = False
        self.ended = False

    def __call__(self, event: AgentEvent) -> Awaitable[None] | None:
        if event.type == "turn_start":
            self.turn_open = True
        elif event.type == "turn_end":
            self.turn_open = False
        elif event.type == "agent_end":
            self.ended = True
        return self._emit(event)

    async def fail(self, error: BaseException, model: Model, signal: AbortSignal | None) -> AssistantMessage | None:
        """Emit the closing events of a run that raised; None if the run had already ended.

        Whether it counts as aborted is read after the opening `turn_start` went out: a listener may abort
        right then, and the stop reason must follow the signal as it is when the run ends.
        """
        if self.ended:
            return None
        if not self.turn_open:
            opened = self(TurnStartEvent())
            if opened is not None:
                await opened
        aborted = signal is not None and signal.aborted
        message = empty_assistant(model, "aborted" if aborted else "error", str(error), text=True)
        for event in (
            MessageStartEvent(message=message),
            MessageEndEvent(message=message),
            TurnEndEvent(message=message, tool_results=[]),
        ):
            result = self(event)
            if result is not None:
                await result
        # The stop reason follows the signal as it is at the very end, even if a listener
        # aborted while the failure message was going out.
        late_abort = aborted or (signal is not None and signal.aborted)
        ended = self(AgentEndEvent(messages=[message], stop_reason="aborted" if late_abort else "error"))
        if ended is not None:
            await ended
        return message


def _start_stream(
    body: Callable[[Emit], Awaitable[list[AgentMessage]]], config: AgentLoopConfig, signal: AbortSignal | None
) -> AgentEventStream:
    stream = AgentEventStream()
    tracker = RunTracker(stream.push)

    async def drive() -> None:
        try:
            messages = await body(tracker)
        except asyncio.CancelledError:
            stream.end()
            raise
        except Exception as exc:  # a failing hook or stream_fn: report it as events, never raise to the consumer
            message = await tracker.fail(exc, config.model, signal)
            stream.end([message] if message is not None else [])
            return
        stream.end(messages)

    stream.attach_task(asyncio.get_running_loop().create_task(drive()))
    return stream


def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start a prompt run in a task; returns its event stream (`result()` = new messages). Call inside a loop."""
    return _start_stream(lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn), config, signal)


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start a continue run; raises ValueError at once if the transcript is empty or ends with an assistant."""
    check_can_continue(context.messages)
    return _start_stream(lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn), config, signal)


__all__ = [
    "Emit",
    "agent_loop",
    "agent_loop_continue",
    "check_can_continue",
    "RunTracker",
    "run_agent_loop",
    "run_agent_loop_continue",
]
