"""`pi.exec(cmd, args, signal=, timeout=)`: run a program without a shell and collect its output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apex_ai.abort import AbortSignal


@dataclass(frozen=True)
class ExecResult:
    """`{stdout, stderr, code, killed}`; `code` is the exit status (negative signal number when killed by one)."""

    stdout: str
    stderr: str
    code: int
    killed: bool

    def to_json(self) -> dict[str, Any]:  # Any: JSON values
        return {"stdout": self.stdout, "stderr": self.stderr, "code": self.code, "killed": self.killed}


async def exec_command(
    command: str,
    args: Sequence[str] = (),
    *,
    signal: AbortSignal | None = None,
    timeout: float | None = None,
    cwd: str | None = None,
) -> ExecResult:
    """Run `command args...` in `cwd`; `timeout` is in milliseconds.

    On timeout or abort the whole process group is killed and `killed` is True. A program that cannot be
    started raises `OSError` (FileNotFoundError for an unknown command).
    """
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # own process group, so a kill also reaches grandchildren
    )
    killed = False

    def kill() -> None:
        nonlocal killed
        killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signals.SIGKILL)

    remove_abort = signal.add_callback(kill) if signal is not None else None
    if signal is not None and signal.aborted:
        kill()
    try:
        communicate = asyncio.ensure_future(process.communicate())
        done, _ = await asyncio.wait({communicate}, timeout=timeout / 1000 if timeout is not None else None)
        if not done:
            kill()
        stdout, stderr = await communicate
    finally:
        if remove_abort is not None:
            remove_abort()
    code = process.returncode if process.returncode is not None else -1
    return ExecResult(
        stdout=stdout.decode("utf-8", errors="replace"),
        stderr=stderr.decode("utf-8", errors="replace"),
        code=code,
        killed=killed,
    )


__all__ = ["ExecResult", "exec_command"]
