"""The Ray engine (`--ray [ADDRESS]`, extra `apex-coding-agent[ray]`): each task is a Ray task asking for one CPU.

`--ray` alone starts a local Ray runtime with `--workers` CPUs; `--ray ADDRESS` joins a running cluster, whose
nodes need apex-coding-agent, the agent folder (models, keys) at the same path, the repositories (a path or a
URL they can reach) and the output folder on a shared file system. The batch's `BatchControl` is a Ray actor
that every task reaches through its handle; a task reads the stop flag and the budget from it before it starts,
so tasks Ray has queued start no more once the batch is stopped or its money is spent. A task's record comes
back as the Ray task's value; a task whose worker died is `crashed`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.records import TaskRecord, write_json_atomic
from apex_coding_agent.batch.worker import TaskJob, run_task
from apex_coding_agent.batch.workspace import remove_copy

GRACE_SECONDS: Final = 10.0
"""After a stop, how long running tasks may take to end as `aborted` before they are cancelled by force."""
MISSING_RAY: Final = "--ray needs Ray: pip install 'apex-coding-agent[ray]'"


def import_ray() -> Any:  # Any: the ray module, which ships no type information we rely on
    try:
        # By name: Ray is an optional extra, and the type checker must not need it installed.
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ImportError(MISSING_RAY) from exc


class _ActorControl:
    """The worker's `Control` over the batch's `BatchControl` actor (each call a round trip to the actor)."""

    def __init__(self, actor: Any) -> None:  # Any: a Ray actor handle
        self._actor = actor

    def _call(self, name: str, *args: object) -> Any:  # Any: the method's result
        ray = import_ray()
        return ray.get(getattr(self._actor, name).remote(*args))

    def stopped(self) -> bool:
        return bool(self._call("stopped"))

    def may_start(self) -> bool:
        return bool(self._call("may_start"))

    def add_cost(self, amount: float) -> None:
        self._call("add_cost", amount)

    def reserve(self, provider: str) -> float:
        return float(self._call("reserve", provider))

    def throttled(self, provider: str, retry_after: float | None) -> None:
        self._call("throttled", provider, retry_after)

    def succeeded(self, provider: str) -> None:
        self._call("succeeded", provider)

    def spent(self) -> float:
        return float(self._call("spent"))

    def budget_reached(self) -> bool:
        return bool(self._call("budget_reached"))

    def stop(self) -> None:
        self._call("stop")


def _ray_task(job: TaskJob, actor: Any) -> dict[str, Any] | None:  # Any: actor handle; the record's JSON
    control = _ActorControl(actor)
    if not control.may_start():
        return None
    return run_task(job, control).to_wire()


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
            status = "aborted" if self._stopped_at is not None else "crashed"
            record = TaskRecord(id=job.task.id, status=status, reason=type(exc).__name__, output_dir=job.out_dir)
            with contextlib.suppress(OSError):
                write_json_atomic(Path(job.out_dir) / "task.json", record.to_wire())
            if not job.keep_copy:
                remove_copy(Path(job.work_dir))  # the task's process could not clean up after itself
            return record
        return TaskRecord.model_validate(value) if value is not None else None

    def wait_some(self, timeout: float) -> list[TaskRecord | None]:
        if self._stopped_at is not None and time.monotonic() > self._stopped_at + GRACE_SECONDS:
            self.kill_all()
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
