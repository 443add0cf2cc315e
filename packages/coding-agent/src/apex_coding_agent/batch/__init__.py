"""Batch runs: many headless tasks at once, each in its own copy of its repository (`apex-code batch`).

See docs/batch.md. The engines (`local_engine`, `ray_engine`) and the worker are imported by name when a batch
runs; this package's own import stays light.
"""

from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.records import TaskRecord, TaskStatus, read_summary
from apex_coding_agent.batch.runner import BatchOptions, run_batch
from apex_coding_agent.batch.tasks import BatchTask, TaskDefaults, TaskFileError, load_tasks, parse_tasks

__all__ = [
    "BatchControl",
    "BatchOptions",
    "BatchTask",
    "TaskDefaults",
    "TaskFileError",
    "TaskRecord",
    "TaskStatus",
    "load_tasks",
    "parse_tasks",
    "read_summary",
    "run_batch",
]
