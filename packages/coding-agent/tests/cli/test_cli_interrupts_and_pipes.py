"""The real `apex-code` when the run is interrupted or its output has nowhere to go: never a traceback.

- Ctrl+C (SIGINT) in `-p` / `--mode json` ends the run as `aborted` (JSON mode still writes its envelope), exit 130.
- `--mode json | head -1`: the reader went away; the run stops quietly with 141 (128 + SIGPIPE, what `yes | head -1`
  reports for `yes`), nothing on stderr.
- stdout closed at start (`>&-`): one line on stderr, exit 1.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_helpers import CLI, env_for, run_pipeline, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

WORDS = " ".join(f"word{i}" for i in range(40))
SLOW = [{"text": WORDS, "usage": {"input": 1, "output": 1}, "delay_ms": 300}]
"""One word per SSE frame, 300 ms apart: a run that is still streaming when the test acts."""


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    return work, agent


def _start(args: list[str], work: Path, agent: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args],
        cwd=work,
        env=env_for(agent),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_request(server: ScriptedModelServer) -> None:
    """Synchronization, not a timing check: return once the model request is streaming."""
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.requests, "the CLI never sent its request"


def _session_entries(agent: Path) -> list[dict[str, object]]:
    [path] = (agent / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sigint_in_json_mode_ends_the_run_as_aborted_with_its_envelope(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(SLOW) as server:
        write_models(agent, server)
        proc = _start(["--mode", "json", "--permission-mode", "default", "-p", "count"], work, agent)
        assert proc.stdout is not None
        seen = ""
        while '"text_delta"' not in seen and (line := proc.stdout.readline()):
            seen += line
        assert '"text_delta"' in seen
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    lines = [json.loads(line) for line in (seen + rest).splitlines()]
    assert lines[-1] == {"type": "result", "status": "aborted"}
    end = next(line for line in lines if line["type"] == "agent_end")
    assert end["stopReason"] == "aborted"
    # The session keeps the interrupted reply, marked as aborted.
    assistant = [e for e in _session_entries(agent) if e["type"] == "message"][-1]
    assert assistant["message"]["stopReason"] == "aborted"  # type: ignore[index]


def test_sigint_in_print_mode_exits_130_without_a_traceback(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(SLOW) as server:
        write_models(agent, server)
        proc = _start(["--permission-mode", "default", "-p", "count"], work, agent)
        _wait_for_request(server)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert out == ""
    assert err.strip() == "Request was aborted"


def test_json_mode_into_head_stops_quietly_with_141(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(SLOW) as server:
        write_models(agent, server)
        proc = run_pipeline("apex-code --mode json --permission-mode default -p count | head -1", work, agent)
    first, status = proc.stdout.splitlines()
    assert json.loads(first)["type"] == "session"
    assert status == "exit=141"
    assert proc.stderr == ""
    # The run was stopped rather than streamed to the end for nobody.
    assistant = [e for e in _session_entries(agent) if e["type"] == "message"][-1]
    assert assistant["message"]["stopReason"] == "aborted"  # type: ignore[index]


def test_print_mode_into_a_closed_reader_stops_quietly(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([{"text": "answer", "usage": {"input": 1, "output": 1}, "wait_ms": 500}]) as server:
        write_models(agent, server)
        # `true` exits at once: the answer is written into a pipe nobody reads.
        proc = run_pipeline("apex-code --permission-mode default -p hi | true", work, agent)
    assert proc.stdout == "exit=141\n"
    assert proc.stderr == ""


def test_closed_stdout_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer([{"text": "never sent"}]) as server:
        write_models(agent, server)
        for command in ("apex-code --permission-mode default -p hi >&-", "apex-code --version >&-"):
            proc = run_pipeline(command, work, agent)
            assert proc.stdout == "exit=1\n", command
            assert proc.stderr == (
                "Error: standard output is closed; apex-code writes its output there (redirect it, e.g. >/dev/null)\n"
            )
        requests = len(server.requests)
    assert requests == 0
    assert not (agent / "sessions").exists()


def test_closed_stderr_or_stdin_leaves_the_run_and_its_session_intact(tmp_path: Path) -> None:
    """With fd 2 closed the next file opened would take it and receive every warning: it is put on /dev/null."""
    work, agent = _dirs(tmp_path)
    reply = {"text": "fine", "usage": {"input": 1, "output": 1}, "repeat": True}
    with ScriptedModelServer([reply]) as server:
        write_models(agent, server)
        (agent / "auth.json").write_text(json.dumps({"other": 5}))  # a start-up warning, written to stderr
        proc = run_pipeline("apex-code --permission-mode default -p hi 2>&-", work, agent)
        assert proc.stdout == "fine\nexit=0\n"
        proc = run_pipeline("apex-code --permission-mode default -p hi <&-", work, agent)
        assert proc.stdout == "fine\nexit=0\n"
    for path in (agent / "sessions").rglob("*.jsonl"):
        assert all(json.loads(line)["type"] for line in path.read_text().splitlines())


def test_stdout_that_cannot_be_written_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """`/dev/full` fails every write with ENOSPC: said once on stderr, no traceback; JSON mode stops before the run."""
    work, agent = _dirs(tmp_path)
    reply = {"text": "fine", "usage": {"input": 1, "output": 1}, "repeat": True}
    with ScriptedModelServer([reply]) as server:
        write_models(agent, server)
        json_mode = run_pipeline("apex-code --permission-mode default --mode json -p hi >/dev/full", work, agent)
        requests_after_json = len(server.requests)
        text_mode = run_pipeline("apex-code --permission-mode default -p hi >/dev/full", work, agent)
    for proc in (json_mode, text_mode):
        assert proc.stdout == "exit=1\n"
        assert proc.stderr == "Error: could not write to standard output: No space left on device\n"
    assert requests_after_json == 0


SLOW_SHUTDOWN = """
import asyncio, os

def extension(pi):
    @pi.on("session_shutdown")
    async def linger(event, ctx):
        open(os.environ["SHUTDOWN_MARK"], "w").close()
        await asyncio.sleep(120)
"""


def test_second_sigint_leaves_at_once(tmp_path: Path) -> None:
    """The first Ctrl+C waits for the run to wind down (here: an extension that lingers at shutdown); the second
    one does not."""
    work, agent = _dirs(tmp_path)
    extension = work / "linger.py"
    extension.write_text(SLOW_SHUTDOWN)
    mark = tmp_path / "shutdown-started"
    with ScriptedModelServer(SLOW) as server:
        write_models(agent, server)
        proc = subprocess.Popen(
            [*CLI, "-e", str(extension), "--permission-mode", "default", "-p", "count"],
            cwd=work,
            env={**env_for(agent), "SHUTDOWN_MARK": str(mark)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for_request(server)
        proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists() and proc.poll() is None
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err
