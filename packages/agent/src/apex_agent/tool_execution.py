"""Running the tool calls of one assistant message.

Each call is prepared (lookup, argument shim, validation, `before_tool_call`), executed, finalized
(`after_tool_call`) and turned into a `toolResult` message. A batch runs sequentially if the config
or any called tool asks for it, else concurrently: `tool_execution_end` then follows completion
order while result messages keep the assistant's source order.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from apex_agent.events import (
    AgentEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from apex_agent.messages import AgentMessage
from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError
from apex_agent.types import (
    AfterToolCallContext,
    AgentContext,
    AgentLoopConfig,
    BeforeToolCallContext,
)
from apex_ai.abort import AbortSignal
from apex_ai.transcript import current_tools
from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, now_ms
from apex_ai.validation import validate_tool_arguments

T = TypeVar("T")

LENGTH_STOP_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)


async def maybe_await(value: T | Awaitable[T]) -> T:
    """Await `value` if a hook returned an awaitable, else return it (hooks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


class ToolRunner(Protocol):
    """What tool execution needs from the running loop."""

    context: AgentContext
    config: AgentLoopConfig
    signal: AbortSignal | None

    async def emit(self, event: AgentEvent) -> None: ...

    async def append(self, message: AgentMessage) -> None: ...

    def count_tool_call(self) -> None: ...

    def count_usage(self, usage: Usage | None) -> None: ...


@dataclass
class _Outcome:
    call: ToolCall
    result: AgentToolResult
    is_error: bool


@dataclass
class _Prepared:
    call: ToolCall
    tool: AgentTool
    args: dict[str, Any]


def error_result(text: str, details: Any = None, *, terminate: bool = False) -> AgentToolResult:
    return AgentToolResult(
        content=[TextContent(text=text)], details={} if details is None else details, terminate=terminate
    )


def _find_tool(context: AgentContext, name: str) -> AgentTool | None:
    """An executable tool that is also declared (when the transcript's system messages declare tools)."""
    tool = next((t for t in context.tools if t.name == name), None)
    if tool is None:
        return None
    declares = any(
        m.role == "system" and (getattr(m, "tools_added", None) is not None or getattr(m, "tools_removed", None))
        for m in context.messages
    )
    if declares and all(t.name != name for t in current_tools(context.messages)):
        return None
    return tool


async def execute_tool_calls(
    run: ToolRunner, assistant: AssistantMessage, calls: Sequence[ToolCall]
) -> tuple[list[ToolResultMessage], bool]:
    """Run `calls` and append their result messages; returns them (source order) and whether the batch terminates."""
    if assistant.stop_reason == "length":
        outcomes = [await _refuse_truncated(run, call) for call in calls]
        return [await _result_message(run, o) for o in outcomes], False
    sequential = run.config.tool_execution == "sequential" or any(
        (tool := _find_tool(run.context, call.name)) is not None and tool.execution_mode == "sequential"
        for call in calls
    )
    if sequential:
        results, outcomes = await _run_sequential(run, assistant, calls)
    else:
        outcomes = await _run_parallel(run, assistant, calls)
        results = [await _result_message(run, o) for o in outcomes]
    terminate = bool(outcomes) and all(o.result.terminate for o in outcomes)
    return results, terminate


async def _refuse_truncated(run: ToolRunner, call: ToolCall) -> _Outcome:
    await _start(run, call)
    outcome = _Outcome(call, error_result(LENGTH_STOP_TEXT.format(name=call.name)), True)
    await _end(run, outcome)
    return outcome


async def _run_sequential(
    run: ToolRunner, assistant: AssistantMessage, calls: Sequence[ToolCall]
) -> tuple[list[ToolResultMessage], list[_Outcome]]:
    results: list[ToolResultMessage] = []
    outcomes: list[_Outcome] = []
    for call in calls:
        prepared = await _prepare(run, assistant, call)
        if isinstance(prepared, _Outcome):
            outcome = prepared
        else:
            outcome = await _finalize(run, assistant, prepared, *await _execute(run, prepared))
        await _end(run, outcome)
        outcomes.append(outcome)
        results.append(await _result_message(run, outcome))
        if run.signal is not None and run.signal.aborted:
            break  # the remaining calls get no result; the next request's transform fills them in
    return results, outcomes


async def _run_parallel(run: ToolRunner, assistant: AssistantMessage, calls: Sequence[ToolCall]) -> list[_Outcome]:
    slots: list[_Outcome | None] = [None] * len(calls)
    runnable: list[tuple[int, _Prepared]] = []
    for index, call in enumerate(calls):
        prepared = await _prepare(run, assistant, call)
        if isinstance(prepared, _Outcome):
            await _end(run, prepared)
            slots[index] = prepared
        else:
            runnable.append((index, prepared))

    async def run_one(index: int, prepared: _Prepared) -> None:
        outcome = await _finalize(run, assistant, prepared, *await _execute(run, prepared))
        await _end(run, outcome)  # completion order
        slots[index] = outcome

    await asyncio.gather(*(run_one(index, prepared) for index, prepared in runnable))
    return [slot for slot in slots if slot is not None]


async def _start(run: ToolRunner, call: ToolCall) -> None:
    run.count_tool_call()
    await run.emit(ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments))


async def _prepare(run: ToolRunner, assistant: AssistantMessage, call: ToolCall) -> _Prepared | _Outcome:
    await _start(run, call)
    tool = _find_tool(run.context, call.name)
    if tool is None:
        return _Outcome(call, error_result(f"Tool {call.name} not found"), True)
    try:
        shimmed = call.model_copy(update={"arguments": tool.prepare_arguments(dict(call.arguments))})
        args = validate_tool_arguments(tool, shimmed)
        hook = run.config.before_tool_call
        decision = None
        if hook is not None:
            decision = await maybe_await(hook(BeforeToolCallContext(assistant, call, args, run.context), run.signal))
        if run.signal is not None and run.signal.aborted:
            return _Outcome(call, error_result("Operation aborted"), True)
        if decision is not None and decision.block:
            text = decision.reason or "Tool execution was blocked"
            return _Outcome(call, error_result(text, terminate=decision.terminate), True)
    except Exception as exc:  # a failing shim, validation or hook fails this call only
        return _Outcome(call, error_result(str(exc)), True)
    return _Prepared(call, tool, args)


async def _execute(run: ToolRunner, prepared: _Prepared) -> tuple[AgentToolResult, bool]:
    call = prepared.call
    pending: list[asyncio.Future[None]] = []
    settled = False

    def on_update(partial: AgentToolResult) -> Awaitable[None] | None:
        if settled:
            return None
        event = ToolExecutionUpdateEvent(
            tool_call_id=call.id, tool_name=call.name, args=call.arguments, partial_result=partial
        )
        # A task, not a bare coroutine: tools may call this without awaiting it.
        task = asyncio.ensure_future(run.emit(event))
        pending.append(task)
        return task

    try:
        result = await prepared.tool.execute(call.id, prepared.args, run.signal, on_update)
        is_error = False
    except ToolExecutionError as exc:
        result, is_error = error_result(str(exc), exc.details), True
    except Exception as exc:  # tools raise to fail; the model sees the message, the loop goes on
        result, is_error = error_result(str(exc)), True
    finally:
        settled = True
        if pending:
            await _settle_updates(pending)
    return result, is_error


async def _settle_updates(pending: list[asyncio.Future[None]]) -> None:
    """Wait for the call's update emissions; one that was cancelled is dropped, never the call's result.

    A tool may await an update from a helper task it cancels when it finishes (e.g. a progress pump);
    that cancellation reaches our emission task, yet the tool itself finished. Only our own cancellation
    propagates (taking the still-pending emissions with it); an emission's real error still surfaces.
    """
    try:
        await asyncio.wait(pending)
    except asyncio.CancelledError:
        for task in pending:
            task.cancel()
        raise
    for task in pending:
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error


async def _finalize(
    run: ToolRunner, assistant: AssistantMessage, prepared: _Prepared, result: AgentToolResult, is_error: bool
) -> _Outcome:
    hook = run.config.after_tool_call
    if hook is None:
        return _Outcome(prepared.call, result, is_error)
    try:
        ctx = AfterToolCallContext(assistant, prepared.call, prepared.args, result, is_error, run.context)
        override = await maybe_await(hook(ctx, run.signal))
    except Exception as exc:  # a failing hook turns the call into an error, never the run
        return _Outcome(prepared.call, error_result(str(exc)), True)
    if override is None:
        return _Outcome(prepared.call, result, is_error)
    merged = AgentToolResult(
        content=result.content if override.content is None else override.content,
        details=result.details if override.details is None else override.details,
        usage=result.usage if override.usage is None else override.usage,
        terminate=result.terminate if override.terminate is None else override.terminate,
    )
    return _Outcome(prepared.call, merged, is_error if override.is_error is None else override.is_error)


async def _end(run: ToolRunner, outcome: _Outcome) -> None:
    call = outcome.call
    await run.emit(
        ToolExecutionEndEvent(
            tool_call_id=call.id, tool_name=call.name, result=outcome.result, is_error=outcome.is_error
        )
    )


async def _result_message(run: ToolRunner, outcome: _Outcome) -> ToolResultMessage:
    result = outcome.result
    message = ToolResultMessage(
        tool_call_id=outcome.call.id,
        tool_name=outcome.call.name,
        content=list(result.content or []),
        details=result.details,
        usage=result.usage,
        is_error=outcome.is_error,
        timestamp=now_ms(),
    )
    run.count_usage(result.usage)
    await run.append(message)
    return message


__all__ = ["LENGTH_STOP_TEXT", "ToolRunner", "error_result", "execute_tool_calls", "maybe_await"]
