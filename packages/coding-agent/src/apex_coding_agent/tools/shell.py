"""Running one shell command in its own process group (spec tools.md §6 "Execution" and "Kill").

Used by the `bash` tool and reusable for user `!` commands. The command's whole process tree is killed on abort or
timeout, and the runner stops reading shortly after the shell exits even if an orphaned grandchild keeps the output
pipe open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal as signal_module
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from apex_agent.tools import ToolExecutionError
from apex_ai.abort import AbortSignal

_READ_SIZE = 65536
# After the shell exits, keep reading while data still arrives; stop after this long without any.
_DRAIN_IDLE_SECONDS = 0.05
_EXIT_POLL_SECONDS = 0.02

_tracked_groups: set[int] = set()


def resolve_shell(shell_path: str | None = None) -> str:
    """The shell to run commands with: a configured path, else `/bin/bash`, `bash` on PATH, then `sh`."""
    if shell_path:
        if not os.path.exists(shell_path):
            raise ToolExecutionError(f"Custom shell path not found: {shell_path}")
        return shell_path
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def kill_process_tree(pid: int, sig: int = signal_module.SIGKILL) -> None:
    """Send `sig` to the process group led by `pid` (falling back to the pid alone); missing processes are fine."""
    if sys.platform == "win32":  # pragma: no cover - the Python port runs its tests on POSIX
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True, check=False)
        return
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tracked_process_groups() -> None:
    """SIGKILL every process group still running a command; call from the agent's SIGTERM/SIGHUP handling."""
    for pgid in list(_tracked_groups):
        kill_process_tree(pgid)
    _tracked_groups.clear()


def tracked_process_groups() -> frozenset[int]:
    return frozenset(_tracked_groups)


@dataclass(frozen=True)
class ProcessOutcome:
    """How a command ended. `exit_code` is None when a signal ended the shell."""

    exit_code: int | None
    timed_out: bool = False
    aborted: bool = False


async def run_process(
    argv: list[str],
    cwd: str,
    env: Mapping[str, str],
    on_data: Callable[[bytes], None],
    signal: AbortSignal | None = None,
    timeout: float | None = None,
    kill_grace: float = 0.0,
) -> ProcessOutcome:
    """Run `argv` in a new session with stdin closed, passing merged stdout/stderr chunks to `on_data`.

    On abort or timeout the process group gets SIGKILL (SIGTERM first when `kill_grace` > 0).
    """
    loop = asyncio.get_running_loop()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _tracked_groups.add(proc.pid)
    assert proc.stdout is not None  # stdout=PIPE above
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    eof = asyncio.Event()
    activity = [0]

    def on_readable() -> None:
        while True:
            try:
                chunk = os.read(fd, _READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                loop.remove_reader(fd)
                eof.set()
                return
            activity[0] += 1
            on_data(chunk)

    loop.add_reader(fd, on_readable)
    exited = asyncio.ensure_future(_wait_exit(proc))
    # Futures of different result types are only raced against each other, never awaited for a value here.
    waiters: list[asyncio.Future[Any]] = [exited]
    abort_waiter: asyncio.Future[None] | None = None
    if signal is not None:
        abort_waiter = asyncio.ensure_future(signal.wait())
        waiters.append(abort_waiter)
    timer: asyncio.Future[None] | None = None
    if timeout is not None:
        timer = asyncio.ensure_future(asyncio.sleep(timeout))
        waiters.append(timer)
    timed_out = aborted = False
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if not exited.done():
            aborted = abort_waiter is not None and abort_waiter.done()
            timed_out = not aborted
            await _kill(proc.pid, kill_grace, exited)
        await exited
        await _drain(eof, activity)
    finally:
        for waiter in waiters:
            waiter.cancel()
        if not exited.done():
            # Cancelled from outside: never leave the command running behind us.
            kill_process_tree(proc.pid)
        loop.remove_reader(fd)
        proc.stdout.close()
        _tracked_groups.discard(proc.pid)
    code = proc.returncode
    return ProcessOutcome(code if code is not None and code >= 0 else None, timed_out, aborted)


async def _wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait for `proc` to exit without blocking the loop (a pidfd where available, else polling)."""
    loop = asyncio.get_running_loop()
    pidfd = -1
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)
    try:
        while True:
            code = proc.poll()
            if code is not None:
                return code
            if pidfd >= 0:
                ready = asyncio.Event()
                loop.add_reader(pidfd, ready.set)
                try:
                    await ready.wait()
                finally:
                    loop.remove_reader(pidfd)
            else:
                await asyncio.sleep(_EXIT_POLL_SECONDS)
    finally:
        if pidfd >= 0:
            os.close(pidfd)


async def _kill(pid: int, grace: float, exited: asyncio.Future[int]) -> None:
    if grace > 0:
        kill_process_tree(pid, signal_module.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(exited), grace)
    kill_process_tree(pid, signal_module.SIGKILL)


async def _drain(eof: asyncio.Event, activity: list[int]) -> None:
    """Read what the shell left in the pipe, but do not wait for orphans that keep it open."""
    while not eof.is_set():
        seen = activity[0]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(eof.wait(), _DRAIN_IDLE_SECONDS)
        if activity[0] == seen:
            return


__all__ = [
    "ProcessOutcome",
    "kill_process_tree",
    "kill_tracked_process_groups",
    "resolve_shell",
    "run_process",
    "tracked_process_groups",
]
