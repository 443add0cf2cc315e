"""The local engine: each task in a process of its own, at most `workers` at a time.

A standard thread pool of `workers` threads does the scheduling; each thread starts one task process and waits
for it. A process per task means a task that crashes, leaks or hangs takes nothing else with it: a crash is
that task's `crashed` record, and one still running some seconds after its time limit (or after a stop) is
killed with everything it started. Processes come from a fork server that has already imported the session
code and the provider SDKs the tasks use, so starting one costs milliseconds rather than a second of imports.
Each task process starts a session of its own, so the Ctrl+C of a terminal reaches only the batch, which
stops the tasks through the shared `BatchControl` (hosted by a manager process).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from multiprocessing.managers import BaseManager
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Final

from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.records import TaskRecord, TaskStatus
from apex_coding_agent.batch.task_process import ended_record, kill_tree, task_process_main, watch
from apex_coding_agent.batch.worker import TaskJob
from apex_coding_agent.batch.workspace import remove_copy

WARM_APIS_VARIABLE: Final = "APEX_CODE_BATCH_WARM_APIS"

_SDK_MODULES: Final = {
    "anthropic-messages": ("anthropic", "apex_ai.providers.anthropic"),
    "openai-completions": ("openai", "apex_ai.providers.openai_completions"),
    "openai-responses": ("openai", "apex_ai.providers.openai_responses"),
}
"""What a task of each API imports first; the fork server imports it once for all of them."""
_PRELOAD: Final = (
    "apex_coding_agent.batch.task_process",
    "apex_coding_agent.batch.sandbox",
    "apex_coding_agent.runtime",
    "apex_coding_agent.modes.print_mode",
    "apex_coding_agent.cli.models",
)


class _ControlManager(BaseManager):
    pass


_ControlManager.register("BatchControl", BatchControl)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def preload_modules(apis: Iterable[str]) -> list[str]:
    """The modules the fork server imports for tasks on these model APIs (the warm-up last: it runs a task)."""
    modules = list(_PRELOAD)
    for api in apis:
        modules.extend(m for m in _SDK_MODULES.get(api, ()) if m not in modules)
    return [*modules, "apex_coding_agent.batch.warmup"]


class LocalEngine:
    """Runs jobs in task processes; `control` is the proxy every task process shares. `close()` shuts the
    manager process down."""

    def __init__(self, workers: int, spent: float = 0.0, max_cost: float | None = None, apis: Iterable[str] = ()):
        self.workers = workers
        self._context = multiprocessing.get_context("forkserver")
        apis = sorted(apis)
        os.environ[WARM_APIS_VARIABLE] = ",".join(apis)  # read by the warm-up module in the fork server
        self._context.set_forkserver_preload(preload_modules(apis))
        self._manager = _ControlManager(ctx=self._context)
        self._manager.start(_ignore_interrupts)
        self.control: BatchControl = self._manager.BatchControl(spent, max_cost)  # type: ignore[attr-defined]
        self._stopped_at: float | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._futures: set[Future[TaskRecord | None]] = set()
        self._lock = threading.Lock()
        self._processes: set[BaseProcess] = set()
        # Deleting a copy takes tens of milliseconds: one thread does it after each task, while the next one runs.
        self._cleaner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch-cleaner")

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._processes)

    @property
    def pending(self) -> int:
        return len(self._futures)

    def start(self, jobs: Sequence[TaskJob]) -> None:
        """Queue every job; a job whose turn comes after a stop or once the budget is spent is not started."""
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="batch")
        self._futures = {
            self._pool.submit(self._run_one, replace(job, engine_removes_copy=True, sandbox=True)) for job in jobs
        }

    def wait_some(self, timeout: float) -> list[TaskRecord | None]:
        """The results of the jobs that ended within `timeout` seconds (None for a job not started)."""
        done, self._futures = wait(self._futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return [future.result() for future in done]

    def stop(self) -> None:
        """No task starts any more, and the running ones end as `aborted` (killed after `GRACE_SECONDS`)."""
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
        with contextlib.suppress(OSError, EOFError):  # the manager may already be gone at exit
            self.control.stop()

    def kill_all(self) -> None:
        """Kill every running task at once (the second Ctrl+C)."""
        for process in list(self._processes):
            if process.pid is not None:
                kill_tree(process.pid)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._cleaner.shutdown(wait=True)
        self._manager.shutdown()

    def _run_one(self, job: TaskJob) -> TaskRecord | None:
        if self._stopped_at is not None or not self.control.may_start():
            return None
        process = self._context.Process(target=task_process_main, args=(job, self.control), daemon=True)
        begun = time.monotonic()
        # `start` polls every earlier process (multiprocessing's clean-up of finished children); a fork-server
        # child's exit code can be read only once, so a poll racing another thread's `join` would find it gone
        # and report 255. Starting and joining under one lock keeps every read single.
        with self._lock:
            process.start()
            self._processes.add(process)
        try:
            killed = self._watch(process, begun, job.time_limit)
        finally:
            with self._lock:
                self._processes.discard(process)
            self._cleaner.submit(remove_copy, Path(job.work_dir), job.keep_copy)
        return ended_record(job, killed, process.exitcode, begun)

    def _watch(self, process: BaseProcess, begun: float, time_limit: float | None) -> TaskStatus | None:
        try:
            return watch(process, begun, time_limit, lambda: self._stopped_at)
        finally:
            with self._lock:
                process.join()


__all__ = ["LocalEngine", "preload_modules"]
