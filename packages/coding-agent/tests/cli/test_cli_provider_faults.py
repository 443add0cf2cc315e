"""The real `apex-code -p` against servers that fail: retries are announced on stderr, the final error names
the server, silence ends with a retry, and a server's retry-after decides the wait."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

APIS = ["anthropic-messages", "openai-completions"]
PRINT = ["--permission-mode", "dontAsk", "-p", "Say hello"]
RATE_LIMITED: dict[str, Any] = {"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}}


def _dirs(tmp_path: Path, settings: dict[str, Any]) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps(settings))
    return work, agent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _retry_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Retrying")]


@pytest.mark.parametrize("api", APIS)
def test_a_dead_server_prints_each_retry_and_names_the_server_in_the_final_error(tmp_path: Path, api: str) -> None:
    work, agent = _dirs(tmp_path, {"retry": {"maxRetries": 2, "baseDelayMs": 50}})
    port = _free_port()
    url = f"http://127.0.0.1:{port}" + ("" if api == "anthropic-messages" else "/v1")
    models = {"providers": {"local": {"baseUrl": url, "api": api, "apiKey": "k", "models": [{"id": "fake-model"}]}}}
    (agent / "models.json").write_text(json.dumps(models))

    proc = run_cli(PRINT, work, agent)

    assert proc.returncode == 1
    assert proc.stdout == ""
    reason = rf"Connection error \(127\.0\.0\.1:{port}\): \S.*"
    lines = _retry_lines(proc.stderr)
    assert len(lines) == 2, proc.stderr
    assert re.fullmatch(rf"Retrying \(1/2\) in 0\.05s: {reason}", lines[0])
    assert re.fullmatch(rf"Retrying \(2/2\) in 0\.1s: {reason}", lines[1])
    assert re.fullmatch(reason, proc.stderr.splitlines()[-1])


@pytest.mark.parametrize("api", APIS)
def test_a_silent_server_times_out_then_the_retry_succeeds(tmp_path: Path, api: str) -> None:
    # 2 s, not less: on a loaded machine the retried reply's first chunk must not count as a silence too.
    work, agent = _dirs(tmp_path, {"httpIdleTimeoutMs": 2000, "retry": {"baseDelayMs": 50}})
    # Keep-alives every 50 ms, but no content: only content restarts the idle clock.
    stalled = {"text": "never finished", "stall_after_chunks": 4, "stall_ms": 30000, "keepalive_ms": 50}
    with ScriptedModelServer([stalled, {"text": "Recovered."}]) as server:
        write_models(agent, server, api=api)
        proc = run_cli(PRINT, work, agent)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Recovered.\n"
    assert _retry_lines(proc.stderr) == [
        f"Retrying (1/3) in 0.05s: Request timed out: no data from 127.0.0.1:{server.port} for 2 s"
    ]
    assert [r["reply_index"] for r in server.requests] == [0, 1]


def test_the_retry_waits_as_long_as_retry_after_asks(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path, {"retry": {"baseDelayMs": 50}})
    with ScriptedModelServer([{**RATE_LIMITED, "retry_after": 1}, {"text": "Hello."}]) as server:
        write_models(agent, server)
        proc = run_cli(PRINT, work, agent)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello.\n"
    [line] = _retry_lines(proc.stderr)
    assert line.startswith("Retrying (1/3) in 1s: 429 ")


def test_a_retry_after_above_max_delay_fails_at_once(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path, {"retry": {"baseDelayMs": 50, "maxDelayMs": 1000}})
    with ScriptedModelServer([{**RATE_LIMITED, "retry_after": 2, "repeat": True}]) as server:
        write_models(agent, server, api="anthropic-messages")
        proc = run_cli(PRINT, work, agent)

    assert proc.returncode == 1
    assert _retry_lines(proc.stderr) == []
    assert proc.stderr.splitlines()[-1].startswith("Server requested 2s retry delay (max: 1s). 429 ")
    assert len(server.requests) == 1
