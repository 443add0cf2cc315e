"""sessions.md §8 for the CLI: `--session` by id prefix, flag conflicts, id format (checks 16-17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.session import SessionArgumentError, choose_session


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    return work, agent


def test_session_prefix_resolves_a_local_session_and_continues_it(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    reply = {"text": "ok", "usage": {"input": 3, "output": 1}}
    with ScriptedModelServer([reply, reply]) as server:
        write_models(agent, server)
        first = run_cli(["--mode", "json", "--permission-mode", "plan", "-p", "one"], work, agent)
        session_id = json_lines(first.stdout)[0]["id"]
        second = run_cli(
            ["--mode", "json", "--permission-mode", "plan", "--session", session_id[:13], "-p", "two"], work, agent
        )
    assert second.returncode == 0, second.stderr
    assert json_lines(second.stdout)[0]["id"] == session_id
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    users = [
        json.loads(line)["message"]["content"][0]["text"]
        for line in files[0].read_text().splitlines()
        if '"role":"user"' in line
    ]
    assert users == ["one", "two"]


def test_unknown_session_prefix_exits_1(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    proc = run_cli(["--permission-mode", "plan", "--session", "nope", "-p", "hi"], work, agent)
    assert proc.returncode == 1
    assert "No session found matching 'nope'" in proc.stderr


def test_conflicting_flags_and_bad_session_id_exit_1(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    conflict = run_cli(["--permission-mode", "plan", "--fork", "x", "--continue", "-p", "hi"], work, agent)
    assert conflict.returncode == 1 and "--fork cannot be combined" in conflict.stderr
    bad_id = run_cli(["--permission-mode", "plan", "--session-id", "bad..id-", "-p", "hi"], work, agent)
    assert bad_id.returncode == 1
    assert "Session id must be non-empty, contain only alphanumeric characters" in bad_id.stderr
    assert "Traceback" not in bad_id.stderr


def test_choose_session_reports_an_unknown_id_in_process(tmp_path: Path) -> None:
    with pytest.raises(SessionArgumentError, match="No session found matching 'zzz'"):
        choose_session(parse_args(["--session", "zzz"]), str(tmp_path), tmp_path / "sessions")


def test_corrupt_auth_json_is_a_clear_error(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    agent.mkdir()
    (agent / "auth.json").write_text("{oops")
    proc = run_cli(["--list-models"], work, agent)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Error: could not read ") and "auth.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_corrupt_session_line_is_a_warning_on_stderr_and_the_run_goes_on(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    reply = {"text": "ok", "usage": {"input": 3, "output": 1}}
    with ScriptedModelServer([reply, reply]) as server:
        write_models(agent, server)
        first = run_cli(["--mode", "json", "--permission-mode", "plan", "-p", "one"], work, agent)
        assert first.returncode == 0, first.stderr
        [path] = list((agent / "sessions").rglob("*.jsonl"))
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join([*lines[:2], "{torn write\n", *lines[2:]]))
        second = run_cli(
            ["--mode", "json", "--permission-mode", "plan", "--session", str(path), "-p", "two"], work, agent
        )
    assert second.returncode == 0, second.stderr
    warnings = [line for line in second.stderr.splitlines() if line.startswith("Warning: skipping session line")]
    assert len(warnings) == 1 and f"{path}:3: not valid JSON" in warnings[0]
    assert "{torn write" in path.read_text()  # reported and skipped, never dropped from the file
