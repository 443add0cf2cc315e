"""The real `apex-code` in JSON mode as scripts use it: the seed's `jq` pipelines through a real shell, and SIGHUP.

Covers modes.md check 8 (SIGHUP -> 129, no result line) and the seed's two examples
(`... 2>/dev/null | jq -c 'select(.type == "message_end")'` and `... | jq -r 'select(.type == "result") | .status'`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_helpers import CLI, env_for, run_pipeline, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

READ_THEN_TEXT = [
    {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "usage": {"input": 90, "output": 12}},
    {"text": "There is one file: notes.txt", "usage": {"input": 120, "output": 9}},
]
MESSAGE_END = "jq -c 'select(.type == \"message_end\")'"
RESULT_STATUS = "jq -r 'select(.type == \"result\") | .status'"


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    (work / "notes.txt").write_text("remember the milk\n")
    return work, agent


def test_seed_message_end_pipeline(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(READ_THEN_TEXT) as server:
        write_models(agent, server)
        # The seed's line plus the explicit permission mode every non-interactive Apex run needs (modes.md §3).
        proc = run_pipeline(
            f'apex-code --mode json --permission-mode plan "List files" 2>/dev/null | {MESSAGE_END}', work, agent
        )
    assert proc.returncode == 0, proc.stderr
    *lines, status = proc.stdout.splitlines()
    assert status == "exit=0"
    records = [json.loads(line) for line in lines]
    # `jq -c` prints each record compactly on one line; only message_end records pass the filter.
    assert lines == [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]
    assert {r["type"] for r in records} == {"message_end"}
    # The new session's leading system message (prompt and tools) comes first.
    assert [r["message"]["role"] for r in records] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert "read" in [tool["name"] for tool in records[0]["message"]["toolsAdded"]]
    assert records[1]["message"]["content"] == [{"type": "text", "text": "List files"}]
    assert records[3]["message"]["toolName"] == "read" and records[3]["message"]["isError"] is False
    assert "remember the milk" in records[3]["message"]["content"][0]["text"]
    assert records[4]["message"]["content"] == [{"type": "text", "text": "There is one file: notes.txt"}]
    assert records[4]["message"]["stopReason"] == "stop"


def test_seed_message_end_pipeline_verbatim_hits_the_permission_gate(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(READ_THEN_TEXT) as server:
        write_models(agent, server)
        proc = run_pipeline(f'apex-code --mode json "List files" 2>/dev/null | {MESSAGE_END}', work, agent)
        requests = len(server.requests)
    # Without --permission-mode the run fails before any output: jq sees nothing, apex-code exits 1.
    assert proc.stdout == "exit=1\n" and proc.stderr == ""
    assert requests == 0


def test_seed_result_status_pipeline(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(READ_THEN_TEXT) as server:
        write_models(agent, server)
        command = 'apex-code --mode json --permission-mode plan --print "Summarize the repository"'
        proc = run_pipeline(f"{command} \\\n  | {RESULT_STATUS}", work, agent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "completed\nexit=0\n"


def test_result_status_pipeline_reports_a_provider_error(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    failing = [{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}, "repeat": True}]
    with ScriptedModelServer(failing) as server:
        write_models(agent, server, api="anthropic-messages")
        command = 'apex-code --mode json --permission-mode plan --print "Summarize the repository"'
        proc = run_pipeline(f"{command} 2>/dev/null | {RESULT_STATUS}", work, agent)
    assert proc.stdout == "error\nexit=1\n"


def test_sighup_exits_129_without_result_line(tmp_path: Path) -> None:
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
        assert '"message_update"' in seen
        proc.send_signal(signal.SIGHUP)
        rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 129
    assert '"type":"result"' not in seen + rest
    # Everything written before the signal is whole JSON lines.
    assert all(json.loads(line)["type"] for line in (seen + rest).splitlines())
