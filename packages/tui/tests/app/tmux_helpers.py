"""Driving the real `apex-code` in a detached tmux session against the scripted model server."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from apex_ai.scripted_server import ScriptedModelServer

TMUX = shutil.which("tmux")


def write_models(agent_dir: Path, server: ScriptedModelServer) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": server.openai_base_url,
        "api": "openai-completions",
        "apiKey": "k",
        "models": [{"id": "fake-model"}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


class TmuxApp:
    """One tmux session running `apex-code`; `wait_for` polls capture-pane until a deadline."""

    def __init__(
        self, cwd: Path, agent_dir: Path, args: tuple[str, ...] = (), width: int = 120, height: int = 40
    ) -> None:
        assert TMUX is not None
        self.name = f"apex-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
        env.update(APEX_CODE_CODING_AGENT_DIR=str(agent_dir), APEX_CODE_OFFLINE="1", TERM="xterm-256color")
        env.pop("TMUX", None)
        command = " ".join(shlex.quote(p) for p in [sys.executable, "-m", "apex_coding_agent.cli", *args])
        shell = f"cd {shlex.quote(str(cwd))} && {command}; echo EXITED $?; sleep 30"
        subprocess.run(
            [TMUX, "-f", "/dev/null", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell],
            env=env,
            check=True,
        )

    def capture(self) -> str:
        result = subprocess.run(
            [TMUX, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=False
        )
        return result.stdout

    def wait_for(self, text: str, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not on screen after {timeout}s:\n{screen}")

    def type(self, text: str) -> None:
        subprocess.run([TMUX, "send-keys", "-t", self.name, "-l", text], check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run([TMUX, "send-keys", "-t", self.name, *keys], check=True)

    def close(self) -> None:
        subprocess.run([TMUX, "kill-session", "-t", self.name], capture_output=True, check=False)


def pane_children(name: str) -> list[int]:
    """Pids of the processes whose parent is the pane's shell (the app under test)."""
    assert TMUX is not None
    shell = subprocess.run(
        [TMUX, "display-message", "-p", "-t", name, "#{pane_pid}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    children: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == shell:
            children.append(int(stat.parent.name))
    return children
