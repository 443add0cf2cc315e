"""Where shell commands run: this machine by default, or wherever an extension says.

The `bash` tool (`BashToolOptions.operations`) and user `!` commands (a `user_bash` handler returning
`{"operations": ...}`) hand the command, its working directory and environment to a `BashOperations` object. The
local one runs it in its own process group (`run_process`); a replacement may run it over SSH or in a container.
Output, truncation and the exit-code wording stay the caller's, so every backend looks the same to the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from apex_ai.abort import AbortSignal
from apex_coding_agent.tools.shell import ProcessOutcome, resolve_shell, run_process

DataCallback = Callable[[bytes], None]


class BashOperations(Protocol):
    """Runs one shell command, passing its merged stdout/stderr to `on_data` as it arrives.

    It must stop the command when `signal` fires or after `timeout` seconds. The result is the exit code, None
    when a signal ended the command, or a `ProcessOutcome`. Extensions may also return `{"exitCode": n}`, as the
    original product's operations do; `run_operations` accepts all three.
    """

    def exec(
        self,
        command: str,
        cwd: str,
        *,
        env: Mapping[str, str],
        on_data: DataCallback,
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> Awaitable[object]: ...


@dataclass
class LocalBashOperations:
    """Commands run by `shell_path` (default: `/bin/bash`, `bash` on PATH, then `sh`) with `-c` on this machine."""

    shell_path: str | None = None
    kill_grace: float = 0.0

    @property
    def shell(self) -> str:
        return resolve_shell(self.shell_path)

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        env: Mapping[str, str],
        on_data: DataCallback,
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> ProcessOutcome:
        return await run_process([self.shell, "-c", command], cwd, env, on_data, signal, timeout, self.kill_grace)


def _exit_code(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def to_outcome(result: object, signal: AbortSignal | None) -> ProcessOutcome:
    """The `ProcessOutcome` of what `BashOperations.exec` returned (see the protocol); `aborted` follows `signal`."""
    aborted = signal is not None and signal.aborted
    if isinstance(result, ProcessOutcome):
        return ProcessOutcome(result.exit_code, result.timed_out, result.aborted or aborted)
    if isinstance(result, Mapping):
        raw: Any = result.get("exitCode", result.get("exit_code"))  # Any: an extension's JSON-like value
        timed_out = bool(result.get("timedOut", result.get("timed_out", False)))
        return ProcessOutcome(None if aborted else _exit_code(raw), timed_out, aborted)
    return ProcessOutcome(None if aborted else _exit_code(result), False, aborted)


async def run_operations(
    operations: BashOperations,
    command: str,
    cwd: str,
    env: Mapping[str, str],
    on_data: DataCallback,
    signal: AbortSignal | None = None,
    timeout: float | None = None,
) -> ProcessOutcome:
    """Run `command` through `operations` and normalize the result (`exec` may be sync or async)."""
    pending: object = operations.exec(command, cwd, env=env, on_data=on_data, signal=signal, timeout=timeout)
    result = await pending if inspect.isawaitable(pending) else pending
    return to_outcome(result, signal)


__all__ = ["BashOperations", "DataCallback", "LocalBashOperations", "run_operations", "to_outcome"]
