"""Print mode (`-p`, text) and JSON mode (`--mode json`).

Both send the initial prompt and then each further message, waiting for each run to settle. The
status of a run is the stop reason of its last `agent_end` that does not announce a retry; the
first status other than `completed` stops the sequence and decides the exit code (0 only for
`completed`). JSON mode writes the session header, every session event, then the seed's result
envelope `{"type":"result","status":...}`; text mode prints only the final assistant text, and on
stderr a line per automatic retry (`Retrying (1/3) in 2s: <error>`) so a wait is never silent.

Ctrl+C (SIGINT) aborts the run: it ends as `aborted` (JSON mode still writes its envelope) and the exit code is
130; a second Ctrl+C leaves at once. A reader that goes away (`apex-code --mode json | head -1`) aborts the run too:
nothing more can be delivered, so it stops quietly with 141, the exit code of a process ended by SIGPIPE. Any other
failure to write stdout (a full disk) stops it the same way, with one line on stderr and exit 1.

Extensions run without a UI (`NoUi`, `ctx.mode` `print`/`json`, `has_ui` False); `session_start` is emitted
before the first prompt, and each extension error goes to stderr as `Extension error (<path>): <error>`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Sequence
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
EXIT_INTERRUPTED = 130
"""Exit code after Ctrl+C: 128 + SIGINT, as shells report a process ended by it."""
EXIT_BROKEN_PIPE = 141
"""Exit code when the reader of stdout went away: 128 + SIGPIPE, what `yes | head -1` reports for `yes`."""


def json_line(data: Any) -> str:
    """One JSONL record as the original writes it: compact separators, non-ASCII left as is (lone surrogates
    escaped, so the line can always be written)."""
    return json_text(data) + "\n"


class _LineWriter:
    """Writes whole lines and flushes each, so a reader never sees half a record.

    Once a write fails (the reader is gone, the disk is full) every later write is dropped and `on_broken` runs
    once with the error."""

    def __init__(self, stream: TextIO, on_broken: Callable[[OSError], None] = lambda _: None) -> None:
        self.stream = stream
        self.on_broken = on_broken
        self.broken = False

    def write(self, data: Any) -> None:
        if self.broken:
            return
        try:
            self.stream.write(json_line(data))
            self.stream.flush()
        except OSError as exc:
            self.broken = True
            self.on_broken(exc)


def _output_failure(exc: OSError, err: TextIO) -> Literal["pipe", "output"]:
    """Classify a failed write to stdout; any failure but a vanished reader is said on stderr."""
    if isinstance(exc, BrokenPipeError):
        return "pipe"
    try:
        err.write(f"Error: could not write to standard output: {exc.strerror or exc}\n")
        err.flush()
    except (OSError, ValueError):
        pass
    return "output"


def _leave_now() -> None:
    """The second Ctrl+C: kill the commands the run started and leave without waiting for anything."""
    from apex_coding_agent.tools.shell import kill_tracked_process_groups

    kill_tracked_process_groups()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(EXIT_INTERRUPTED)


def _on_sigint(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> Callable[[], None]:
    """Route SIGINT to `handler` on `loop` (main thread only); returns the undo."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, handler)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals on this platform
        return lambda: None

    def undo() -> None:
        loop.remove_signal_handler(signal.SIGINT)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)

    return undo


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
    session = runtime.session
    last_end: SessionAgentEndEvent | None = None
    stopped: Literal["interrupt", "pipe", "output"] | None = None
    aborting: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()

    def stop(why: Literal["interrupt", "pipe", "output"]) -> None:
        nonlocal stopped
        if why == "interrupt" and stopped == "interrupt":
            _leave_now()
        stopped = stopped or why
        task = loop.create_task(session.abort())
        aborting.add(task)
        task.add_done_callback(aborting.discard)

    def output_failed(exc: OSError) -> None:
        stop(_output_failure(exc, err))

    writer = _LineWriter(out, output_failed)
    restore_sigint = _on_sigint(loop, lambda: stop("interrupt"))

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
    pending = session.checkpoints.pending_restore_warning()
    if pending is not None:
        err.write(pending + "\n")
        err.flush()
    await runtime.start_extensions()
    unsubscribe = session.subscribe(on_event)
    prompts: list[tuple[str, Sequence[ImageContent]]] = []
    if initial_message or initial_images:
        prompts.append((initial_message or "", initial_images))
    prompts.extend((text, ()) for text in messages)

    status: AgentStopReason = "completed"
    try:
        for text, images in prompts:
            if stopped is not None:
                break
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
        if aborting:
            await asyncio.gather(*aborting)
    if stopped is not None:
        status = "aborted"  # whatever the run had reached, it did not finish as asked

    try:
        if mode == "json":
            writer.write({"type": "result", "status": status})
        else:
            _print_text_result(session.messages, status, last_end, out, err)
    except OSError as exc:
        stopped = stopped or _output_failure(exc, err)  # the run is over: nothing left to abort
    finally:
        restore_sigint()
    if stopped == "interrupt":
        return EXIT_INTERRUPTED
    if stopped == "pipe":
        return EXIT_BROKEN_PIPE
    if stopped == "output":
        return 1
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


__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "PrintOutput", "json_line", "retry_line", "run_print_mode"]
