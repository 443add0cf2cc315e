"""Summary files and what stderr shows: the parts of a batch's output that need no model."""

from __future__ import annotations

import io
from pathlib import Path

from apex_coding_agent.batch import TaskRecord, read_summary
from apex_coding_agent.batch.records import Progress, SummaryWriter


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_summary_cut_short_by_a_crash_loses_only_its_last_line_and_is_rewritten_one_line_per_task(
    tmp_path: Path,
) -> None:
    path = tmp_path / "summary.jsonl"
    first = TaskRecord(id="a", status="completed", cost=0.5)
    aborted = TaskRecord(id="b", status="aborted")
    again = TaskRecord(id="b", status="error", reason="boom")
    path.write_text(first.to_json() + "\n" + aborted.to_json() + "\n" + again.to_json() + "\n" + '{"id":"c","sta')
    records = read_summary(path)
    assert records == {"a": first, "b": again}, "the last line of an id wins; a half line is dropped"
    writer = SummaryWriter(path, [records["a"]])
    writer.add(TaskRecord(id="c", status="timeout"))
    writer.close()
    assert [line[:8] for line in path.read_text().splitlines()] == ['{"id":"a', '{"id":"c']
    assert read_summary(tmp_path / "missing.jsonl") == {}


def test_progress_is_one_line_redrawn_on_a_terminal_and_a_line_per_task_elsewhere() -> None:
    terminal, log = Terminal(), io.StringIO()
    for stream, live in ((terminal, True), (log, False)):
        progress = Progress(stream, total=2, live=live)
        progress.running = 2
        progress.tick(0.0)
        progress.running = 1
        progress.finished(TaskRecord(id="a", status="error", reason="boom"), 0.25)
        progress.finished(TaskRecord(id="b", status="completed", check_exit_code=0), 0.5)
        progress.close()
    assert "\n" not in terminal.getvalue().rstrip("\n") and terminal.getvalue().endswith("\n")
    assert terminal.getvalue().split("\r\x1b[2K")[-1] == "[2/2] done 2 · running 1 · failed 1 · $0.5000\n"
    assert log.getvalue().splitlines() == [
        "[1/2] done 1 · running 1 · failed 1 · $0.2500  a: error (boom)",
        "[2/2] done 2 · running 1 · failed 1 · $0.5000  b: completed",
    ]
