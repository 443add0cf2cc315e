"""`UserBash`: an `AgentSession`'s user shell commands (`!cmd`, `!!cmd`, RPC `bash`).

A command streams `bash_execution_update` events and is recorded as a `bashExecution` message: at once when the
session is idle, at the next prompt while a run is in progress. An extension's `user_bash` handler may answer
the command itself or run it elsewhere (its `operations`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from apex_agent.messages import AgentMessage
from apex_ai.abort import AbortController
from apex_ai.types import now_ms
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.events import BashExecutionUpdateEvent, SessionEvent
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.messages import BashExecutionMessage

# Imported by the methods that run a command: a run without user shell commands never loads the executor.
if TYPE_CHECKING:
    from apex_coding_agent.runtime.bash_executor import BashResult


def _bash_result(data: dict[str, Any]) -> BashResult:  # Any: an extension's BashResult JSON
    """A `user_bash` handler's `{result}` (camelCase or snake_case keys) as a `BashResult`."""
    from apex_coding_agent.runtime.bash_executor import BashResult  # only user shell commands need it

    def pick(*keys: str) -> Any:  # Any: JSON values
        return next((data[k] for k in keys if k in data), None)

    exit_code = pick("exitCode", "exit_code")
    full = pick("fullOutputPath", "full_output_path")
    return BashResult(
        output=str(pick("output") or ""),
        exit_code=int(exit_code) if isinstance(exit_code, int) else None,
        cancelled=bool(pick("cancelled")),
        truncated=bool(pick("truncated")),
        full_output_path=str(full) if full else None,
    )


class UserBash:
    """The user commands of one session; `record(message)` adds a message to the transcript and the file."""

    def __init__(
        self,
        *,
        cwd: str,
        agent_dir: str,
        settings_manager: SettingsManager,
        extension_runner: ExtensionRunner | None,
        emit_soon: Callable[[SessionEvent], None],
        is_streaming: Callable[[], bool],
        record: Callable[[AgentMessage], None],
    ) -> None:
        self._cwd = cwd
        self._agent_dir = agent_dir
        self._settings = settings_manager
        self._runner = extension_runner
        self._emit_soon = emit_soon
        self._is_streaming = is_streaming
        self._record = record
        self._controller: AbortController | None = None
        self._pending: list[BashExecutionMessage] = []

    @property
    def is_running(self) -> bool:
        return self._controller is not None

    def abort(self) -> None:
        if self._controller is not None:
            self._controller.abort()

    async def execute(
        self, command: str, exclude_from_context: bool, id: str | None, on_chunk: Callable[[str], None] | None
    ) -> BashResult:
        from apex_coding_agent.runtime.bash_executor import execute_user_bash

        runner = self._runner
        operations = None
        if runner is not None and runner.has_handlers("user_bash"):
            handled = await runner.emit_user_bash(
                ext.UserBashEvent(command=command, exclude_from_context=exclude_from_context, cwd=self._cwd)
            )
            if handled is not None and handled.result is not None:
                return self._record_bash(command, _bash_result(handled.result), exclude_from_context)
            if handled is not None:
                operations = handled.operations  # runs the command elsewhere (SSH, a container); None: here
        controller = self._controller = AbortController()

        def chunk(delta: str) -> None:
            if on_chunk is not None:
                on_chunk(delta)
            self._emit_soon(BashExecutionUpdateEvent(id=id, delta=delta))

        try:
            result = await execute_user_bash(
                command,
                self._cwd,
                on_chunk=chunk,
                signal=controller.signal,
                shell_path=self._settings.get("shellPath"),
                agent_dir=self._agent_dir,
                operations=operations,
            )
        finally:
            self._controller = None
        return self._record_bash(command, result, exclude_from_context)

    def _record_bash(self, command: str, result: BashResult, exclude_from_context: bool) -> BashResult:
        message = BashExecutionMessage(
            command=command,
            output=result.output,
            exit_code=result.exit_code,
            cancelled=result.cancelled,
            truncated=result.truncated,
            full_output_path=result.full_output_path,
            exclude_from_context=True if exclude_from_context else None,
            timestamp=now_ms(),
        )
        if self._is_streaming():
            self._pending.append(message)
        else:
            self._record(message)
        return result

    def flush_pending(self) -> None:
        """Record the commands that ended during the last run (before the next prompt's message)."""
        pending, self._pending = self._pending, []
        for message in pending:
            self._record(message)


__all__ = ["UserBash"]
