"""The Ray engine runs the same 20 tasks as the local pool and writes the same summary.

Ray is the optional extra `apex-coding-agent[ray]` (about 200 MB), so this test lives outside `tests/`: the nox
session `ray` (part of the default `uv run nox`) installs the extra and runs it. Without Ray it fails, never skips.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batch_helpers import batch, read_jsonl, scenario, twenty_tasks, write_agent_dir, write_tasks

from apex_ai.testing.scripted_server import ScriptedModelServer


def _comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records without what differs between any two runs (time taken, where the outputs went) or between the
    engines (how a dead process is described: an exit code locally, Ray's error name on Ray)."""
    ignored = {"durationMs", "outputDir"}
    return sorted(
        (
            {k: v for k, v in r.items() if k not in ignored and (k, r["status"]) != ("reason", "crashed")}
            for r in records
        ),
        key=str,
    )


def test_a_local_ray_runtime_gives_the_summary_of_the_local_pool(tmp_path: Path) -> None:
    tasks, expected = twenty_tasks(tmp_path)
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    agent_dir = tmp_path / "agent"
    common = ["tasks.jsonl", "--workers", "2", "--model", "local/fake-model", "--permission-mode", "acceptEdits"]
    with ScriptedModelServer(scenario(tmp_path / "outside")) as server:
        write_agent_dir(agent_dir, server.openai_base_url)
        local = batch([*common, "--out", "local"], tmp_path, agent_dir)
        on_ray = batch([*common, "--out", "ray", "--ray"], tmp_path, agent_dir)
    assert on_ray.stderr.splitlines()[0] == "Running 20 task(s) on a local Ray runtime with 2 CPU(s)", on_ray.stderr
    assert local.returncode == on_ray.returncode == 1, on_ray.stderr
    ray_summary = read_jsonl(tmp_path / "ray" / "summary.jsonl")
    assert {r["id"]: r["status"] for r in ray_summary} == expected, on_ray.stderr
    assert _comparable(ray_summary) == _comparable(read_jsonl(tmp_path / "local" / "summary.jsonl"))
    for record in ray_summary:
        assert Path(record["outputDir"]) == tmp_path / "ray" / "tasks" / record["id"]
        assert (Path(record["outputDir"]) / "task.json").exists()


def test_a_task_whose_ray_worker_hangs_is_cancelled_by_the_driver(tmp_path: Path) -> None:
    """The setup stops the task's process and the Ray worker watching it (its grandparent, past the fork server):
    nothing on the worker's side can end the task, so the driver cancels it by force once it is overdue, and what
    the task started dies with it."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.txt").write_text("a\n")
    hang = (
        "task=$PPID; server=$(ps -o ppid= -p $task); worker=$(ps -o ppid= -p $server);"
        f" echo $worker $$ > {tmp_path / 'pids'}; kill -STOP $worker $task; exec sleep 600"
    )
    tasks = [
        {"id": "hung", "prompt": "WRITE", "repo": "repo", "timeLimit": 1, "setup": hang},
        {"id": "fine", "prompt": "WRITE", "repo": "repo"},
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    agent_dir = tmp_path / "agent"
    args = ["tasks.jsonl", "--out", "out", "--ray", "--workers", "2", "--model", "local/fake-model"]
    with ScriptedModelServer(scenario(tmp_path / "outside")) as server:
        write_agent_dir(agent_dir, server.openai_base_url)
        done = batch([*args, "--permission-mode", "acceptEdits"], tmp_path, agent_dir)
    summary = {r["id"]: r for r in read_jsonl(tmp_path / "out" / "summary.jsonl")}
    assert summary["fine"]["status"] == "completed", done.stderr
    hung = summary["hung"]
    assert hung["status"] == "timeout", done.stderr
    assert hung["reason"] == "cancelled by force: still running 20s after its time limit of 1s"
    # The worker, the task's process and its setup command (a sleep, killed as the process it started it dies).
    for pid in (tmp_path / "pids").read_text().split():
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/cmdline").read_text() == "", pid
    assert not (tmp_path / "out" / "work" / "hung").exists(), "the driver removed the copy"
