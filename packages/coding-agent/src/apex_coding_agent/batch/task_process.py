"""One task in a process of its own, watched from outside: what both engines share.

The task process makes itself a child subreaper, so whatever it starts stays in its tree even when the process in
between exits (`server &` in a command): `kill_tree` then reaches all of it. When the task ends, the process
kills what it left running; when it overstays (its time limit, or a stop of the batch, plus a grace period) the
watcher kills it with everything it started, whatever state it is in (blocked, stopped, ignoring SIGTERM), and
writes the task's record itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import wait as wait_for
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Final

from apex_coding_agent.batch.records import TaskRecord, TaskStatus, write_json_atomic
from apex_coding_agent.batch.sandbox import die_with_parent
from apex_coding_agent.batch.worker import Control, TaskJob, run_task

GRACE_SECONDS: Final = 10.0
"""How long a task may take to wind down after its time limit or a stop of the batch before it is killed."""
_POLL_SECONDS: Final = 0.05
_PR_SET_CHILD_SUBREAPER: Final = 36


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                # The command name (in parentheses) may hold spaces: the fields after it are counted from its end.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(name))
    return tree


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, as /proc shows them now."""
    tree = _children()
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in tree.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def kill_tree(pid: int, include_root: bool = True) -> None:
    """SIGKILL `pid` (unless `include_root` is False) and every process below it. They are stopped first, round
    after round until no new one appears, so none can fork away while the tree is walked."""
    stopped: set[int] = set()
    if include_root:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGSTOP)
    while True:
        new = [p for p in descendants(pid) if p not in stopped]
        if not new:
            break
        for child in new:
            stopped.add(child)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGSTOP)
    for target in [*stopped, *([pid] if include_root else [])]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)


def task_process_main(job: TaskJob, control: Control) -> None:
    """The body of a task's process: its own session (a terminal's Ctrl+C goes to the batch, which stops tasks
    through `control`), a subreaper for what it starts, the task, then nothing of it left running."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Killed when the process that started it (the fork server) goes: a batch (or a Ray worker) killed outright
    # leaves no task running on its own.
    die_with_parent()
    try:
        run_task(job, control)
    finally:
        kill_tree(os.getpid(), include_root=False)


def watch(
    process: BaseProcess, begun: float, time_limit: float | None, stopped_at: Callable[[], float | None]
) -> TaskStatus | None:
    """Wait for `process` to end; kill it with its tree once it overstays its time limit (`timeout`) or a stop of
    the batch (`aborted`, `stopped_at` tells since when); returns why it was killed, None when it ended itself.
    Waiting on the sentinel reads nothing: the caller reads the exit code once, with `join`."""
    limit = begun + time_limit + GRACE_SECONDS if time_limit else None
    killed: TaskStatus | None = None
    while killed is None and not wait_for([process.sentinel], _POLL_SECONDS):
        now = time.monotonic()
        since = stopped_at()
        if limit is not None and now > limit:
            killed = "timeout"
        elif since is not None and now > since + GRACE_SECONDS:
            killed = "aborted"
        if killed is not None and process.pid is not None:
            kill_tree(process.pid)
    return killed


def ended_record(job: TaskJob, killed: TaskStatus | None, exitcode: int | None, begun: float) -> TaskRecord:
    """The record of a task whose process ended: the one it wrote, or, when it was killed or died, one saying so
    (also written to its `task.json`)."""
    record_file = Path(job.out_dir) / "task.json"
    if killed is None and exitcode == 0 and record_file.exists():
        return TaskRecord.model_validate_json(record_file.read_text(encoding="utf-8"))
    if killed == "timeout" and job.time_limit:
        reason = f"killed: still running {GRACE_SECONDS:g}s after its time limit of {job.time_limit:g}s"
    elif killed == "aborted":
        reason = f"killed: still running {GRACE_SECONDS:g}s after the batch was stopped"
    else:
        reason = f"the task's process exited with code {exitcode}"
    record = TaskRecord(
        id=job.task.id,
        status=killed or "crashed",
        reason=reason,
        duration_ms=int((time.monotonic() - begun) * 1000),
        output_dir=job.out_dir,
    )
    with contextlib.suppress(OSError):
        write_json_atomic(record_file, record.to_wire())
    return record


__all__ = [
    "GRACE_SECONDS",
    "descendants",
    "ended_record",
    "kill_tree",
    "task_process_main",
    "watch",
]
