"""Print mode (`-p`, text) and JSON mode (`--mode json`), spec modes.md §4-6.

Both send the initial prompt and then each further message, waiting for each run to settle. The
status of a run is the stop reason of its last `agent_end` that does not announce a retry; the
first status other than `completed` stops the sequence and decides the exit code (0 only for
`completed`). JSON mode writes the session header, every session event, then the seed's result
envelope `{"type":"result","status":...}`; text mode prints only the final assistant text, and on
stderr a line per automatic retry (`Retrying (1/3) in 2s: <error>`) so a wait is never silent.

Extensions run without a UI (`NoUi`, `ctx.mode` `print`/`json`, `has_ui` False); `session_start` is emitted
before the first prompt, and each extension error goes to stderr as `Extension error (<path>): <error>`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Literal, TextIO

from apex_agent.types import AgentStopReason
from apex_ai._wire import json_text
from apex_ai.types import AssistantMessage, ImageContent, TextContent
from apex_coding_agent.extensions.bindings import NoUi
from apex_coding_agent.extensions.events import ExtensionErrorEvent
from apex_coding_agent.runtime import (
    AgentSessionRuntime,
    AutoRetryStartEvent,
    SessionAgentEndEvent,
    SessionEvent,
    SessionWriteErrorEvent,
    to_json_event,
)

PrintOutput = Literal["text", "json"]


def json_line(data: Any) -> str:
    """One JSONL record as the original writes it: compact separators, non-ASCII left as is (lone surrogates
    escaped, so the line can always be written)."""
    return json_text(data) + "\n"


class _LineWriter:
    """Writes whole lines and flushes each, so a reader never sees half a record."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, data: Any) -> None:
        self.stream.write(json_line(data))
        self.stream.flush()


async def run_print_mode(
    runtime: AgentSessionRuntime,
    mode: PrintOutput = "text",
    initial_message: str | None = None,
    initial_images: Sequence[ImageContent] = (),
    messages: Sequence[str] = (),
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the prompts and return the process exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    writer = _LineWriter(out)
    session = runtime.session
    last_end: SessionAgentEndEvent | None = None

    def on_event(event: SessionEvent) -> None:
        nonlocal last_end
        if isinstance(event, SessionAgentEndEvent) and not event.will_retry:
            last_end = event
        elif isinstance(event, SessionWriteErrorEvent):  # the run stops as `error`; say why in both modes
            err.write(f"Error: {event.error}\n")
            err.flush()
        if mode == "json":
            writer.write(to_json_event(event))
        elif isinstance(event, AutoRetryStartEvent):
            err.write(retry_line(event))
            err.flush()

    def on_extension_error(error: ExtensionErrorEvent) -> None:
        err.write(f"Extension error ({error.extension_path}): {error.error}\n")
        err.flush()

    runner = runtime.extension_runner
    stop_errors = None
    if runner is not None:
        runner.set_ui(NoUi(), "json" if mode == "json" else "print")
        stop_errors = runner.on_error(on_extension_error)
    if mode == "json":
        writer.write(session.session_manager.get_header().to_wire())
    await runtime.start_extensions()
    unsubscribe = session.subscribe(on_event)
    prompts: list[tuple[str, Sequence[ImageContent]]] = []
    if initial_message or initial_images:
        prompts.append((initial_message or "", initial_images))
    prompts.extend((text, ()) for text in messages)

    status: AgentStopReason = "completed"
    try:
        for text, images in prompts:
            last_end = None
            reason = await session.prompt(text, list(images) or None, source="interactive")
            status = reason or (last_end.stop_reason if last_end is not None else "completed")
            if status != "completed":
                break
    except Exception as exc:  # a failure of the run itself: reported, never a traceback
        status = "error"
        err.write(f"{exc}\n")
        err.flush()
    finally:
        unsubscribe()
        await session.wait_for_idle()
        await runtime.shutdown_extensions()
        if stop_errors is not None:
            stop_errors()

    if mode == "json":
        writer.write({"type": "result", "status": status})
    else:
        _print_text_result(session.messages, status, last_end, out, err)
    return 0 if status == "completed" else 1


def retry_line(event: AutoRetryStartEvent) -> str:
    """`Retrying (1/3) in 2s: <error>`: which attempt, how long the wait, and why."""
    return f"Retrying ({event.attempt}/{event.max_attempts}) in {event.delay_ms / 1000:g}s: {event.error_message}\n"


def _print_text_result(
    messages: Sequence[Any],
    status: AgentStopReason,
    last_end: SessionAgentEndEvent | None,
    out: TextIO,
    err: TextIO,
) -> None:
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "aborted"):
        err.write(f"{last.error_message or f'Request {last.stop_reason}'}\n")
        err.flush()
        return
    if status == "budget-exhausted" and last_end is not None and last_end.budget is not None:
        err.write(f"Run budget exhausted: {last_end.budget.limit}\n")
        err.flush()
    if isinstance(last, AssistantMessage):
        for block in last.content:
            if isinstance(block, TextContent):
                out.write(block.text + "\n")
        out.flush()


__all__ = ["PrintOutput", "json_line", "retry_line", "run_print_mode"]
