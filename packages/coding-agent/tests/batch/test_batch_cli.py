"""`apex-code batch` end to end: the real CLI as a subprocess against the scripted model server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from batch_helpers import (
    CLI,
    assert_escape_failed,
    assert_hung_task_killed,
    batch,
    env,
    git,
    read_jsonl,
    scenario,
    twenty_tasks,
    words,
    write_agent_dir,
    write_tasks,
)

from apex_ai.testing.scripted_server import ScriptedModelServer


def test_twenty_tasks_on_four_workers_then_resume(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    tasks, expected = twenty_tasks(tmp_path)
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    agent_dir = tmp_path / "agent"
    args = ["tasks.jsonl", "--out", "out", "--workers", "4", "--model", "local/fake-model"]
    args += ["--permission-mode", "acceptEdits"]
    with ScriptedModelServer(scenario(outside)) as server:
        write_agent_dir(agent_dir, server.openai_base_url)
        done = batch(args, tmp_path, agent_dir)
        assert done.returncode == 1, done.stderr
        out = tmp_path / "out"
        summary = read_jsonl(out / "summary.jsonl")
        assert sorted(r["id"] for r in summary) == sorted(expected), "one line per task"
        assert {r["id"]: r["status"] for r in summary} == expected, done.stderr
        for record in summary:
            folder = out / "tasks" / record["id"]
            assert json.loads((folder / "task.json").read_text()) == record
            if record["id"] == "crash":
                assert record["reason"] == "the task's process exited with code -9"
                continue
            if record["id"] == "hung":
                assert_hung_task_killed(record, tmp_path / "hung.pid")
                continue
            if record["id"] == "badref":
                assert record["reason"] == f"ref 'no-such-branch' not found in {tmp_path / 'repo'}"
                assert sorted(p.name for p in folder.iterdir()) == ["task.json"]
                continue
            if record["id"] == "setup":
                assert (folder / "setup.log").read_text() == "preparing\n"
                assert record["reason"] == "setup exited 3" and not (folder / "session.jsonl").exists()
                continue
            envelope = json.loads((folder / "result.json").read_text())
            run_status = "aborted" if record["status"] == "timeout" else record["status"]
            assert envelope == {"type": "result", "status": run_status}
            session = read_jsonl(folder / "session.jsonl")
            assert session[0]["type"] == "session" and session[0]["cwd"] == str(out / "work" / record["id"])
            diff = (folder / "diff.patch").read_text()
            assert ("+written" in diff) == (record["filesChanged"] == 1), record
            has_check = any(t.get("check") for t in tasks if t["id"] == record["id"])
            assert (folder / "check.log").exists() == (has_check and record["status"] == "completed")
        by_id = {r["id"]: r for r in summary}
        for name in ("w0", "ref", "url", "plain0"):
            assert by_id[name]["checkExitCode"] == 0 and by_id[name]["filesChanged"] == 1
            assert by_id[name]["cost"] > 0 and by_id[name]["usage"]["total"] == 27
        assert (out / "tasks" / "w0" / "check.log").read_text() == "task=w0\n"
        assert by_id["chk0"]["checkExitCode"] == 1 and by_id["chk0"]["filesChanged"] == 0
        assert "scripted failure" in by_id["fail0"]["reason"]
        assert by_id["budget0"]["reason"] == "run budget exhausted: maxTurns"
        assert by_id["slow0"]["reason"] == "time limit of 3s reached"
        assert ".git" not in (out / "tasks" / "plain0" / "diff.patch").read_text()
        assert_escape_failed(out, outside)
        # The sources are untouched and the copies are gone.
        assert git("status", "--porcelain", cwd=tmp_path / "repo") == ""
        assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == ["notes.md"]
        assert list((out / "work").iterdir()) == []
        # Progress (a line per finished task without a terminal), then the table with each failure's reason.
        assert done.stderr.count("/20] done") == 20
        table = words(done.stderr[done.stderr.index("Batch: 20 task(s)") :])
        for line in ("completed 11", "crashed 1", "error 4", "timeout 2", "budget-exhausted 2", "check failed 2"):
            assert f"\n{line}\n" in table
        assert "\nfail1 error 400 " in table and "\nslow0 timeout time limit of 3s reached" in table
        requests = len(server.requests)

        again = batch(args, tmp_path, agent_dir)
        assert again.returncode == 1
        assert "Resuming: 20 of 20 task(s) finished earlier, 0 to run" in again.stderr
        assert read_jsonl(out / "summary.jsonl") == summary
        assert len(server.requests) == requests, "a finished batch asks the model nothing"


def test_task_file_errors_are_listed_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    lines = [
        '{"id": "a", "prompt": "x", "repo": "repo"}',
        "not json",
        '{"id": "a", "prompt": "x", "repo": "repo", "permissionMode": "plan"}',
        '{"id": "../up", "prompt": "x", "repo": "missing", "permissionMode": "plan", "colour": 1}',
        '{"id": "a", "prompt": "y", "repo": "repo", "permissionMode": "plan"}',
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    done = batch(["tasks.jsonl", "--out", "out"], tmp_path, tmp_path / "agent")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: tasks.jsonl:1: 'permissionMode' is required (in the task or with --permission-mode)",
        "Error: tasks.jsonl:2: not JSON (Expecting value: line 1 column 1 (char 0))",
        "Error: tasks.jsonl:4: id '../up' must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
        f"Error: tasks.jsonl:4: repo 'missing' is not a folder ({tmp_path.resolve() / 'missing'})",
        "Error: tasks.jsonl:4: unknown key 'colour'",
        "Error: tasks.jsonl:5: id 'a' was already used on line 3",
    ]
    assert not (tmp_path / "out").exists()


def test_ctrl_c_aborts_running_tasks_and_a_rerun_runs_them_until_the_budget_is_spent(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.txt").write_text("a\n")
    write_tasks(tmp_path / "tasks.jsonl", [{"id": f"s{i}", "prompt": "SLOW", "repo": "repo"} for i in range(4)])
    agent_dir = tmp_path / "agent"
    args = ["tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model", "--permission-mode", "plan"]
    with ScriptedModelServer(scenario(tmp_path / "x", slow_waits=2)) as server:
        write_agent_dir(agent_dir, server.openai_base_url)
        process = subprocess.Popen(
            [*CLI, *args],
            cwd=tmp_path,
            env=env(agent_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert len(server.requests) == 2, "both workers are waiting on the model"
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl+C sends: the whole foreground group
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 130, stderr
        summary = read_jsonl(tmp_path / "out" / "summary.jsonl")
        assert sorted(r["status"] for r in summary) == ["aborted", "aborted"], stderr
        for record in summary:
            envelope = json.loads((tmp_path / "out" / "tasks" / record["id"] / "result.json").read_text())
            assert envelope == {"type": "result", "status": "aborted"}
        assert "Stopping" in stderr and "\nnot started 2 (stopped)\n" in words(stderr)

        # The rerun runs the aborted tasks again, one at a time, until the batch's money is spent: each task costs
        # $0.006, so the third may not start once two have cost $0.012.
        rerun = batch([*args, "--workers", "1", "--max-cost", "0.01", "--keep-copies"], tmp_path, agent_dir)
        assert rerun.returncode == 1, rerun.stderr
        summary = read_jsonl(tmp_path / "out" / "summary.jsonl")
        assert [(r["id"], r["status"]) for r in summary] == [("s0", "completed"), ("s1", "completed")]
        assert "\nnot started 2 (budget reached)\n" in words(rerun.stderr)
        assert "cost $0.0120" in rerun.stderr
        kept = tmp_path / "out" / "work"
        assert sorted(p.name for p in kept.iterdir()) == ["s0", "s0.baseline.git", "s1", "s1.baseline.git"]
        assert (kept / "s0" / "a.txt").read_text() == "a\n" and not (kept / "s0" / ".git").exists()


def test_ray_without_ray_installed_is_one_error_line_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "hi", "repo": "repo", "permissionMode": "plan"}])
    # `import ray` fails in this process as it does where the extra is not installed.
    hide_ray = "import sys; sys.modules['ray'] = None; from apex_coding_agent.cli.main import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", hide_ray, "batch", "tasks.jsonl", "--out", "out", "--ray"],
        cwd=tmp_path,
        env=env(tmp_path / "agent"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "Error: could not start the engine: --ray needs Ray: pip install 'apex-coding-agent[ray]'"
    )
    assert not (tmp_path / "out" / "summary.jsonl").exists() and not (tmp_path / "out" / "tasks").exists()


STAMP_EXTENSION = """
from pathlib import Path


def extension(pi):
    @pi.on("session_start")
    async def stamp(event, ctx):
        Path(ctx.cwd, "{name}").write_text("{name}\\n")
"""


def test_agent_folder_extensions_run_in_tasks_and_a_batch_without_the_sandbox_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".apex-code" / "extensions").mkdir(parents=True)
    (repo / "a.txt").write_text("a\n")
    # The project's own extension needs trust, which nothing gives the copy (no --approve in a batch, as in -p).
    (repo / ".apex-code" / "extensions" / "project.py").write_text(STAMP_EXTENSION.format(name="project.txt"))
    agent_dir = tmp_path / "agent"
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "stamp.py").write_text(STAMP_EXTENSION.format(name="global.txt"))
    write_tasks(tmp_path / "tasks.jsonl", [{"id": f"t{i}", "prompt": "WRITE", "repo": "repo"} for i in range(2)])
    args = ["tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model"]
    with ScriptedModelServer(scenario(tmp_path / "outside")) as server:
        write_agent_dir(agent_dir, server.openai_base_url)
        done = subprocess.run(
            [*CLI, *args, "--permission-mode", "acceptEdits"],
            cwd=tmp_path,
            env={**env(agent_dir), "APEX_CODE_BATCH_SANDBOX": "off"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    summary = read_jsonl(tmp_path / "out" / "summary.jsonl")
    assert [(r["status"], r["sandbox"], r["filesChanged"]) for r in summary] == [("completed", "none", 2)] * 2
    for record in summary:
        diff = (Path(record["outputDir"]) / "diff.patch").read_text()
        assert "+++ b/global.txt" in diff and "+++ b/out.txt" in diff and "project.txt" not in diff
    warning = "Warning: tasks run with sandbox: none (no Landlock in this kernel, or APEX_CODE_BATCH_SANDBOX=off)"
    assert done.stderr.count(warning) == 1, done.stderr
