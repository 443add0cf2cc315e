"""Running one shell command in its own process group.

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
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from apex_agent.tools import ToolExecutionError
from apex_ai.abort import AbortSignal

_READ_SIZE = 65536
# After the shell exits, keep reading while data still arrives; stop after this long without any,
# or after the longer bound when a process that escaped the group keeps writing.
_DRAIN_IDLE_SECONDS = 0.05
_DRAIN_MAX_SECONDS = 2.0
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


def track_process_group(pgid: int) -> None:
    """Have `kill_tracked_process_groups` kill a group started elsewhere (an MCP server) on SIGTERM/SIGHUP."""
    _tracked_groups.add(pgid)


def untrack_process_group(pgid: int) -> None:
    _tracked_groups.discard(pgid)


def tracked_process_groups() -> frozenset[int]:
    return frozenset(_tracked_groups)


@dataclass(frozen=True)
class ProcessOutcome:
    """How a command ended. `exit_code` is None when a signal ended the shell."""

    exit_code: int | None
    timed_out: bool = False
    aborted: bool = False


class OutputPacer(Protocol):
    """A consumer of command output that can fall behind (the RPC output stream to a slow client).

    While `congested()` is true no more output is read from the command, so its writes block on the full pipe instead
    of growing a buffer; `drained()` returns once the consumer caught up (or gave up).
    """

    def congested(self) -> bool: ...

    def drained(self) -> Awaitable[None]: ...


_pacer: ContextVar[OutputPacer | None] = ContextVar("apex_output_pacer", default=None)


@contextlib.contextmanager
def paced_output(pacer: OutputPacer | None) -> Iterator[None]:
    """Commands started in this context (and in tasks created from it) read their output at `pacer`'s pace."""
    token = _pacer.set(pacer)
    try:
        yield
    finally:
        _pacer.reset(token)


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

    On abort or timeout the process group gets SIGKILL (SIGTERM first when `kill_grace` > 0). When the shell exits,
    whatever it left running in its process group (`sleep 1000 &`) is killed too; a command that starts its own
    session (`setsid`) leaves the group and is not. Output is read one chunk per event-loop turn, so a flood
    (`yes`) never keeps the loop from other work, and not at all while the context's `OutputPacer` is congested.
    """
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
    pacer = _pacer.get()
    activity = [0]
    reader = _Reader(fd, on_data, pacer, activity)
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
        # The shell is a zombie now (not reaped), so its pid still names the group: no other process can own it.
        _kill_group(proc.pid)
        proc.wait()
        await _drain(reader.eof, activity, pacer, signal, patient=not (aborted or timed_out))
    finally:
        for waiter in waiters:
            waiter.cancel()
        if not exited.done():
            # Cancelled from outside: never leave the command running behind us.
            kill_process_tree(proc.pid)
        reader.close()
        proc.stdout.close()
        _tracked_groups.discard(proc.pid)
    code = proc.returncode
    return ProcessOutcome(code if code is not None and code >= 0 else None, timed_out, aborted)


class _Reader:
    """Reads `fd` to EOF: one chunk per event-loop turn while readable, none while `pacer` is congested.

    `eof` resolves at EOF; `close()` stops reading (before the fd is closed).
    """

    def __init__(
        self, fd: int, on_data: Callable[[bytes], None], pacer: OutputPacer | None, activity: list[int]
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._fd = fd
        self._on_data = on_data
        self._pacer = pacer
        self._activity = activity
        self._resume: asyncio.Future[None] | None = None
        self.eof: asyncio.Future[None] = self._loop.create_future()
        self._loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        if self._pacer is not None and self._pacer.congested():
            # Checked before each read: the chunk would only grow the consumer's backlog.
            self._loop.remove_reader(self._fd)
            self._resume = asyncio.ensure_future(self._resume_when_drained(self._pacer))
            return
        try:
            chunk = os.read(self._fd, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._loop.remove_reader(self._fd)
            if not self.eof.done():
                self.eof.set_result(None)
            return
        self._activity[0] += 1
        self._on_data(chunk)

    async def _resume_when_drained(self, pacer: OutputPacer) -> None:
        await pacer.drained()
        if not self.eof.done():
            self._loop.add_reader(self._fd, self._on_readable)

    def close(self) -> None:
        if self._resume is not None:
            self._resume.cancel()
        self._loop.remove_reader(self._fd)
        if not self.eof.done():
            self.eof.cancel()


async def _wait_exit(proc: subprocess.Popen[bytes]) -> None:
    """Wait for `proc` to exit without reaping it (a pidfd where available, else polling `waitid(WNOWAIT)`)."""
    loop = asyncio.get_running_loop()
    pidfd = -1
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)
    if pidfd >= 0:
        ready = asyncio.Event()
        loop.add_reader(pidfd, ready.set)
        try:
            await ready.wait()
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return
    while not _exited(proc):
        await asyncio.sleep(_EXIT_POLL_SECONDS)


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # pragma: no cover - macOS and Windows: reaping is the only way to ask
        return proc.poll() is not None
    try:
        return waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _kill_group(pgid: int) -> None:
    """SIGKILL what is left in the group of a finished shell; never the lone pid (it may be reused)."""
    if sys.platform == "win32":  # pragma: no cover
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal_module.SIGKILL)


async def _kill(pid: int, grace: float, exited: asyncio.Future[None]) -> None:
    if grace > 0:
        kill_process_tree(pid, signal_module.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(exited), grace)
    kill_process_tree(pid, signal_module.SIGKILL)


async def _drain(
    eof: asyncio.Future[None],
    activity: list[int],
    pacer: OutputPacer | None,
    signal: AbortSignal | None,
    *,
    patient: bool,
) -> None:
    """Read what the command left in the pipe, but do not wait for escaped processes (`setsid`) that keep it open.

    Stops at EOF, after `_DRAIN_IDLE_SECONDS` without data, or after `_DRAIN_MAX_SECONDS` of data (an escaped
    process flooding the pipe). `patient`: a command that ended on its own keeps its output while a congested
    consumer catches up, until `signal` fires; after an abort or timeout the rest is dropped.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _DRAIN_MAX_SECONDS
    while not eof.done():
        seen = activity[0]
        await asyncio.wait([eof], timeout=_DRAIN_IDLE_SECONDS)
        if eof.done():
            return
        congested = pacer is not None and pacer.congested()
        if congested and patient and not (signal is not None and signal.aborted):
            deadline = loop.time() + _DRAIN_MAX_SECONDS
            continue
        if activity[0] == seen or congested or loop.time() > deadline:
            return


__all__ = [
    "OutputPacer",
    "ProcessOutcome",
    "kill_process_tree",
    "kill_tracked_process_groups",
    "paced_output",
    "resolve_shell",
    "run_process",
    "track_process_group",
    "tracked_process_groups",
    "untrack_process_group",
]
