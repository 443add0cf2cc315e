"""`run_batch`: a whole batch from the task file to the final table, on the local pool or Ray.

Tasks a summary in the output folder already records as finished are skipped (every status but `aborted` is
final), so rerunning the same command resumes a batch. The first Ctrl+C (or SIGTERM) stops the batch: no task
starts any more, running tasks end as `aborted` with their outputs written, and the exit code is 130; a second
Ctrl+C kills the running tasks at once. The exit code is 0 only when every task of the file completed and
passed its check.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TextIO

from apex_coding_agent.batch.records import (
    FINAL_STATUSES,
    Progress,
    SummaryWriter,
    TaskRecord,
    final_table,
    read_summary,
)
from apex_coding_agent.batch.tasks import BatchTask, TaskDefaults, TaskFileError, load_tasks
from apex_coding_agent.batch.worker import TaskJob

EXIT_INTERRUPTED = 130
NO_SANDBOX_WARNING = (
    "Warning: tasks run with sandbox: none (no Landlock in this kernel, or APEX_CODE_BATCH_SANDBOX=off):"
    " their shell commands can write outside their copies"
)
_TICK_SECONDS = 0.25


class SpentCounter(Protocol):
    def spent(self) -> float: ...

    def budget_reached(self) -> bool: ...


class Engine(Protocol):
    """What `run_batch` needs of an engine (`LocalEngine`, `RayEngine`)."""

    @property
    def control(self) -> SpentCounter: ...

    @property
    def running(self) -> int: ...

    @property
    def pending(self) -> int: ...

    def start(self, jobs: Sequence[TaskJob]) -> None: ...

    def wait_some(self, timeout: float) -> list[TaskRecord | None]: ...

    def stop(self) -> None: ...

    def kill_all(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class BatchOptions:
    tasks_file: Path
    out: Path
    agent_dir: str
    workers: int
    defaults: TaskDefaults = TaskDefaults()
    ray: bool = False
    ray_address: str | None = None
    """With `ray`: the cluster to join; None starts a local Ray runtime."""
    max_cost: float | None = None
    time_limit: float | None = None
    keep_copies: bool = False


def _model_apis(tasks: Sequence[BatchTask], agent_dir: str) -> tuple[set[str], list[str]]:
    """The model APIs the tasks use, and a problem line for each model name that matches nothing."""
    from apex_coding_agent.cli.models import ModelArgumentError, resolve_model
    from apex_coding_agent.core.model_runtime import ModelRuntime

    runtime = ModelRuntime.create(agent_dir)
    apis: set[str] = set()
    problems: list[str] = []
    for pattern in sorted({task.model for task in tasks if task.model}):
        try:
            choice = resolve_model(runtime, None, pattern)
        except ModelArgumentError as exc:
            users = ", ".join(task.id for task in tasks if task.model == pattern)
            problems.append(f"model {pattern!r} (tasks {users}): {exc}")
            continue
        if choice is not None:
            apis.add(choice.model.api)
    return apis, problems


def _make_engine(options: BatchOptions, spent: float, apis: set[str]) -> Engine:
    if options.ray:
        from apex_coding_agent.batch.ray_engine import RayEngine

        return RayEngine(options.ray_address, options.workers, spent, options.max_cost)
    from apex_coding_agent.batch.local_engine import LocalEngine

    return LocalEngine(options.workers, spent, options.max_cost, apis)


def _jobs(tasks: Sequence[BatchTask], options: BatchOptions) -> list[TaskJob]:
    out = options.out.resolve()
    return [
        TaskJob(
            task=task,
            out_dir=str(out / "tasks" / task.id),
            work_dir=str(out / "work" / task.id),
            cache_dir=str(out / "cache"),
            batch_dir=str(out),
            agent_dir=options.agent_dir,
            time_limit=task.time_limit or options.time_limit,
            keep_copy=options.keep_copies,
        )
        for task in tasks
    ]


def run_batch(options: BatchOptions, stderr: TextIO | None = None) -> int:
    """Run the batch described by `options`; progress and the final table go to `stderr`. Returns the exit code."""
    err = stderr or sys.stderr

    def say(text: str) -> None:
        err.write(text if text.endswith("\n") else text + "\n")
        err.flush()

    try:
        tasks = load_tasks(options.tasks_file, options.defaults)
    except TaskFileError as exc:
        for problem in exc.problems:
            say(f"Error: {problem}")
        return 1
    apis, problems = _model_apis(tasks, options.agent_dir)
    if problems:
        for problem in problems:
            say(f"Error: {problem}")
        return 1
    try:
        options.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        say(f"Error: cannot create the output folder {options.out}: {exc}")
        return 1
    lock = (options.out / "batch.lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        say(f"Error: another batch is running with --out {options.out}")
        return 1
    try:
        return _run_locked(options, tasks, apis, say, err)
    finally:
        lock.close()  # releases the lock


def _run_locked(
    options: BatchOptions, tasks: list[BatchTask], apis: set[str], say: Callable[[str], None], err: TextIO
) -> int:
    summary_path = options.out / "summary.jsonl"
    earlier = read_summary(summary_path)
    kept = [earlier[t.id] for t in tasks if t.id in earlier and earlier[t.id].status in FINAL_STATUSES]
    kept_ids = {record.id for record in kept}
    to_run = [task for task in tasks if task.id not in kept_ids]
    if kept:
        say(f"Resuming: {len(kept)} of {len(tasks)} task(s) finished earlier, {len(to_run)} to run")
    if not to_run:
        say(final_table(kept, 0, 0.0, None, earlier=len(kept)))
        return 0 if not any(record.failed for record in kept) else 1
    records: list[TaskRecord] = list(kept)
    started_at = time.monotonic()
    interrupts = 0
    if not options.ray:
        where = f"in a local pool of {options.workers} worker(s)"
    elif options.ray_address:
        where = f"on the Ray cluster at {options.ray_address}"
    else:
        where = f"on a local Ray runtime with {options.workers} CPU(s)"
    say(f"Running {len(to_run)} task(s) {where}")
    try:
        engine = _make_engine(options, sum(record.cost for record in kept), apis)
    except Exception as exc:  # Ray missing or its cluster out of reach: one line, nothing run, nothing lost
        say(f"Error: could not start the engine: {exc}")
        return 1
    # Finished tasks that are no longer in the task file keep their lines too: a summary never loses a result.
    in_file = {task.id for task in tasks}
    writer = SummaryWriter(summary_path, [*kept, *(r for r in earlier.values() if r.id not in in_file)])

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts >= 2:
            engine.kill_all()
            os._exit(EXIT_INTERRUPTED)

    previous: dict[int, Any] = {}  # Any: whatever handler was installed before
    if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    progress = Progress(err, len(to_run), live=err.isatty())
    not_started = 0
    stopping = False
    warned_unsandboxed = False
    try:
        engine.start(_jobs(to_run, options))
        while engine.pending:
            if interrupts and not stopping:
                stopping = True
                say("\nStopping: running tasks end as aborted (Ctrl+C again kills them)")
                engine.stop()
            finished = engine.wait_some(_TICK_SECONDS)
            progress.running = engine.running
            for record in finished:
                if record is None:
                    not_started += 1
                    continue
                if record.sandbox == "none" and not warned_unsandboxed:
                    warned_unsandboxed = True
                    say(NO_SANDBOX_WARNING)
                records.append(record)
                writer.add(record)
                progress.finished(record, engine.control.spent())
            progress.tick(engine.control.spent())
    finally:
        writer.close()
        progress.close()
        budget_reached = engine.control.budget_reached()
        engine.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    why = "stopped" if stopping else ("budget reached" if budget_reached else None)
    say(final_table(records, not_started, time.monotonic() - started_at, why, earlier=len(kept)))
    if stopping:
        return EXIT_INTERRUPTED
    return 0 if not not_started and not any(record.failed for record in records) else 1


__all__ = ["BatchOptions", "EXIT_INTERRUPTED", "Engine", "run_batch"]
