"""`run_batch` in-process, for what ends before any task starts."""

from __future__ import annotations

import fcntl
import io
from pathlib import Path

from batch_helpers import write_tasks

from apex_coding_agent.batch import BatchOptions, TaskDefaults, run_batch


def test_a_second_batch_on_the_same_output_folder_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "hi", "repo": "repo"}])
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.jsonl").write_text('{"id":"a","status":"completed"}\n')
    options = BatchOptions(
        tasks_file=tmp_path / "tasks.jsonl",
        out=out,
        agent_dir=str(tmp_path / "agent"),
        workers=1,
        defaults=TaskDefaults(permission_mode="plan"),
    )
    err = io.StringIO()
    with (out / "batch.lock").open("w") as running:  # what the first batch holds while it runs
        fcntl.flock(running, fcntl.LOCK_EX)
        assert run_batch(options, err) == 1
    assert err.getvalue() == f"Error: another batch is running with --out {out}\n"
    assert sorted(p.name for p in out.iterdir()) == ["batch.lock", "summary.jsonl"]
    assert (out / "summary.jsonl").read_text() == '{"id":"a","status":"completed"}\n'
    # Once the first batch is gone, the same command resumes: the one task finished earlier.
    err = io.StringIO()
    assert run_batch(options, err) == 0
    assert "Resuming: 1 of 1 task(s) finished earlier, 0 to run" in err.getvalue()
