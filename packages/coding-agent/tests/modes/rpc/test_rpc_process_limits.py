"""The real `apex-code --mode rpc` under floods and bad input: a `yes` flood through `bash`, a client that stops
reading, an oversized line, a very long session tree, and the output logs of user commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from apex_coding_agent.modes.rpc.jsonl import MAX_LINE_BYTES

CLI = [sys.executable, "-m", "apex_coding_agent.cli", "--mode", "rpc", "--permission-mode", "bypassPermissions"]
MB = 1024 * 1024


class RpcProcess:
    """The server process with JSON records read from its stdout (and how many bytes they took)."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        agent, work = tmp_path / "agent", tmp_path / "work"
        self.temp = tmp_path / "tmp"
        for folder in (agent, work, self.temp):
            folder.mkdir(exist_ok=True)
        # A model entry is needed to start; nothing here prompts it, so nothing listens at its address.
        provider = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k"}
        models = {"providers": {"local": {**provider, "models": [{"id": "fake-model"}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        env = {k: v for k, v in os.environ.items() if not k.startswith("APEX_CODE_") and not k.endswith("_API_KEY")}
        env.update(APEX_CODE_CODING_AGENT_DIR=str(agent), TMPDIR=str(self.temp))
        self.proc = subprocess.Popen(
            [*CLI, *args], cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.read_bytes = 0

    def send(self, record: object) -> None:
        self.send_raw(json.dumps(record).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next_record(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), "the server ended its output early"
        self.read_bytes += len(line)
        record: dict[str, Any] = json.loads(line)
        return record

    def until(self, predicate: Callable[[dict[str, Any]], bool], *, pace: float = 0.0) -> dict[str, Any]:
        while True:
            record = self.next_record()
            if predicate(record):
                return record
            if pace:
                time.sleep(pace)  # a client that reads slower than `yes` writes

    def response(self, id: str, *, pace: float = 0.0) -> dict[str, Any]:
        return self.until(lambda r: r.get("type") == "response" and r.get("id") == id, pace=pace)

    def close(self, timeout: float = 30) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.stdout.read()
        code = self.proc.wait(timeout)
        self.proc.stdout.close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def server(tmp_path: Path) -> Any:  # Any: a factory of started servers
    started: list[RpcProcess] = []

    def start(*args: str) -> RpcProcess:
        started.append(RpcProcess(tmp_path, *args))
        return started[-1]

    yield start
    for process in started:
        process.kill()


def group_gone(pgid: int) -> bool:
    """Whether the process group is empty, allowing init a moment to reap the killed shell's children."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def test_control_commands_answer_during_a_yes_flood(server: Any, tmp_path: Path) -> None:
    rpc: RpcProcess = server()
    rpc.send({"id": "b", "type": "bash", "command": "echo $$ > shell.pid; yes | head -c 2000000000"})
    rpc.until(lambda r: r.get("type") == "bash_execution_update", pace=0.002)
    pgid = int((tmp_path / "work" / "shell.pid").read_text())
    rpc.until(lambda r: rpc.read_bytes > 4 * MB, pace=0.002)

    # Answers come after what was already queued for this client, which stays small: the command's output is read
    # at the pace the client reads it, so a control command waits behind about a megabyte, not a flood.
    before = rpc.read_bytes
    rpc.send({"id": "s", "type": "get_state"})
    state = rpc.response("s", pace=0.002)
    assert state["success"] is True and state["data"]["isStreaming"] is False
    assert rpc.read_bytes - before < 4 * MB

    before = rpc.read_bytes
    rpc.send({"id": "a", "type": "abort_bash"})
    assert rpc.response("a", pace=0.002)["success"] is True
    result = rpc.response("b", pace=0.002)
    assert rpc.read_bytes - before < 4 * MB
    assert result["data"]["cancelled"] is True
    assert group_gone(pgid)
    assert rpc.read_bytes < 32 * MB  # of the 2 GB the command would have written
    assert rpc.close() == 0


def test_a_client_that_stops_reading_and_closes_stdin_ends_the_server(server: Any, tmp_path: Path) -> None:
    rpc: RpcProcess = server()
    rpc.send({"id": "b", "type": "bash", "command": "echo $$ > shell.pid; yes | head -c 2000000000"})
    rpc.next_record()
    pid_file = tmp_path / "work" / "shell.pid"
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.5)  # the server's output pipe is full by now, and nobody reads it
    assert rpc.proc.stdin is not None
    rpc.proc.stdin.close()
    # The server sees the EOF although its output is stuck, stops the command, gives the client a bounded
    # time to read what is queued, and exits.
    assert rpc.proc.wait(timeout=30) == 0
    assert group_gone(int(pid_file.read_text()))


def test_an_oversized_line_is_refused_and_the_next_command_answered(server: Any) -> None:
    rpc: RpcProcess = server()
    rpc.send({"id": "1", "type": "get_state"})
    assert rpc.response("1")["success"] is True
    status = Path(f"/proc/{rpc.proc.pid}/status")
    baseline = _peak_rss(status)
    head = b'{"id":"big","type":"get_state","pad":"'
    rpc.send_raw(head + b"x" * (MAX_LINE_BYTES + 1 - len(head) - 2) + b'"}\n')
    rpc.send({"id": "2", "type": "get_state"})
    refused = rpc.next_record()
    assert refused == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": f"Failed to parse command: line of {MAX_LINE_BYTES + 1} bytes exceeds the limit of "
        f"{MAX_LINE_BYTES} bytes",
    }
    assert rpc.response("2")["success"] is True
    # The refused line was counted, not kept: about one cap of buffer at most, never copies of it.
    assert _peak_rss(status) - baseline < 1.5 * MAX_LINE_BYTES
    assert rpc.close() == 0


def _peak_rss(status: Path) -> int:
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def write_chain_session(path: Path, cwd: Path, count: int) -> list[str]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    header = {"type": "session", "version": 3, "id": "0190aaaa-0000-7000-8000-000000000001"}
    header.update(timestamp=start.isoformat().replace("+00:00", "Z"), cwd=str(cwd))
    ids = [f"{i:08x}" for i in range(1, count + 1)]
    with path.open("w") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        parent = None
        for i, entry_id in enumerate(ids):
            stamp = (start + timedelta(milliseconds=i)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            entry = {"type": "session_info", "id": entry_id, "parentId": parent, "timestamp": stamp, "name": f"n{i}"}
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")
            parent = entry_id
    return ids


def test_get_tree_of_a_90000_entry_chain_parses_with_json(server: Any, tmp_path: Path) -> None:
    session = tmp_path / "chain.jsonl"
    ids = write_chain_session(session, tmp_path / "work", 90_000)
    rpc: RpcProcess = server("--session", str(session))
    rpc.send({"id": "t", "type": "get_tree"})
    rpc.send({"id": "s", "type": "get_state"})
    # Encoding 90,000 nodes takes a while, but not the whole server's attention: the state comes back first.
    assert rpc.until(lambda r: r.get("type") == "response")["id"] == "s"
    response = rpc.response("t")  # json.loads with the default recursion limit
    data = response["data"]
    # Each item of the list nests at most MAX_TREE_DEPTH levels; hung under the entry its parentId names, the
    # items give back the one chain.
    seen: list[str] = []
    for item in data["tree"]:
        assert item["entry"]["parentId"] == (seen[-1] if seen else None)
        node = item
        while True:
            seen.append(node["entry"]["id"])
            if not node["children"]:
                break
            (node,) = node["children"]
    # Opening the session appends the model and thinking level it runs with.
    assert seen[: len(ids)] == ids and data["leafId"] == seen[-1]
    assert rpc.close() == 0


def test_user_command_logs_are_capped_and_removed_when_the_server_ends(server: Any) -> None:
    rpc: RpcProcess = server()
    rpc.send({"id": "b", "type": "bash", "command": "yes | head -c 40000000"})
    result = rpc.response("b")["data"]
    log = Path(result["fullOutputPath"])
    assert log.parent == rpc.temp
    data = log.read_bytes()
    assert len(data) < 20 * MB  # of 40 MB
    head, marker, tail = data.partition(b"\n\n[... ")
    assert head.startswith(b"y\ny\n") and marker
    omitted, _, tail = tail.partition(b" bytes omitted ...]\n\n")
    assert len(head) + int(omitted) + len(tail) == 40_000_000
    assert set(tail) == {ord("y"), ord("\n")}
    assert rpc.close() == 0
    assert not log.exists()


def test_user_command_logs_are_removed_on_sigterm(server: Any) -> None:
    rpc: RpcProcess = server()
    rpc.send({"id": "b", "type": "bash", "command": "seq 1 100000"})
    log = Path(rpc.response("b")["data"]["fullOutputPath"])
    assert log.exists()
    rpc.proc.send_signal(signal.SIGTERM)
    assert rpc.proc.wait(timeout=30) == 143
    assert not log.exists()
