"""Driving the real `apex-code` in a detached tmux session against the scripted model server.

Each `TmuxApp` runs on its own tmux server (`tmux -L <unique socket> -f /dev/null`) and `close()` kills that
server: the default server is shared with the developer's own tmux and with other test runs, whose
`kill-session`/`kill-server` could end ours mid-test, and a private socket leaves nothing behind.
"""

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
    """One tmux session running `apex-code` on a private tmux server; `wait_for` polls capture-pane."""

    def __init__(
        self, cwd: Path, agent_dir: Path, args: tuple[str, ...] = (), width: int = 120, height: int = 40
    ) -> None:
        assert TMUX is not None
        self.name = f"apex-{uuid.uuid4().hex[:8]}"
        self.socket = f"apex-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
        env.update(APEX_CODE_CODING_AGENT_DIR=str(agent_dir), APEX_CODE_OFFLINE="1", TERM="xterm-256color")
        env.pop("TMUX", None)
        command = " ".join(shlex.quote(p) for p in [sys.executable, "-m", "apex_coding_agent.cli", *args])
        shell = f"cd {shlex.quote(str(cwd))} && {command}; echo EXITED $?; sleep 30"
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell, env=env)

    def tmux(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        """Run one tmux command on this app's server; its stdout."""
        assert TMUX is not None
        command = [TMUX, "-L", self.socket, "-f", "/dev/null", *args]
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"`{shlex.join(command)}` exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def capture(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name, check=False)

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
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def pane_pid(self) -> int:
        """Pid of the pane's shell."""
        return int(self.tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").strip())

    def close(self) -> None:
        """Kill this app's tmux server (its only session and the app in it)."""
        self.tmux("kill-server", check=False)


def pane_children(app: TmuxApp) -> list[int]:
    """Pids of the processes whose parent is the pane's shell (the app under test)."""
    shell = str(app.pane_pid())
    children: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == shell:
            children.append(int(stat.parent.name))
    return children
