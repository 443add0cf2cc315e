"""A batch workspace for tests: repositories, a task file and a scripted model server whose replies depend on the
prompt (each reply is chosen by `when_last`, so tasks running at once in any order get their own answers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

COST = {"input": 1000, "output": 1000, "cacheRead": 0, "cacheWrite": 0}
"""Dollars per million tokens: a scripted reply of 10 + 5 tokens costs $0.015."""

TOOL_RESULT = '"role":"tool"'


def escape_commands(outside: Path) -> str:
    """A bash command trying every way out of the copy (the folder `outside` and `link`, a link in the copy that
    points into it), then writing `own.txt` in the copy, the task's own work."""
    attempts = [
        f"echo x > {outside}/f",
        "touch ../escaped",
        f"cp notes.md {outside}/copied",
        f"mv notes.md {outside}/moved",
        "echo y > link/through-link",
        f"ln -s {outside}/new new-link && echo z > new-link",
        f"mkdir {outside}/dir",
        "echo mine > own.txt",
    ]
    return "; ".join(attempts)


def scenario(outside: Path, slow_waits: int = 0) -> list[dict[str, Any]]:
    """Replies by prompt keyword: WRITE writes out.txt, ESCAPE tries to write `outside` with `write` and with bash
    (`escape_commands`), FAIL gets a 400, SLOW waits 60 s (the first `slow_waits` SLOW requests only, when given),
    anything else is answered at once."""
    replies: list[dict[str, Any]] = [
        {"when_last": TOOL_RESULT, "text": "done", "usage": {"input": 10, "output": 2}, "repeat": True},
        {
            "when_last": "WRITE",
            "tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "written\n"}}],
            "usage": {"input": 10, "output": 5},
            "repeat": True,
        },
        {
            "when_last": "ESCAPE",
            "tool_calls": [
                {"name": "write", "arguments": {"path": str(outside / "written"), "content": "escaped\n"}},
                {"name": "bash", "arguments": {"command": escape_commands(outside)}},
            ],
            "usage": {"input": 10, "output": 5},
            "repeat": True,
        },
        {
            "when_last": "FAIL",
            "error": {"status": 400, "type": "invalid_request_error", "message": "scripted failure"},
            "repeat": True,
        },
    ]
    if slow_waits:
        replies += [{"when_last": "SLOW", "text": "late", "wait_ms": 60000} for _ in range(slow_waits)]
        replies.append({"when_last": "SLOW", "text": "on time", "usage": {"input": 5, "output": 1}, "repeat": True})
    else:
        replies.append({"when_last": "SLOW", "text": "late", "wait_ms": 60000, "repeat": True})
    replies.append({"text": "answered", "usage": {"input": 5, "output": 1}, "repeat": True})
    return replies


def write_agent_dir(agent_dir: Path, base_url: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "fake-model", "cost": COST}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10, "maxRetries": 1}}))


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_git_repo(path: Path) -> str:
    """A repository with two commits (version.txt `v1`, then `v2`); returns the first commit."""
    path.mkdir(parents=True)
    git("init", "--quiet", "-b", "main", cwd=path)
    (path / "version.txt").write_text("v1\n")
    git("add", ".", cwd=path)
    git("commit", "--quiet", "-m", "v1", cwd=path)
    first = git("rev-parse", "HEAD", cwd=path)
    (path / "version.txt").write_text("v2\n")
    git("commit", "--quiet", "-am", "v2", cwd=path)
    return first


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


CLI = [sys.executable, "-m", "apex_coding_agent.cli", "batch"]


def env(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env["APEX_CODE_CODING_AGENT_DIR"] = str(agent_dir)
    return env


def batch(args: list[str], cwd: Path, agent_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=env(agent_dir), capture_output=True, text=True, timeout=120, check=False
    )


def words(text: str) -> str:
    """`text` with each line's runs of spaces made one (table columns compared without their widths)."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def twenty_tasks(tmp_path: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """20 tasks of every kind, and the status each must end with."""
    repo = tmp_path / "repo"
    first = make_git_repo(repo)
    bare = tmp_path / "remote.git"
    git("clone", "--quiet", "--bare", str(repo), str(bare), cwd=tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.md").write_text("notes\n")
    # The escape task's folder holds a link to the folder outside every copy, which must stay empty.
    (tmp_path / "outside").mkdir()
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "notes.md").write_text("notes\n")
    (hostile / "link").symlink_to(tmp_path / "outside")
    written = 'echo "task=$APEX_CODE_BATCH_TASK_ID"; grep -q written out.txt'
    tasks: list[dict[str, Any]] = [
        # First, as it takes 11 s. The setup stops the task's own process, so it cannot end itself when its time is
        # up, and leaves a command running: both are killed 10 s (the grace) after the limit.
        {
            "id": "hung",
            "prompt": "WRITE",
            "repo": "repo",
            "timeLimit": 1,
            "setup": f"echo $$ > {tmp_path / 'hung.pid'}; kill -STOP $PPID; exec sleep 600",
        },
        *({"id": f"w{i}", "prompt": "WRITE the file", "repo": "repo", "check": written} for i in range(4)),
        # The setup kills the task's own process (bash's parent): the task is `crashed`, the others go on.
        {"id": "crash", "prompt": "WRITE", "repo": "repo", "setup": "kill -9 $PPID; sleep 5"},
        {"id": "badref", "prompt": "WRITE", "repo": "repo", "ref": "no-such-branch"},
        {"id": "ref", "prompt": "WRITE", "repo": "repo", "ref": first, "check": "grep -q v1 version.txt"},
        {"id": "url", "prompt": "WRITE", "repo": bare.as_uri(), "ref": "main", "check": "grep -q v2 version.txt"},
        *({"id": f"plain{i}", "prompt": "WRITE", "repo": "plain", "check": written} for i in range(2)),
        *({"id": f"chk{i}", "prompt": "just answer", "repo": "repo", "check": "test -f out.txt"} for i in range(2)),
        *({"id": f"fail{i}", "prompt": "FAIL now", "repo": "repo"} for i in range(2)),
        {"id": "slow0", "prompt": "SLOW", "repo": "repo", "timeLimit": 3},
        *({"id": f"budget{i}", "prompt": "WRITE", "repo": "repo", "runBudget": {"maxTurns": 1}} for i in range(2)),
        {"id": "setup", "prompt": "WRITE", "repo": "repo", "setup": "echo preparing; exit 3"},
        {
            "id": "escape",
            "prompt": "ESCAPE",
            "repo": "hostile",
            "permissionMode": "bypassPermissions",
            "check": "cat own.txt && test ! -e ../escaped",
        },
    ]
    expected = {task["id"]: "completed" for task in tasks}
    expected.update({f"fail{i}": "error" for i in range(2)})
    expected["slow0"] = expected["hung"] = "timeout"
    expected.update({f"budget{i}": "budget-exhausted" for i in range(2)})
    expected["setup"] = expected["badref"] = "error"
    expected["crash"] = "crashed"
    return tasks, expected


def assert_escape_failed(out: Path, outside: Path) -> None:
    """The escape task's `write` was refused by the gate and every bash attempt by the kernel (Landlock), while its
    own work, its check, its session file and its diff are all there."""
    record = json.loads((out / "tasks" / "escape" / "task.json").read_text())
    assert record["sandbox"] == "landlock", record
    assert list(outside.iterdir()) == [] and not (out / "work" / "escaped").exists()
    session = (out / "tasks" / "escape" / "session.jsonl").read_text()
    assert "denied by the policy permission rules" in session
    assert session.count("Permission denied") >= 6, session
    assert record["status"] == "completed" and record["checkExitCode"] == 0, record
    assert (out / "tasks" / "escape" / "check.log").read_text() == "mine\n"
    diff = (out / "tasks" / "escape" / "diff.patch").read_text()
    assert "+mine" in diff and "new-link" in diff and record["filesChanged"] == 2, diff


def assert_hung_task_killed(record: dict[str, Any], pid_file: Path) -> None:
    """The `hung` task was killed with what it started: its setup's command is gone."""
    assert record["status"] == "timeout", record
    assert record["reason"] == "killed: still running 10s after its time limit of 1s", record
    assert 11000 <= record["durationMs"] < 30000, record
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "sleep" not in Path(f"/proc/{pid}/cmdline").read_text(), pid
