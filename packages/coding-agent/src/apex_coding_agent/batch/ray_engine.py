"""The Ray engine (`--ray [ADDRESS]`, extra `apex-coding-agent[ray]`): each task is a Ray task asking for one CPU.

`--ray` alone starts a local Ray runtime with `--workers` CPUs; `--ray ADDRESS` joins a running cluster, whose
nodes need apex-coding-agent, the agent folder (models, keys) at the same path, the repositories (a path or a
URL they can reach) and the output folder on a shared file system. The batch's `BatchControl` is a Ray actor
that every task reaches through its handle; a task reads the stop flag and the budget from it before it starts,
so tasks Ray has queued start no more once the batch is stopped or its money is spent. A task's record comes
back as the Ray task's value; a task whose worker died is `crashed`.

Ray reuses its worker processes, so a task never runs in one: the Ray task starts a process of its own for it
(from a fork server, as the local pool does), which restricts itself (see `sandbox`) and ends with the task, so
one task's restriction never reaches another. The Ray task relays the process's calls to the actor and kills it
with everything it started when it overstays. The driver watches the time limits too: a Ray task still running
well past its limit and grace (its worker hung) is cancelled by force and ends `timeout`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.records import TaskRecord, TaskStatus, write_json_atomic
from apex_coding_agent.batch.task_process import (
    GRACE_SECONDS,
    ended_record,
    task_process_main,
    watch,
)
from apex_coding_agent.batch.worker import Control, TaskJob
from apex_coding_agent.batch.workspace import remove_copy

_STOP_POLL_SECONDS: Final = 0.5
"""How often a Ray task asks the actor whether the batch was stopped (its process asks on its own, more often)."""
MISSING_RAY: Final = "--ray needs Ray: pip install 'apex-coding-agent[ray]'"


def import_ray() -> Any:  # Any: the ray module, which ships no type information we rely on
    try:
        # By name: Ray is an optional extra, and the type checker must not need it installed.
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ImportError(MISSING_RAY) from exc


class _RemoteControl:
    """A worker's `Control` whose every call is carried elsewhere by `call(name, *args)` (an actor, a pipe)."""

    def __init__(self, call: Callable[..., Any]) -> None:  # Any: the method's result
        self._call = call

    def stopped(self) -> bool:
        return bool(self._call("stopped"))

    def add_cost(self, amount: float) -> None:
        self._call("add_cost", amount)

    def reserve(self, provider: str) -> float:
        return float(self._call("reserve", provider))

    def throttled(self, provider: str, retry_after: float | None) -> None:
        self._call("throttled", provider, retry_after)

    def succeeded(self, provider: str) -> None:
        self._call("succeeded", provider)


class _ActorControl(_RemoteControl):
    """The batch's `BatchControl` actor, for the driver and the Ray tasks (each call a round trip to the actor)."""

    def __init__(self, actor: Any) -> None:  # Any: a Ray actor handle
        super().__init__(lambda name, *args: import_ray().get(getattr(actor, name).remote(*args)))

    def may_start(self) -> bool:
        return bool(self._call("may_start"))

    def spent(self) -> float:
        return float(self._call("spent"))

    def budget_reached(self) -> bool:
        return bool(self._call("budget_reached"))

    def stop(self) -> None:
        self._call("stop")

    def task_started(self, task_id: str) -> None:
        self._call("task_started", task_id)

    def started_since(self, count: int) -> list[str]:
        return list(self._call("started_since", count))


_DRIVER_GRACE: Final = 2 * GRACE_SECONDS
"""How long after its time limit (or a stop) the driver cancels a task: the Ray task's own grace, and as much
again for it to report (on a busy cluster its record may take a moment)."""


class _PipeControl(_RemoteControl):
    """The task process's `Control`: each call goes through a pipe to the Ray task that started it, which asks the
    actor (the process has no Ray connection of its own)."""

    def __init__(self, connection: Connection) -> None:
        lock = threading.Lock()

        def call(name: str, *args: object) -> Any:  # Any: the method's result
            with lock:
                connection.send((name, args))
                return connection.recv()

        super().__init__(call)


def _relay(connection: Connection, control: Control) -> None:
    """Answer the task process's `_PipeControl` calls until it closes the pipe."""
    with contextlib.suppress(EOFError, OSError):
        while True:
            name, args = connection.recv()
            connection.send(getattr(control, name)(*args))


def _pipe_task(job: TaskJob, connection: Connection) -> None:
    task_process_main(job, _PipeControl(connection))


def _ray_task(job: TaskJob, actor: Any) -> dict[str, Any] | None:  # Any: actor handle; the record's JSON
    from apex_coding_agent.batch.local_engine import preload_modules

    control = _ActorControl(actor)
    if not control.may_start():
        return None
    control.task_started(job.task.id)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload_modules(()))
    ours, theirs = context.Pipe()
    process = context.Process(target=_pipe_task, args=(replace(job, sandbox=True), theirs), daemon=True)
    begun = time.monotonic()
    process.start()
    theirs.close()
    threading.Thread(target=_relay, args=(ours, control), daemon=True).start()
    stop: dict[str, float | None] = {"asked": 0.0, "since": None}

    def stopped_at() -> float | None:
        now = time.monotonic()
        if stop["since"] is None and now - (stop["asked"] or 0.0) >= _STOP_POLL_SECONDS:
            stop["asked"] = now
            if control.stopped():
                stop["since"] = now
        return stop["since"]

    try:
        killed = watch(process, begun, job.time_limit, stopped_at)
    finally:
        process.join()
        ours.close()
        remove_copy(Path(job.work_dir), job.keep_copy)
    return ended_record(job, killed, process.exitcode, begun).to_wire()


class RayEngine:
    """Runs jobs as Ray tasks; `close()` leaves the cluster (and stops a runtime it started)."""

    def __init__(self, address: str | None, workers: int, spent: float = 0.0, max_cost: float | None = None):
        ray = import_ray()
        self._ray = ray
        # Ray's own start-up notes would interleave with the progress lines: only its errors reach stderr.
        options: dict[str, Any] = {  # Any: ray.init keywords
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=workers, **options)
        self._cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._actor = ray.remote(num_cpus=0)(BatchControl).remote(spent, max_cost)
        self.control = _ActorControl(self._actor)
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        self._jobs: dict[Any, TaskJob] = {}  # Any: ObjectRef
        self._stopped_at: float | None = None
        self._started: dict[str, float] = {}
        """When the driver learnt that each task began (by the actor), on the driver's own clock."""
        self._cancelled: dict[Any, TaskStatus] = {}  # Any: ObjectRef

    @property
    def running(self) -> int:
        """Tasks Ray may be running now: those not finished, up to the cluster's CPUs (one each)."""
        return min(len(self._jobs), self._cpus)

    @property
    def pending(self) -> int:
        return len(self._jobs)

    def start(self, jobs: Sequence[TaskJob]) -> None:
        self._jobs = {self._remote.remote(job, self._actor): job for job in jobs}

    def _result(self, ref: Any) -> TaskRecord | None:  # Any: ObjectRef
        job = self._jobs.pop(ref)
        try:
            value = self._ray.get(ref)
        except Exception as exc:  # the worker died or the task was cancelled: the task's record says so
            status = self._cancelled.get(ref) or ("aborted" if self._stopped_at is not None else "crashed")
            reason = type(exc).__name__
            if status == "timeout" and job.time_limit:
                late = _DRIVER_GRACE
                reason = f"cancelled by force: still running {late:g}s after its time limit of {job.time_limit:g}s"
            record = TaskRecord(id=job.task.id, status=status, reason=reason, output_dir=job.out_dir)
            with contextlib.suppress(OSError):
                write_json_atomic(Path(job.out_dir) / "task.json", record.to_wire())
            remove_copy(Path(job.work_dir), job.keep_copy)  # the task could not clean up after itself
            return record
        return TaskRecord.model_validate(value) if value is not None else None

    def _cancel_overdue(self) -> None:
        """Cancel by force every task still running `_DRIVER_GRACE` after its time limit: its Ray task would have
        killed it before, so its worker is hung (the local pool's watcher runs in the batch itself)."""
        now = time.monotonic()
        for task_id in self.control.started_since(len(self._started)):
            self._started[task_id] = now
        for ref, job in list(self._jobs.items()):
            began = self._started.get(job.task.id)
            if ref in self._cancelled or began is None or not job.time_limit:
                continue
            if now > began + job.time_limit + _DRIVER_GRACE:
                self._cancelled[ref] = "timeout"
                with contextlib.suppress(Exception):  # already finished, or the cluster is gone
                    self._ray.cancel(ref, force=True)

    def wait_some(self, timeout: float) -> list[TaskRecord | None]:
        # Each task's own Ray task kills it GRACE_SECONDS after a stop; the driver cancels what is left after that.
        if self._stopped_at is not None and time.monotonic() > self._stopped_at + _DRIVER_GRACE:
            self.kill_all()
        self._cancel_overdue()
        refs = list(self._jobs)
        if not refs:
            return []
        ready, rest = self._ray.wait(refs, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return [self._result(ref) for ref in ready]

    def stop(self) -> None:
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
        self.control.stop()

    def kill_all(self) -> None:
        for ref in list(self._jobs):
            with contextlib.suppress(Exception):  # already finished, or the cluster is gone
                self._ray.cancel(ref, force=True)

    def close(self) -> None:
        self._ray.shutdown()


__all__ = ["GRACE_SECONDS", "MISSING_RAY", "RayEngine", "import_ray"]
