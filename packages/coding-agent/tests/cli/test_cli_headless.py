"""modes.md acceptance checks for the real `apex-code` process: print and JSON modes (checks 1-9)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_helpers import CLI, env_for, json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

TOOL_THEN_TEXT = [
    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hello"}}], "usage": {"input": 120, "output": 15}},
    {"text": "The command printed: hello", "usage": {"input": 150, "output": 8}},
]


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    return work, agent


def test_headless_run_without_permission_mode_fails_and_writes_no_session(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    proc = run_cli(["-p", "hi"], work, agent)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Error: Non-interactive sessions require an explicit --permission-mode.")
    assert "Valid modes: default, plan, acceptEdits, bypassPermissions, dontAsk." in proc.stderr
    assert not (agent / "sessions").exists()


def test_json_mode_stream_and_result_envelope(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(TOOL_THEN_TEXT) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "bypassPermissions", "-p", "Say hello"], work, agent)
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(work)
    assert lines[-1] == {"type": "result", "status": "completed"}
    types = [line["type"] for line in lines]
    assert types[1:3] == ["agent_start", "turn_start"]
    assert types[-3:] == ["agent_end", "agent_settled", "result"]
    assert "tool_execution_end" in types
    updates = [line for line in lines if line["type"] == "message_update"]
    assert updates and all(set(u) == {"type", "assistantMessageEvent"} for u in updates)
    assert all("partial" not in u["assistantMessageEvent"] for u in updates)
    tool_end = next(line for line in lines if line["type"] == "tool_execution_end")
    assert tool_end["result"]["content"][0]["text"] == "hello\n"
    # The session file holds the same conversation.
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    entries = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert entries[0]["type"] == "session"
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == [
        "system",  # the leading declaration of the prompt and tools
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]


def test_piped_stdin_joins_the_first_message_in_text_mode(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([{"text": "Short summary.", "usage": {"input": 10, "output": 3}}]) as server:
        write_models(agent, server, api="anthropic-messages")
        proc = run_cli(["--permission-mode", "plan", "summarize"], work, agent, stdin="data")
        body = server.requests[0]["body"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Short summary.\n"
    first_user = body["messages"][0]["content"][0]["text"]
    assert first_user == "datasummarize"


def test_provider_error_prints_to_stderr_and_exits_1(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (agent).mkdir()
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    scenario = [{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}, "repeat": True}]
    with ScriptedModelServer(scenario) as server:
        write_models(agent, server, api="anthropic-messages")
        text = run_cli(["--permission-mode", "default", "-p", "hi"], work, agent)
        as_json = run_cli(["--mode", "json", "--permission-mode", "default", "-p", "hi"], work, agent)
    assert text.returncode == 1 and text.stdout == ""
    assert text.stderr.startswith("529 ") and "overloaded_error" in text.stderr
    assert as_json.returncode == 1
    assert json_lines(as_json.stdout)[-1] == {"type": "result", "status": "error"}


def test_budget_exhausted_status_and_exit_code(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    (agent).mkdir()
    (agent / "settings.json").write_text(json.dumps({"runBudget": {"maxTurns": 1}}))
    always_tool = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}], "usage": {"input": 5, "output": 5},
         "repeat": True}
    ]  # fmt: skip
    with ScriptedModelServer(always_tool) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "bypassPermissions", "-p", "loop"], work, agent)
        requests = len(server.requests)
    assert proc.returncode == 1
    lines = json_lines(proc.stdout)
    assert lines[-1] == {"type": "result", "status": "budget-exhausted"}
    end = next(line for line in lines if line["type"] == "agent_end")
    assert end["stopReason"] == "budget-exhausted" and end["budget"]["limit"] == "maxTurns"
    assert requests == 1


def test_permission_default_blocks_bash_without_a_responder(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(TOOL_THEN_TEXT) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "--permission-mode", "default", "-p", "run it"], work, agent)
    assert proc.returncode == 0, proc.stderr
    result = next(line for line in json_lines(proc.stdout) if line["type"] == "tool_execution_end")
    assert result["isError"] is True
    assert result["result"]["content"][0]["text"] == (
        "bash requires approval, and no responder is available in this session."
    )


def test_sigterm_exits_143_without_result_line(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    slow = [{"text": "one two three four five six seven eight", "usage": {"input": 1, "output": 1}, "delay_ms": 400}]
    with ScriptedModelServer(slow) as server:
        write_models(agent, server)
        proc = subprocess.Popen(
            [*CLI, "--mode", "json", "--permission-mode", "default", "-p", "hi"],
            cwd=work,
            env=env_for(agent),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        seen = ""
        while '"message_update"' not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert '"type":"result"' not in seen + rest


def test_argument_errors(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    unknown = run_cli(["-zz"], work, agent)
    assert unknown.returncode == 1 and "Error: Unknown option: -zz" in unknown.stderr
    tui_mode = run_cli(["--tui-mode"], work, agent)
    assert tui_mode.returncode == 1 and "--tui-mode requires regular or fullscreen" in tui_mode.stderr
    rpc_file = run_cli(["--mode", "rpc", "--permission-mode", "default", "@x.md"], work, agent)
    assert rpc_file.returncode == 1 and "@file arguments are not supported in RPC mode" in rpc_file.stderr


def test_no_model_is_a_clear_error(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    proc = run_cli(["--permission-mode", "default", "-p", "hi"], work, agent)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Error: no model available.")
    assert "models.json" in proc.stderr
