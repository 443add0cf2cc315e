"""What a batch writes: one `TaskRecord` per finished task (`summary.jsonl`, `tasks/<id>/task.json`) and the
final table.

A task's status is the run's (`completed`, `error`, `aborted`, `budget-exhausted`, as `-p --mode json` reports
it) or the batch's own: `timeout` (the task's time limit ran out) and `crashed` (its worker process died).
Every status but `aborted` is final: a rerun with the same `--out` skips such tasks and runs the others again.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, TextIO, TypeAlias

from apex_ai._wire import WireModel, json_text
from apex_coding_agent.session.stats import TokenStats

TaskStatus: TypeAlias = Literal["completed", "error", "aborted", "budget-exhausted", "timeout", "crashed"]
SandboxKind: TypeAlias = Literal["landlock", "none"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "error", "budget-exhausted", "timeout", "crashed"})


class TaskRecord(WireModel):
    """One finished task, as a line of `summary.jsonl`."""

    id: str
    status: TaskStatus
    reason: str | None = None
    """Why the task did not complete (an error message, the exhausted limit, the setup's exit code)."""
    model: str | None = None
    duration_ms: int = 0
    usage: TokenStats = TokenStats()
    """Tokens of every reply of the session, counted as `get_session_stats` counts them."""
    cost: float = 0.0
    turns: int = 0
    files_changed: int | None = None
    check_exit_code: int | None = None
    """The `check` command's exit code; None when the task has no check or it did not run."""
    output_dir: str = ""
    sandbox: SandboxKind | None = None
    """How the task's writes were kept inside its folders: `landlock` (by the kernel), `none` (the kernel could
    not: only the permission gate's rule on write/edit held); None when the task ended before its session."""

    @property
    def failed(self) -> bool:
        return self.status != "completed" or self.check_exit_code not in (None, 0)


def write_json_atomic(path: Path, data: object) -> None:
    """`path` holds either its old content or all of `data`, never half."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json_text(data) + "\n", encoding="utf-8")
    os.replace(partial, path)


def read_summary(path: Path) -> dict[str, TaskRecord]:
    """The records of an earlier run's summary by id (the last line of an id wins); lines that do not parse, such
    as one cut short by a crash, are dropped and their tasks run again."""
    records: dict[str, TaskRecord] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return records
    for line in text.splitlines():
        try:
            record = TaskRecord.model_validate_json(line)
        except ValueError:
            continue
        records[record.id] = record
    return records


class SummaryWriter:
    """Appends one line per finished task to `summary.jsonl`, flushed at once, so a crash loses nothing written."""

    def __init__(self, path: Path, kept: Iterable[TaskRecord]) -> None:
        # Rewritten first with the records that stay (finished ones of an earlier run): one line per task.
        partial = path.with_name(path.name + ".partial")
        partial.write_text("".join(json_text(r.to_wire()) + "\n" for r in kept), encoding="utf-8")
        os.replace(partial, path)
        self._file = path.open("a", encoding="utf-8")

    def add(self, record: TaskRecord) -> None:
        self._file.write(json_text(record.to_wire()) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _money(amount: float) -> str:
    return f"${amount:.4f}"


def final_table(
    records: Sequence[TaskRecord], not_started: int, elapsed: float, stop_reason: str | None, earlier: int = 0
) -> str:
    """The closing summary: counts by status, tokens, cost, time, then each failure with its reason.

    `records` are every finished task of the batch, `earlier` of them finished by an earlier run."""
    counts = Counter(r.status for r in records)
    checks_failed = sum(1 for r in records if r.status == "completed" and r.failed)
    resumed = f" ({earlier} finished earlier)" if earlier else ""
    lines = ["", f"Batch: {len(records)} task(s){resumed}, {elapsed:.1f}s"]
    for status, count in sorted(counts.items()):
        lines.append(f"  {status:<17}{count:>6}")
    if checks_failed:
        lines.append(f"  {'check failed':<17}{checks_failed:>6}")
    if not_started:
        lines.append(f"  {'not started':<17}{not_started:>6}" + (f"  ({stop_reason})" if stop_reason else ""))
    tokens = sum(r.usage.total for r in records)
    lines.append(f"  tokens {tokens:,} · cost {_money(sum(r.cost for r in records))}")
    failures = [r for r in records if r.failed]
    if failures:
        lines.append("Failures:")
        width = max(len(r.id) for r in failures)
        for record in failures:
            why = record.reason or (f"check exited {record.check_exit_code}" if record.status == "completed" else "")
            lines.append(f"  {record.id:<{width}}  {record.status:<16} {why}".rstrip())
    return "\n".join(lines) + "\n"


class Progress:
    """Tasks done/running/failed and the cost so far: one line redrawn in place on a terminal, a line per
    finished task otherwise (a log keeps every line)."""

    def __init__(self, stream: TextIO, total: int, live: bool) -> None:
        self._stream = stream
        self._total = total
        self._live = live
        self.done = 0
        self.failed = 0
        self.running = 0

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def line(self, spent: float) -> str:
        return (
            f"[{self.done}/{self._total}] done {self.done} · running {self.running} · failed {self.failed}"
            f" · {_money(spent)}"
        )

    def finished(self, record: TaskRecord, spent: float) -> None:
        self.done += 1
        self.failed += record.failed
        if self._live:
            self._write("\r\x1b[2K" + self.line(spent))
            return
        extra = f" ({record.reason})" if record.reason else ""
        self._write(f"{self.line(spent)}  {record.id}: {record.status}{extra}\n")

    def tick(self, spent: float) -> None:
        if self._live:
            self._write("\r\x1b[2K" + self.line(spent))

    def close(self) -> None:
        if self._live:
            self._write("\n")


__all__ = [
    "FINAL_STATUSES",
    "Progress",
    "SandboxKind",
    "SummaryWriter",
    "TaskRecord",
    "TaskStatus",
    "final_table",
    "read_summary",
    "write_json_atomic",
]
