"""Command output logs: head and tail kept around a marker, bounded while written, removed at the end."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.tools import BashTool, BashToolOptions
from apex_coding_agent.tools.output_accumulator import CappedLog, remove_output_logs

MARKER = re.compile(rb"\n\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n\n")


def split_log(data: bytes) -> tuple[bytes, int, bytes]:
    """(head, omitted byte count, tail) of a log; no marker means nothing was omitted."""
    match = MARKER.search(data)
    if match is None:
        return data, 0, b""
    return data[: match.start()], int(match.group(1)), data[match.end() :]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=300), max_size=40), st.integers(1, 100), st.integers(4, 100))
def test_the_log_keeps_head_and_tail_of_what_was_written(chunks: list[bytes], head: int, tail: int) -> None:
    path = str(Path(os.environ.get("TMPDIR", "/tmp")) / f"capped-{os.getpid()}.log")
    log = CappedLog(path, head, tail)
    written = b""
    for chunk in chunks:
        log.write(chunk)
        written += chunk
        assert os.path.getsize(path) <= head + 2 * tail + 64  # bounded while the command runs
    log.close()
    data = Path(path).read_bytes()
    kept_head, omitted, kept_tail = split_log(data)
    if not omitted:
        assert data == written
    assert kept_head == (written[:head] if omitted else written)
    assert len(kept_head) + omitted + len(kept_tail) == len(written)
    assert written.endswith(kept_tail)
    if omitted:
        assert tail - 3 <= len(kept_tail) <= tail  # up to 3 bytes to start on a character boundary
    remove_output_logs()
    assert not os.path.exists(path)


def test_a_multibyte_tail_starts_on_a_character(tmp_path: Path) -> None:
    log = CappedLog(str(tmp_path / "x.log"), 2, 9)
    log.write("é".encode() * 100)
    log.close()
    _, omitted, kept_tail = split_log((tmp_path / "x.log").read_bytes())
    # The last 9 bytes begin inside a character: the tail starts after it.
    assert kept_tail.decode() == "é" * 4 and omitted == 200 - 2 - 8
    remove_output_logs()


async def test_bash_tool_log_is_capped_and_removed(tmp_path: Path) -> None:
    tool = BashTool(str(tmp_path), BashToolOptions(temp_dir=str(tmp_path), log_head_bytes=1000, log_tail_bytes=2000))
    result = await tool.execute("c", {"command": "seq 1 200000"}, None, None)
    path = Path(result.details["fullOutputPath"])
    head, omitted, tail = split_log(path.read_bytes())
    expected = "".join(f"{i}\n" for i in range(1, 200001)).encode()
    assert head == expected[:1000] and expected.endswith(tail) and len(tail) == 2000
    assert len(head) + omitted + len(tail) == len(expected)
    remove_output_logs()
    assert not path.exists()


def test_logs_are_removed_when_print_mode_gets_sigterm(tmp_path: Path) -> None:
    agent, work, temp = tmp_path / "agent", tmp_path / "work", tmp_path / "tmp"
    for folder in (agent, work, temp):
        folder.mkdir()
    call = {"name": "bash", "arguments": {"command": "seq 1 100000; sleep 60"}}
    with ScriptedModelServer([{"tool_calls": [call]}, {"text": "done"}]) as server:
        provider = {"baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "k"}
        models = {"providers": {"local": {**provider, "models": [{"id": "fake-model"}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        env = {k: v for k, v in os.environ.items() if not k.startswith("APEX_CODE_") and not k.endswith("_API_KEY")}
        env.update(APEX_CODE_CODING_AGENT_DIR=str(agent), TMPDIR=str(temp))
        argv = [sys.executable, "-m", "apex_coding_agent.cli", "-p", "go", "--permission-mode", "bypassPermissions"]
        proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not list(temp.glob("apex-code-bash-*.log")):  # the command's output outgrew the limits
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 143
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert list(temp.glob("apex-code-bash-*.log")) == []
