"""A lone UTF-16 surrogate (`"\\ud800"` in JSON: legal JSON, not encodable as UTF-8) from a client or a model is
written back as an escape, as `JSON.stringify` does: the output lines and the session file stay valid and keep the
value, and the session opens again. Real `apex-code` against the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import json_lines, run_cli, write_models
from test_cli_rpc import RpcProcess

from apex_ai.testing.scripted_server import ScriptedModelServer

BROKEN = "half an emoji: \ud83d!"


def _session_records(agent: Path) -> list[dict[str, object]]:
    files = sorted((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    return [json.loads(line) for line in files[0].read_bytes().decode("utf-8").splitlines()]


def test_json_mode_writes_a_reply_with_a_lone_surrogate(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    with ScriptedModelServer([{"text": BROKEN, "usage": {"input": 5, "output": 3}}]) as server:
        write_models(agent, server)
        result = run_cli(["--mode", "json", "--permission-mode", "default", "say it"], cwd, agent)
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert records[-1]["type"] == "result" and records[-1]["status"] == "completed"
    ends = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"]
    assert ends[-1]["message"]["content"][0]["text"] == BROKEN
    assert "\\ud83d" in result.stdout  # written as an escape, like JSON.stringify
    messages = [r["message"] for r in _session_records(agent) if r.get("type") == "message"]
    assert messages[-1]["content"][0]["text"] == BROKEN


def test_rpc_prompt_with_a_lone_surrogate_is_kept_in_the_session_which_opens_again(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    replies = [
        {"text": "noted", "usage": {"input": 5, "output": 1}},
        {"text": "again", "usage": {"input": 9, "output": 1}},
    ]
    with ScriptedModelServer(replies) as server:
        write_models(agent, server)
        rpc = RpcProcess(cwd, agent)
        rpc.send_raw(b'{"id":"p1","type":"prompt","message":"fix \\udc00 here"}\n')
        assert rpc.response("p1")["success"] is True
        rpc.until(lambda r: r.get("type") == "agent_end")
        state = rpc.response_to({"id": "s", "type": "get_state"})
        assert state["success"] is True
        code, _ = rpc.close()
        assert code == 0
        messages = [r["message"] for r in _session_records(agent) if r.get("type") == "message"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant"]
        assert messages[1]["content"][0]["text"] == "fix \udc00 here"
        again = run_cli(["--mode", "json", "--permission-mode", "default", "-c", "and now?"], cwd, agent)
    assert again.returncode == 0, again.stderr
    assert json_lines(again.stdout)[-1]["status"] == "completed"
