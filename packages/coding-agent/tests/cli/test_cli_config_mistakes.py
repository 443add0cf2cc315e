"""Quiet configuration mistakes made loud (the real `apex-code`): a models.json that holds no providers, a corrupt
permissions.json, a bad auth.json entry for another provider, and a boolean extension flag before the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

READ_THEN_TEXT = [
    {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "usage": {"input": 9, "output": 3}},
    {"text": "done", "usage": {"input": 12, "output": 1}},
]


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    return work, agent


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "is empty"),
        ("  \n", "is empty"),
        ("{}", 'has no "providers" object'),
        ('{"local": {"baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "m"}]}}', 'has no "providers" object'),
    ],
    ids=["empty", "blank", "empty-object", "providers-missing"],
)
def test_models_json_without_providers_is_a_startup_warning(tmp_path: Path, content: str, problem: str) -> None:
    work, agent = _dirs(tmp_path)
    path = agent / "models.json"
    path.write_text(content)
    proc = run_cli(["--permission-mode", "default", "-p", "hi"], work, agent)
    lines = proc.stderr.splitlines()
    assert lines[0] == f"Warning: {path} {problem}; using the built-in models only"
    assert lines[1].startswith("Error: no model available.")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert path.read_text() == content


def test_corrupt_permissions_json_is_a_startup_warning_naming_the_file(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (work / "notes.txt").write_text("milk\n")
    path = agent / "permissions.json"
    path.write_text('{"version": 1, "rules": [')
    with ScriptedModelServer(READ_THEN_TEXT) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "bypassPermissions", "-p", "read it"], work, agent)
    warnings = [line for line in proc.stderr.splitlines() if str(path) in line]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Warning: could not load {path}: ")
    assert warnings[0].endswith("; every tool call is refused until it is fixed")
    # The run itself goes on; the gate refuses the call, as the warning said.
    assert proc.returncode == 0, proc.stderr
    result = next(line for line in json_lines(proc.stdout) if line["type"] == "tool_execution_end")
    assert result["isError"] is True
    assert path.read_text() == '{"version": 1, "rules": ['


def test_bad_auth_entry_of_another_provider_is_a_warning_not_a_failed_run(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    path = agent / "auth.json"
    content = json.dumps({"groq": {"type": "api_key", "key": 5}, "other": "not an object"})
    path.write_text(content)
    with ScriptedModelServer([{"text": "still works", "usage": {"input": 1, "output": 1}}]) as server:
        write_models(agent, server)
        proc = run_cli(["--permission-mode", "default", "-p", "hi"], work, agent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "still works\n"
    assert proc.stderr.splitlines() == [
        f'Warning: {path}: invalid credential for provider "groq" (ignored)',
        f'Warning: {path}: invalid credential for provider "other" (ignored)',
    ]
    assert path.read_text() == content


BOOLEAN_FLAG = """
import json, os

def extension(pi):
    pi.register_flag("fast", type="boolean", description="Go fast")

    @pi.on("session_start")
    def start(event, ctx):
        with open(os.environ["FLAG_LOG"], "a") as f:
            f.write(json.dumps(pi.get_flag("fast")) + "\\n")
"""


@pytest.mark.parametrize(
    ("argv", "flag", "prompt"),
    [
        (["-p", "--fast", "do the task"], True, "do the task"),
        (["--fast", "do the task", "-p"], True, "do the task"),
        (["-p", "--fast", "false", "do the task"], False, "do the task"),
        (["-p", "--fast=on", "do the task"], True, "do the task"),
    ],
    ids=["before-prompt", "prompt-then-p", "explicit-false", "inline"],
)
def test_boolean_extension_flag_leaves_the_prompt_alone(
    tmp_path: Path, argv: list[str], flag: bool, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, agent = _dirs(tmp_path)
    extension = work / "fast.py"
    extension.write_text(BOOLEAN_FLAG)
    log = tmp_path / "flag.log"
    monkeypatch.setenv("FLAG_LOG", str(log))
    with ScriptedModelServer([{"text": "ok", "usage": {"input": 1, "output": 1}}]) as server:
        write_models(agent, server)
        proc = run_cli(["-e", str(extension), "--permission-mode", "plan", *argv], work, agent)
        bodies = [request["body"] for request in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in log.read_text().splitlines()] == [flag]
    [body] = bodies
    user = [m for m in body["messages"] if m["role"] == "user"]
    assert user[-1]["content"] in (prompt, [{"type": "text", "text": prompt}])


def test_a_flag_nobody_registers_is_a_warning_naming_what_it_took(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([{"text": "ok", "usage": {"input": 1, "output": 1}}]) as server:
        write_models(agent, server)
        proc = run_cli(["--permission-mode", "plan", "-p", "first", "--fsat", "second", "--quiet"], work, agent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        'Warning: unknown option --fsat (no extension registers it); "second" was taken as its value',
        "Warning: unknown option --quiet (no extension registers it)",
    ]
