"""Path permissions where the user meets them: the real `apex-code` process against the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

SECRET = "TOPSECRET-4242"


def _tool_then_text(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": name, "arguments": arguments}], "usage": {"input": 10, "output": 5}},
        {"text": "done", "usage": {"input": 20, "output": 2}},
    ]


def _tool_result(stdout: str) -> dict[str, Any]:
    ends = [line for line in json_lines(stdout) if line["type"] == "tool_execution_end"]
    assert len(ends) == 1
    result: dict[str, Any] = ends[0]
    return result


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    return work, agent


def test_accept_edits_refuses_a_write_outside_the_project(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    target = tmp_path / "outside.txt"
    (work / "link").symlink_to(tmp_path)
    for path in (str(target), "../outside.txt", "link/outside.txt"):
        with ScriptedModelServer(_tool_then_text("write", {"path": path, "content": "pwned"})) as server:
            write_models(agent, server)
            proc = run_cli(["--mode", "json", "--permission-mode", "acceptEdits", "-p", "go"], work, agent)
        assert proc.returncode == 0, proc.stderr
        end = _tool_result(proc.stdout)
        assert end["isError"] is True
        assert "requires approval" in end["result"]["content"][0]["text"]
        assert not target.exists()
    # Inside the project the same mode writes without asking.
    with ScriptedModelServer(_tool_then_text("write", {"path": "inside.txt", "content": "ok"})) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "acceptEdits", "-p", "go"], work, agent)
    assert _tool_result(proc.stdout)["isError"] is False
    assert (work / "inside.txt").read_text() == "ok"


def test_grep_with_a_read_deny_rule_shows_no_secret_and_says_what_it_skipped(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (work / "secrets").mkdir()
    (work / "secrets" / "key.txt").write_text(f"password {SECRET}\n")
    (work / "notes.txt").write_text("password is in the vault\n")
    rules = [{"toolName": "read", "behavior": "deny", "ruleContent": "secrets/**"}]
    (agent / "permissions.json").write_text(json.dumps({"version": 1, "rules": rules}))
    with ScriptedModelServer(_tool_then_text("grep", {"pattern": "password"})) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "default", "--tools", "grep", "-p", "go"], work, agent)
        sent = json.dumps(server.requests)
    assert proc.returncode == 0, proc.stderr
    text = _tool_result(proc.stdout)["result"]["content"][0]["text"]
    assert (
        text
        == "notes.txt:1: password is in the vault\n\n[1 path skipped: reading them is denied by the permission rules]"
    )
    assert SECRET not in proc.stdout and SECRET not in sent


def test_untrusted_agents_md_linking_outside_is_not_sent_to_the_model(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (work / ".git").mkdir()
    (tmp_path / "private.txt").write_text("PRIVATE-" + SECRET)
    (work / "AGENTS.md").symlink_to(tmp_path / "private.txt")
    with ScriptedModelServer([{"text": "hi", "usage": {"input": 5, "output": 1}}]) as server:
        write_models(agent, server)
        proc = run_cli(["--permission-mode", "plan", "--no-approve", "-p", "hello"], work, agent)
        sent = json.dumps(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in sent
    assert "outside the project" in proc.stderr


def test_path_rules_hold_through_symlinks(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "src").mkdir()
    (work / "src" / "link").symlink_to(outside)
    (work / "secrets").mkdir()
    (work / "secrets" / "key.txt").write_text(SECRET)
    (work / "secretlink").symlink_to(work / "secrets")
    rules = [
        {"toolName": "write", "behavior": "allow", "ruleContent": "src/**"},
        {"toolName": "write", "behavior": "deny", "ruleContent": "secrets/**"},
        {"toolName": "read", "behavior": "deny", "ruleContent": "secrets/**"},
    ]
    (agent / "permissions.json").write_text(json.dumps({"version": 1, "rules": rules}))
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("write", {"path": "src/link/escaped.txt", "content": "x"}, "requires approval"),
        ("write", {"path": "secretlink/key.txt", "content": "overwritten"}, 'matching "secrets/**" is denied'),
        ("read", {"path": "secretlink/key.txt"}, 'matching "secrets/**" is denied'),
    ]
    for name, arguments, reason in calls:
        with ScriptedModelServer(_tool_then_text(name, arguments)) as server:
            write_models(agent, server)
            proc = run_cli(["--mode", "json", "--permission-mode", "default", "-p", "go"], work, agent)
            sent = json.dumps(server.requests)
        assert proc.returncode == 0, proc.stderr
        end = _tool_result(proc.stdout)
        assert end["isError"] is True and reason in end["result"]["content"][0]["text"]
        assert SECRET not in sent
    assert not (outside / "escaped.txt").exists()
    assert (work / "secrets" / "key.txt").read_text() == SECRET
    # Within the rules, the same mode writes.
    with ScriptedModelServer(_tool_then_text("write", {"path": "src/ok.txt", "content": "fine"})) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "default", "-p", "go"], work, agent)
    assert (work / "src" / "ok.txt").read_text() == "fine"
