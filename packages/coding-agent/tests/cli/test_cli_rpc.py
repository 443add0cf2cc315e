"""modes.md RPC acceptance checks 10-14 and 16 against the real `apex-code --mode rpc` process and a scripted
model server (issue 5 asks for subprocess tests; the in-process RPC tests cover the same commands in depth)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CLI, env_for, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

STREAMING_ERROR = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


class RpcProcess:
    """`apex-code --mode rpc` with byte-level stdin (so `\\r\\n` and raw lines can be sent) and JSON records out."""

    def __init__(self, cwd: Path, agent: Path) -> None:
        self.proc = subprocess.Popen(
            [*CLI, "--mode", "rpc", "--permission-mode", "bypassPermissions"],
            cwd=cwd,
            env=env_for(agent),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.seen: list[dict[str, Any]] = []

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, record: object) -> None:
        self.send_raw(json.dumps(record, ensure_ascii=False).encode() + b"\n")

    def until(self, predicate: Any) -> list[dict[str, Any]]:  # Any: a callable over one record
        """Records read up to and including the first one matching `predicate`."""
        assert self.proc.stdout is not None
        out: list[dict[str, Any]] = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"rpc ended early; stderr: {self.proc.stderr.read() if self.proc.stderr else b''!r}"
            assert line.endswith(b"\n")
            record: dict[str, Any] = json.loads(line)
            self.seen.append(record)
            out.append(record)
            if predicate(record):
                return out

    def response(self, id: object) -> dict[str, Any]:
        return self.until(lambda r: r.get("type") == "response" and r.get("id") == id)[-1]

    def response_to(self, record: dict[str, Any]) -> dict[str, Any]:
        self.send(record)
        return self.response(record["id"])

    def next_record(self) -> dict[str, Any]:
        return self.until(lambda r: True)[-1]

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code, rest


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions"])
def test_rpc_checks_against_the_real_process(tmp_path: Path, api: str) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    scenario = [
        {"text": "first reply with several words in it", "usage": {"input": 10, "output": 5}, "delay_ms": 150},
        {"text": "second reply", "usage": {"input": 20, "output": 3}},
    ]
    with ScriptedModelServer(scenario) as server:
        write_models(agent, server, api=api)
        rpc = RpcProcess(work, agent)
        try:
            # Check 10 + 11: U+2028 inside a string, CRLF framing; the response precedes agent_start.
            line = json.dumps({"id": "r1", "type": "prompt", "message": "a\u2028b"}, ensure_ascii=False)
            rpc.send_raw(line.encode() + b"\r\n")
            first = rpc.next_record()
            assert first == {"id": "r1", "type": "response", "command": "prompt", "success": True}
            rpc.until(lambda r: r["type"] == "message_update")
            rpc.send({"id": "r2", "type": "prompt", "message": "again"})
            busy = rpc.response("r2")
            assert busy["success"] is False and busy["error"] == STREAMING_ERROR
            rpc.until(lambda r: r["type"] == "agent_settled")
            rpc.send({"id": "r3", "type": "prompt", "message": "second"})
            rpc.until(lambda r: r["type"] == "agent_settled")

            # Check 12: entries strictly after the second entry, and an unknown `since`.
            everything = rpc.response_to({"id": "e0", "type": "get_entries"})["data"]
            ids = [entry["id"] for entry in everything["entries"]]
            since = rpc.response_to({"id": "e1", "type": "get_entries", "since": ids[1]})["data"]
            assert [entry["id"] for entry in since["entries"]] == ids[2:]
            assert since["leafId"] == ids[-1] == everything["leafId"]
            unknown = rpc.response_to({"id": "e2", "type": "get_entries", "since": "nope0000"})
            assert unknown["success"] is False and unknown["error"] == "Entry not found: nope0000"

            # Check 13: garbage, an unknown command (no id echoed), non-objects; the server keeps answering.
            for raw in (b"{not json", b"[1]", b"null", b"3"):
                rpc.send_raw(raw + b"\n")
                failure = rpc.next_record()
                assert failure["command"] == "parse" and failure["success"] is False, raw
                assert failure["error"].startswith("Failed to parse command: "), raw
                assert "id" not in failure
            rpc.send({"id": "x", "type": "nope"})
            assert rpc.next_record() == {
                "type": "response",
                "command": "nope",
                "success": False,
                "error": "Unknown command: nope",
            }

            # Check 14: bash output streamed with the request id, exact output.
            rpc.send({"id": "b", "type": "bash", "command": "printf 'a\\nb\\n'"})
            records = rpc.until(lambda r: r.get("id") == "b" and r["type"] == "response")
            updates = [r for r in records if r["type"] == "bash_execution_update"]
            assert updates and all(u["id"] == "b" for u in updates)
            bash = records[-1]["data"]
            assert (bash["output"], bash["exitCode"], bash["truncated"]) == ("a\nb\n", 0, False)

            state = rpc.response_to({"id": "s", "type": "get_state"})
            # Two exchanges plus the bashExecution message, which joins the context.
            assert state["success"] is True and state["data"]["messageCount"] == 5
        finally:
            # Check 16: EOF ends the process cleanly.
            code, rest = rpc.close()
        first_request = server.requests[0]["body"]
    assert code == 0, rest
    assert rest == b""
    assert not any(r["type"] == "session" for r in rpc.seen)  # RPC prints no session header
    user = next(m for m in first_request["messages"] if m["role"] == "user")
    assert "a\u2028b" in json.dumps(user, ensure_ascii=False)
