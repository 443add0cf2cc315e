"""RPC control commands during a `yes` flood through the `bash` command (the real `apex-code --mode rpc` process).

For a client that reads as fast as it can and for one that reads about 30 MB/s, prints the latency of `get_state`
and of `abort_bash` (from writing the line to reading the response) with the MB of output read in between, then how
long the server takes to exit when a client stops reading and closes stdin (bounded by the output stall time).
Run with the workspace's python: `uv run python benchmarks/bench_rpc_flood.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "apex_coding_agent.cli", "--mode", "rpc", "--permission-mode", "bypassPermissions"]
FLOOD = "yes | head -c 2000000000"
MB = 1024 * 1024


def _start(root: Path) -> subprocess.Popen[bytes]:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    provider = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k"}
    models = {"providers": {"local": {**provider, "models": [{"id": "fake-model"}]}}}
    (agent / "models.json").write_text(json.dumps(models))
    env = {**os.environ, "APEX_CODE_CODING_AGENT_DIR": str(agent), "TMPDIR": str(root)}
    return subprocess.Popen(CLI, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _send(proc: subprocess.Popen[bytes], record: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(record).encode() + b"\n")
    proc.stdin.flush()


def _flood(root: Path, pace: float) -> None:
    proc = _start(root)
    assert proc.stdout is not None
    _send(proc, {"id": "b", "type": "bash", "command": FLOOD})
    read = 0
    marks: dict[str, tuple[float, int]] = {}
    results: dict[str, tuple[float, float]] = {}
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        read += len(line)
        record = json.loads(line)
        if pace:
            time.sleep(pace)
        if "s" not in marks and read > 20 * MB:
            marks["s"] = (time.perf_counter(), read)
            _send(proc, {"id": "s", "type": "get_state"})
        if record.get("type") != "response":
            continue
        started, at = marks.get(record["id"], (0.0, 0))
        results[record["id"]] = ((time.perf_counter() - started) * 1000, (read - at) / MB)
        if record["id"] == "s":
            marks["a"] = (time.perf_counter(), read)
            _send(proc, {"id": "a", "type": "abort_bash"})
        if record["id"] == "b":
            break
    assert proc.stdin is not None
    proc.stdin.close()
    proc.stdout.read()
    proc.wait()
    label = "full speed" if not pace else f"paced ({pace * 1000:.0f} ms per 64 KB record)"
    for key, name in (("s", "get_state"), ("a", "abort_bash")):
        ms, mb = results[key]
        print(f"{label:38} {name:10} {ms:8.1f} ms  {mb:6.2f} MB read meanwhile")
    print(f"{label:38} total read {read / MB:8.1f} MB")


def _stop_reading(root: Path) -> None:
    proc = _start(root)
    _send(proc, {"id": "b", "type": "bash", "command": FLOOD})
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()  # the flood has begun; from here on nothing is read
    time.sleep(1.0)
    started = time.perf_counter()
    proc.stdin.close()
    proc.wait(timeout=60)
    print(f"{'client stopped reading, closed stdin':38} exit after {time.perf_counter() - started:6.2f} s")
    proc.stdout.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _flood(Path(tmp), 0.0)
        _flood(Path(tmp), 0.002)
        _stop_reading(Path(tmp))


if __name__ == "__main__":
    main()
