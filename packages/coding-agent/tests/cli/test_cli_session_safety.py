"""Session files and the writer lock where the user meets them: the real `apex-code` as a subprocess.

Only regular files are sessions (a FIFO, device or directory is refused untouched, a symlink is followed), one
process writes a session (a second one is refused at start with the holder's pid, also for a new `--session-id`),
and a write that fails is an error the run reports (event, status, exit code, RPC error response).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from cli_helpers import CLI, env_for, json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

REPLY = {"text": "ok", "usage": {"input": 3, "output": 1}}
PLAN = ["--permission-mode", "plan"]
DATA = Path(__file__).parent.parent / "session" / "data"
_LIMITED = (
    "import resource, runpy, sys; limit = int(sys.argv.pop(1)); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
    "runpy.run_module('apex_coding_agent.cli', run_name='__main__')"
)
"""Runs the CLI with files capped at argv[1] bytes (RLIMIT_FSIZE): writes past it fail as on a full disk."""


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    return work, agent


def _first_session(work: Path, agent: Path) -> Path:
    first = run_cli(["--mode", "json", *PLAN, "-p", "one"], work, agent)
    assert first.returncode == 0, first.stderr
    [path] = list((agent / "sessions").rglob("*.jsonl"))
    return path


def _user_texts(path: Path) -> list[str]:
    texts = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("type") == "message" and message.get("role") == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


# --------------------------------------------------------------------------- item 7: only regular files


def _make_node(kind: str, path: Path) -> Path:
    """A FIFO, a twin of /dev/null or /dev/zero (same device numbers; made with mknod as root), or a directory.

    Without root, mknod is not allowed: the real /dev/null stands in (an unprivileged process cannot replace it).
    """
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        minor = 3 if kind == "null device" else 5
        if os.geteuid() != 0:
            return Path("/dev/null" if minor == 3 else "/dev/zero")
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    return path


def _identity(path: Path) -> tuple[int, int, int]:
    info = os.lstat(path)
    return stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev


@pytest.mark.parametrize("kind", ["fifo", "null device", "zero device", "directory"])
def test_session_on_a_fifo_device_or_directory_is_one_clear_error_and_leaves_it_untouched(
    tmp_path: Path, kind: str
) -> None:
    work, agent = _dirs(tmp_path)
    node = _make_node(kind, tmp_path / "node.jsonl")
    before = _identity(node)
    null_before = _identity(Path("/dev/null"))
    with ScriptedModelServer([REPLY]) as server:
        write_models(agent, server)
        # A FIFO that were opened would block until the timeout; /dev/zero that were read would never end.
        proc = run_cli([*PLAN, "--session", str(node), "-p", "hi"], work, agent, timeout=30)
        asked = len(server.requests)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    label = {"fifo": "FIFO", "null device": "character device", "zero device": "character device"}.get(kind, kind)
    assert len(lines) == 1 and lines[0].startswith(f"Error: --session {node} is ") and label in lines[0], lines
    _no_traceback(proc.stderr)
    assert asked == 0
    assert _identity(node) == before and _identity(Path("/dev/null")) == null_before
    if kind == "directory":
        assert list(node.iterdir()) == []
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_a_symlinked_session_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY, REPLY]) as server:
        write_models(agent, server)
        target = _first_session(work, agent)
        link = tmp_path / "link.jsonl"
        link.symlink_to(target)
        proc = run_cli(["--mode", "json", *PLAN, "--session", str(link), "-p", "two"], work, agent)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert _user_texts(target) == ["one", "two"]
    assert not list(target.parent.glob("*.lock"))  # released at exit


def test_a_symlinked_v1_session_is_migrated_in_place_without_warnings(tmp_path: Path) -> None:
    """Item 17 and item 7: migration rewrites the file the link names, and what migrates cleanly is not reported."""
    work, agent = _dirs(tmp_path)
    target = tmp_path / "old.jsonl"
    lines = (DATA / "v1.jsonl").read_text().splitlines()
    header = json.loads(lines[0]) | {"cwd": str(work)}
    target.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with ScriptedModelServer([REPLY]) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", *PLAN, "--session", str(link), "-p", "more"], work, agent)
    assert proc.returncode == 0, proc.stderr
    assert "skipping session line" not in proc.stderr and "validation error" not in proc.stderr, proc.stderr
    assert link.is_symlink()
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert records[0]["version"] == 3 and all("id" in r and "parentId" in r for r in records[1:])
    assert _user_texts(target)[-1] == "more"


def test_a_v1_line_that_still_fails_after_migration_is_the_only_warning(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    path = tmp_path / "old.jsonl"
    lines = (DATA / "v1.jsonl").read_text().splitlines()
    header = json.loads(lines[0]) | {"cwd": str(work)}
    path.write_text("\n".join([json.dumps(header), lines[1], "{torn", *lines[2:]]) + "\n")
    with ScriptedModelServer([REPLY]) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", *PLAN, "--session", str(path), "-p", "more"], work, agent)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "skipping session line" in line]
    assert len(warnings) == 1 and f"{path}:3: not valid JSON" in warnings[0], proc.stderr


# --------------------------------------------------------------------------- item 8: one writer, at start


def _start_rpc(args: list[str], work: Path, agent: Path, limit: int | None = None) -> subprocess.Popen[str]:
    command = [*CLI] if limit is None else [sys.executable, "-c", _LIMITED, str(limit)]
    proc = subprocess.Popen(
        [*command, "--mode", "rpc", *PLAN, *args],
        cwd=work,
        env=env_for(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _send(proc, {"id": "ready", "type": "get_state"})
    assert _read_until(proc, lambda r: r.get("id") == "ready")["success"] is True
    return proc


def _send(proc: subprocess.Popen[str], command: dict[str, Any]) -> None:
    stdin: IO[str] | None = proc.stdin
    assert stdin is not None
    stdin.write(json.dumps(command) + "\n")
    stdin.flush()


def _records(proc: subprocess.Popen[str]) -> Iterator[dict[str, Any]]:
    assert proc.stdout is not None
    for line in proc.stdout:
        yield json.loads(line)


def _read_until(proc: subprocess.Popen[str], done: Any) -> dict[str, Any]:  # done: predicate on a record
    for record in _records(proc):
        if done(record):
            return record
    raise AssertionError(f"stream ended; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_a_second_writer_is_refused_at_start_with_the_holders_pid(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY, REPLY]) as server:
        write_models(agent, server)
        path = _first_session(work, agent)
        holder = _start_rpc(["--session", str(path)], work, agent)
        try:
            for second in (["--mode", "rpc"], ["-p"]):
                args = [*second, *PLAN, "--session", str(path)] + (["hi"] if second == ["-p"] else [])
                proc = run_cli(args, work, agent)
                assert proc.returncode == 1, (second, proc.stdout, proc.stderr)
                assert f"in use by process {holder.pid}" in proc.stderr and str(path) in proc.stderr
                _no_traceback(proc.stderr)
            # The holder was idle all along; its later entries are all saved.
            _send(holder, {"id": "p", "type": "prompt", "message": "from the holder"})
            _read_until(holder, lambda r: r.get("type") == "agent_settled")
        finally:
            code, err = _finish(holder)
    assert code == 0, err
    assert _user_texts(path) == ["one", "from the holder"]


def test_a_new_session_id_in_use_is_refused_and_one_id_has_one_file(tmp_path: Path) -> None:
    """Item 9: a second run with the same `--session-id` continues that session (sessions.md: open the local
    session with that id); while the first still runs, even before its file exists, the second is refused."""
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY, REPLY]) as server:
        write_models(agent, server)
        first = _start_rpc(["--session-id", "shared-id"], work, agent)
        try:
            refused = run_cli([*PLAN, "--session-id", "shared-id", "-p", "hi"], work, agent)
            assert refused.returncode == 1
            assert f"Session id shared-id is in use by process {first.pid}" in refused.stderr
            _send(first, {"id": "p", "type": "prompt", "message": "first"})
            _read_until(first, lambda r: r.get("type") == "agent_settled")
        finally:
            code, err = _finish(first)
        assert code == 0, err
        again = run_cli(["--mode", "json", *PLAN, "--session-id", "shared-id", "-p", "second"], work, agent)
    assert again.returncode == 0, again.stderr
    assert "no session with id" not in again.stderr
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert [f.name.endswith("_shared-id.jsonl") for f in files] == [True]
    assert _user_texts(files[0]) == ["first", "second"]
    assert not list((agent / "sessions").rglob("*.lock"))


def test_a_session_dir_that_cannot_be_created_fails_at_start(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with ScriptedModelServer([REPLY]) as server:
        write_models(agent, server)
        proc = run_cli([*PLAN, "--session-dir", str(blocker / "sessions"), "-p", "hi"], work, agent)
        asked = len(server.requests)
    assert proc.returncode == 1 and asked == 0
    assert proc.stderr.startswith(f"Error: --session-dir {blocker / 'sessions'}: cannot create it"), proc.stderr
    _no_traceback(proc.stderr)


# --------------------------------------------------------------------------- item 8: failed writes are errors


def _limited_cli(limit: int, args: list[str], work: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    """The CLI with files capped at `limit` bytes (RLIMIT_FSIZE): writes past it fail as on a full disk."""
    return subprocess.run(
        [sys.executable, "-c", _LIMITED, str(limit), *args],
        cwd=work,
        env=env_for(agent),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_new_session_that_cannot_be_written_ends_as_error(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY]) as server:
        write_models(agent, server)
        proc = _limited_cli(300, ["--mode", "json", *PLAN, "-p", "hi"], work, agent)
    assert proc.returncode == 1, proc.stderr
    records = json_lines(proc.stdout)
    [failure] = [r for r in records if r["type"] == "session_write_error"]
    assert "Could not write session file" in failure["error"] and "File too large" in failure["error"]
    assert records[-1] == {"type": "result", "status": "error"}
    assert f"Error: {failure['error']}" in proc.stderr.splitlines()
    _no_traceback(proc.stderr)
    assert not list((agent / "sessions").rglob("*.jsonl"))  # a half-written file is removed, not left torn


def test_an_append_that_fails_ends_as_error_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY, REPLY]) as server:
        write_models(agent, server)
        path = _first_session(work, agent)
        before = path.read_bytes()
        proc = _limited_cli(len(before) + 40, [*PLAN, "--session", str(path), "-p", "two"], work, agent)
        asked = len(server.requests)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error: Could not write session file")]
    assert len(errors) == 1 and str(path) in errors[0]
    _no_traceback(proc.stderr)
    assert asked == 1  # the run stopped at the user message it could not save: no request was sent
    assert path.read_bytes() == before


def test_rpc_reports_failed_writes_as_an_error_response_and_an_event(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([REPLY, REPLY]) as server:
        write_models(agent, server)
        path = _first_session(work, agent)
        size = path.stat().st_size
        rpc = _start_rpc(["--session", str(path)], work, agent, limit=size + 40)
        try:
            _send(rpc, {"id": "name", "type": "set_session_name", "name": "x" * 200})
            named = _read_until(rpc, lambda r: r.get("id") == "name")
            _send(rpc, {"id": "p", "type": "prompt", "message": "two"})
            seen = []
            for record in _records(rpc):
                seen.append(record)
                if record.get("type") == "agent_settled":
                    break
        finally:
            code, err = _finish(rpc)
    assert named["success"] is False and "Could not write session file" in named["error"], named
    [failure] = [r for r in seen if r["type"] == "session_write_error"]
    assert str(path) in failure["error"]
    [end] = [r for r in seen if r["type"] == "agent_end"]
    assert end["stopReason"] == "error"
    assert code == 0, err
    assert path.stat().st_size == size
