"""Start-up speed of the terminal app: launch of `apex-code` in tmux -> first paint of the editor (ms).

Starts the real `apex-code` (interactive mode) in a detached tmux session with a temp agent dir whose
models.json points at an in-process `ScriptedModelServer`, and polls `tmux capture-pane` until the editor's
horizontal rules and the footer's model id are on screen. Polling every 5 ms bounds the measurement error.
Prints the median and min over the runs. Needs tmux.

Run with the workspace's python: `uv run python benchmarks/bench_tui_startup.py [--runs N]` (default 5).
One unmeasured warm-up run comes first so bytecode for the workspace's sources exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from apex_ai.scripted_server import ScriptedModelServer

RULE = "─" * 60
MODEL_ID = "bench-model"
TIMEOUT_S = 30.0


def _command() -> list[str]:
    script = Path(sys.executable).parent / "apex-code"
    if script.exists():
        return [str(script)]
    found = shutil.which("apex-code")
    return [found] if found else [sys.executable, "-m", "apex_coding_agent.cli"]


def _env(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TMUX", None)
    env.update(APEX_CODE_CODING_AGENT_DIR=str(agent_dir), APEX_CODE_OFFLINE="1", TERM="xterm-256color")
    return env


def _capture(tmux: str, name: str) -> str:
    return subprocess.run([tmux, "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def one_run(tmux: str, cwd: Path, agent_dir: Path) -> float:
    """Milliseconds from `tmux new-session` to the first frame showing the editor and the footer."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    command = " ".join([*_command()])
    start = time.perf_counter()
    subprocess.run(
        [tmux, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(cwd), command],
        env=_env(agent_dir),
        check=True,
    )
    try:
        while time.perf_counter() - start < TIMEOUT_S:
            screen = _capture(tmux, name)
            if RULE in screen and MODEL_ID in screen:
                return (time.perf_counter() - start) * 1000
            time.sleep(0.005)
        raise RuntimeError(f"no editor after {TIMEOUT_S}s:\n{_capture(tmux, name)}")
    finally:
        subprocess.run([tmux, "kill-session", "-t", name], capture_output=True)


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    tmux = shutil.which("tmux")
    if tmux is None:
        print("tmux is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer([{"text": "hi", "repeat": True}]) as server:
        root = Path(tmp)
        cwd = root / "work"
        cwd.mkdir()
        agent_dir = root / "agent"
        agent_dir.mkdir()
        provider = {
            "baseUrl": server.openai_base_url,
            "api": "openai-completions",
            "apiKey": "k",
            "models": [{"id": MODEL_ID}],
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
        one_run(tmux, cwd, agent_dir)
        times = [one_run(tmux, cwd, agent_dir) for _ in range(options.runs)]
    print(f"tui startup (launch -> editor painted, {options.runs} runs)")
    print(f"  median {statistics.median(times):7.1f} ms")
    print(f"  min    {min(times):7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
