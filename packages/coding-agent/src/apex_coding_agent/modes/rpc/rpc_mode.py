"""RPC mode: commands in on stdin, responses and session events out on stdout.

Every command runs in its own task as soon as its line is read, so a streaming `prompt`, a running
`bash` or a dialog waiting for an `extension_ui_response` never stops the next line from being read
(`abort`, `steer`, `abort_bash` work mid-run). Quick commands finish within their first step and
tasks start in arrival order, so their responses keep the order of the requests (`get_tree` of a
session with thousands of entries yields while it encodes, so later commands may be answered before it).

Extensions (when the runtime has a runner): `ctx.ui` is this server's `RpcUi`, handler failures are written
as `extension_error` records, `session_start` is emitted before the first line is read, and `ctx.shutdown()`
is `request_shutdown`.

Shutdown: stdin EOF aborts the agent run, user shell commands and open dialogs, lets in-flight
commands answer, disposes the runtime (extensions get `session_shutdown`), gives the client up to
`OUTPUT_STALL_SECONDS` without progress to read what is still queued, and returns 0. SIGTERM/SIGHUP kill tracked
child process groups, dispose the runtime and return 143/129 without waiting for commands.

Floods: output goes through `JsonlWriter`'s queue, and commands read their output only while that queue is short
(`paced_output`), so a `yes` through `bash` streams at the client's pace and a control command waits behind at most
about `OUTPUT_HIGH_WATER` bytes. Input lines longer than `MAX_LINE_BYTES` are refused with a parse error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from apex_coding_agent.modes.rpc.jsonl import MAX_LINE_BYTES, JsonlWriter, OversizedLine, read_records
from apex_coding_agent.modes.rpc.rpc_commands import HANDLERS, CommandContext, RawJson
from apex_coding_agent.modes.rpc.rpc_types import (
    NO_DATA,
    PARSE_COMMAND,
    ParsedCommand,
    ParseOutcome,
    PromptCommand,
    Rejected,
    RpcCommandBase,
    UiReply,
    error_response,
    parse_line,
    success_response,
)
from apex_coding_agent.modes.rpc.rpc_ui import RpcUi
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, SessionEvent, to_json_event
from apex_coding_agent.tools.shell import kill_tracked_process_groups, paced_output

log = logging.getLogger(__name__)

EXIT_SIGTERM = 143
EXIT_SIGHUP = 129
SIGNAL_GRACE_SECONDS = 2.0
"""After a signal, how long aborted commands get to finish (reap their killed processes) before cancellation."""


class RpcServer:
    """One RPC conversation over a runtime; `serve()` runs it until EOF or a signal."""

    def __init__(
        self,
        runtime: AgentSessionRuntime,
        writer: JsonlWriter,
        *,
        resource_loader: ResourceLoader | None = None,
        extension_commands: Callable[[], list[dict[str, Any]]] | None = None,  # Any: JSON values
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.runtime = runtime
        self.writer = writer
        self.ui = RpcUi(writer.write)
        """The extension UI of this mode: bind it as `ctx.ui` (with `has_ui=True`, `mode="rpc"`)."""
        self._context = CommandContext(runtime, resource_loader)
        runner = runtime.extension_runner
        if extension_commands is not None:
            self._context.extension_commands = extension_commands
        elif runner is not None:
            self._context.extension_commands = runner.get_command_infos
        if runner is not None:
            # Extensions talk to this client: dialogs over the UI sub-protocol, failures as extension_error.
            runner.set_ui(self.ui, "rpc")
            runner.on_error(lambda error: self.extension_error(error.extension_path, error.event, error.error))
            runtime.shutdown_handler = self.request_shutdown
        self._bound: AgentSession | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._commands: set[asyncio.Task[None]] = set()
        """Running command tasks, prompts included until their run settled."""
        self._stopped: asyncio.Future[int] | None = None
        self._shutdown_requested = False
        self._max_line = max_line

    # ----------------------------------------------------------------- output

    def _on_event(self, event: SessionEvent) -> None:
        # Synchronous on purpose: the session calls sync listeners inline, so an event emitted while a
        # command runs (session_info_changed for set_session_name) is written before its response.
        self.writer.write(to_json_event(event))
        if event.type == "agent_settled" and self._shutdown_requested:
            self._maybe_finish_shutdown()

    def bind_session(self) -> None:
        """Follow `runtime.session` (it is a new object after new/switch/fork/clone)."""
        session = self.runtime.session
        if session is self._bound:
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._bound = session
        self._unsubscribe = session.subscribe(self._on_event)
        if session.checkpoints.pending_restore:
            # A restore of this session was cut short: the client decides (`recover_restore`) before rewinding.
            self.writer.write(
                {"type": "restore_pending", "sessionId": session.session_id, "command": "recover_restore"}
            )

    def _respond(self, command: RpcCommandBase, data: Any = NO_DATA) -> None:  # Any: JSON-ready data
        if isinstance(data, RawJson):
            head = json.dumps(success_response(command.type, command.id), ensure_ascii=False, separators=(",", ":"))
            self.writer.write_raw(head[:-1] + ',"data":' + data + "}")
        else:
            self.writer.write(success_response(command.type, command.id, data))

    def _fail(self, command: RpcCommandBase, exc: BaseException) -> None:
        self.writer.write(error_response(command.type, str(exc) or type(exc).__name__, command.id))

    def extension_error(self, extension_path: str, event: str, error: str) -> None:
        """Report an extension handler's failure as the `extension_error` record of the spec."""
        self.writer.write({"type": "extension_error", "extensionPath": extension_path, "event": event, "error": error})

    # ----------------------------------------------------------------- input

    def handle_line(self, line: str | OversizedLine) -> None:
        """Act on one input record: answer it at once, resolve a dialog, or start its command task."""
        if isinstance(line, OversizedLine):
            detail = f"line of {line.size} bytes exceeds the limit of {self._max_line} bytes"
            outcome: ParseOutcome = Rejected(error_response(PARSE_COMMAND, f"Failed to parse command: {detail}"))
        else:
            outcome = parse_line(line)
        if isinstance(outcome, Rejected):
            # Scheduled, not written now: command tasks started by earlier lines of the same read take their
            # first step before this callback, so answers keep the order of the requests.
            asyncio.get_running_loop().call_soon(self.writer.write, outcome.response)
        elif isinstance(outcome, UiReply):
            self.ui.handle_response(outcome.reply)
        elif isinstance(outcome, ParsedCommand):
            task = asyncio.get_running_loop().create_task(self._run_command(outcome.command))
            self._commands.add(task)
            task.add_done_callback(self._command_done)

    def _command_done(self, task: asyncio.Task[None]) -> None:
        self._commands.discard(task)
        if self._shutdown_requested:
            self._maybe_finish_shutdown()

    async def _run_command(self, command: RpcCommandBase) -> None:
        self.bind_session()
        try:
            if isinstance(command, PromptCommand):
                await self._prompt(command)
                return
            data = await HANDLERS[command.type](self._context, command)
        except Exception as exc:  # any failure of a command is its failure response
            self._fail(command, exc)
            return
        finally:
            self.bind_session()
        self._respond(command, data)

    async def _prompt(self, command: PromptCommand) -> None:
        """Answer once the session accepted (or queued) the prompt; this task then lives until the run settled.

        The session is called within this task's first step, and it accepts synchronously (right before
        the run starts, so before agent_start), so a prompt's response keeps its place among the
        responses to the lines read with it.
        """
        answered = False

        def preflight(ok: bool) -> None:
            nonlocal answered
            if ok and not answered:
                answered = True
                self._respond(command)

        try:
            await self._context.session.prompt(
                command.message,
                command.images,
                streaming_behavior=command.streaming_behavior,
                source="rpc",
                preflight_result=preflight,
            )
        except Exception:
            if not answered:
                raise  # a preflight failure: the failure response
            # After acceptance a failure is reported by the run's events; keep a trace for debugging.
            log.debug("prompt run ended with an exception", exc_info=True)
            return
        if not answered:  # handled without starting a run (e.g. an extension command)
            self._respond(command)

    # ----------------------------------------------------------------- lifecycle

    def request_shutdown(self) -> None:
        """An extension's `ctx.shutdown()`: deferred until running commands finished and the run settled."""
        self._shutdown_requested = True
        self._maybe_finish_shutdown()

    def _maybe_finish_shutdown(self) -> None:
        if self._commands or self.runtime.session.is_streaming:
            return
        self._stop(0)

    def _stop(self, code: int) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(code)

    async def serve(self, stream: BinaryIO, *, handle_signals: bool = True) -> int:
        """Read commands from `stream` until EOF, a signal or a requested shutdown; returns the exit code."""
        with paced_output(self.writer):
            # Commands started from here on (and the tasks they start) read their output at the client's pace.
            return await self._serve(stream, handle_signals)

    async def _serve(self, stream: BinaryIO, handle_signals: bool) -> int:
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        self.bind_session()
        await self.runtime.start_extensions()
        installed = self._install_signals(loop) if handle_signals else []
        reader = loop.create_task(self._read(stream))
        try:
            # Any: the reader task and the stop future have different result types; only completion matters.
            either: set[asyncio.Future[Any]] = {reader, self._stopped}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            code = self._stopped.result() if self._stopped.done() else 0
            if code in (EXIT_SIGTERM, EXIT_SIGHUP):
                # Nothing more goes out after a signal; children die first, then the work winds down quietly.
                self.writer.close()
                kill_tracked_process_groups()
                await self._cancel_all()
            else:
                await self._wind_down()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await self.runtime.dispose()
            # Bounded: a client that reads nothing gets OUTPUT_STALL_SECONDS, then the rest is dropped.
            await self.writer.flush()
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
            if self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None
        return code

    async def _read(self, stream: BinaryIO) -> None:
        async for line in read_records(stream, self._max_line):
            self.handle_line(line)

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> list[int]:
        installed: list[int] = []
        for signum, code in ((signal.SIGTERM, EXIT_SIGTERM), (getattr(signal, "SIGHUP", None), EXIT_SIGHUP)):
            if signum is None:  # Windows has no SIGHUP
                continue
            try:
                loop.add_signal_handler(signum, self._stop, code)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no support
                continue
            installed.append(signum)
        return installed

    async def _wind_down(self) -> None:
        """EOF: stop the work nobody will read about, then let pending commands give their answers."""
        self.ui.cancel_all()
        session = self.runtime.session
        session.abort_bash()
        if session.is_streaming:
            await session.abort()
        if self._commands:
            await asyncio.wait(set(self._commands))

    async def _cancel_all(self) -> None:
        """Signal: abort what runs, give it a moment to reap its processes, cancel whatever is left."""
        self.ui.cancel_all()
        session = self.runtime.session
        session.abort_bash()
        session.abort_retry()
        session.agent.abort()
        pending = list(self._commands)
        if not pending:
            return
        _, stuck = await asyncio.wait(pending, timeout=SIGNAL_GRACE_SECONDS)
        for task in stuck:
            task.cancel()
        if stuck:
            await asyncio.wait(stuck)


async def run_rpc_mode(
    runtime: AgentSessionRuntime,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    resource_loader: ResourceLoader | None = None,
    handle_signals: bool = True,
) -> int:
    """Run RPC mode over `runtime` until stdin ends (0) or SIGTERM (143) / SIGHUP (129); returns the exit code.

    `stdin`/`stdout` default to the process's binary standard streams. The runtime is disposed before
    returning.
    """
    writer = JsonlWriter(stdout if stdout is not None else sys.stdout.buffer)
    server = RpcServer(runtime, writer, resource_loader=resource_loader)
    return await server.serve(stdin if stdin is not None else sys.stdin.buffer, handle_signals=handle_signals)


__all__ = ["EXIT_SIGHUP", "EXIT_SIGTERM", "RpcServer", "run_rpc_mode"]
