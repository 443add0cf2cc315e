"""Start-up speed of the terminal app: launch of `apex-code` in tmux -> first paint of the editor (ms; goal <= 500).

Starts the real `apex-code` (interactive mode) in a detached tmux session with a temp agent dir whose models.json
points at an in-process `ScriptedModelServer`, and polls `tmux capture-pane` until the editor's horizontal rules and
the footer's model id are on screen. Polling every 5 ms bounds the measurement error. Prints the median and min.

Then one run under `python -X importtime` shows whether the provider SDKs load after the first paint (in the
background) or before it: the import log is read at the moment the editor appears and again a few seconds later.

tmux runs on a private server (`tmux -L <unique name>`), killed at the end: the default server is shared with
other tmux users and tests, whose `kill-session`/`kill-server` could end it under us ("server exited
unexpectedly"). `TmuxServer` is imported by `bench_tui_app.py`.

Run with the workspace's python: `uv run python benchmarks/bench_tui_startup.py [--runs N]` (default 5).
One unmeasured warm-up run comes first so bytecode for the workspace's sources exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from apex_ai.scripted_server import ScriptedModelServer

RULE = "─" * 60
MODEL_ID = "bench-model"
TIMEOUT_S = 30.0
GOAL_MS = 500.0
SDK_MODULES = ("anthropic", "openai", "httpx2", "pydantic", "urwid", "markdown_it", "pygments")
"""Top-level modules whose import time matters at start-up; the first two are the provider SDKs."""


class TmuxError(RuntimeError):
    """tmux is missing or refused a command; the message says which command and what tmux printed."""


class TmuxServer:
    """A private tmux server (`tmux -L <name> -f /dev/null`) for benchmark panes; `close()` kills it."""

    def __init__(self) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise TmuxError("tmux is not installed (apt-get install tmux); this benchmark drives the app in tmux")
        self.tmux = tmux
        self.socket = f"apex-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def run(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run one tmux command on this server; raises TmuxError with tmux's own message when it fails."""
        command = [self.tmux, "-L", self.socket, "-f", "/dev/null", *args]
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            raise TmuxError(
                f"`{shlex.join(command)}` exited {result.returncode}: {result.stderr.strip() or '(no message)'}"
            )
        return result.stdout

    def start(self, command: str, env: dict[str, str], cwd: Path, width: int = 120, height: int = 40) -> str:
        """Start `command` (a shell command line) in a new detached session; returns the session name."""
        name = f"bench-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), "-c", str(cwd), command, env=env)
        return name

    def capture(self, name: str) -> str:
        """The pane's visible text ('' once the pane is gone)."""
        try:
            return self.run("capture-pane", "-p", "-t", name)
        except TmuxError:
            return ""

    def pane_pid(self, name: str) -> int:
        """Pid of the pane's process (the app itself when the command starts with `exec`)."""
        return int(self.run("display-message", "-p", "-t", name, "#{pane_pid}").strip())

    def keys(self, name: str, *keys: str, literal: bool = False) -> None:
        """`send-keys` (with `-l` when `literal`)."""
        self.run("send-keys", "-t", name, *(["-l"] if literal else []), *keys)

    def kill(self, name: str) -> None:
        """End one session (no error when it is already gone)."""
        subprocess.run([self.tmux, "-L", self.socket, "kill-session", "-t", name], capture_output=True, check=False)

    def wait_for(self, name: str, texts: Sequence[str], timeout: float = TIMEOUT_S, poll: float = 0.005) -> float:
        """Poll until every text is on screen; returns the `perf_counter()` of the capture that showed them."""
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            screen = self.capture(name)
            if all(text in screen for text in texts):
                return time.perf_counter()
            time.sleep(poll)
        raise TmuxError(f"{list(texts)} not on screen after {timeout}s:\n{self.capture(name)}")

    def close(self) -> None:
        """Kill the private server and every pane in it."""
        subprocess.run([self.tmux, "-L", self.socket, "kill-server"], capture_output=True, check=False)

    def __enter__(self) -> TmuxServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def app_command(*args: str, python_flags: Sequence[str] = (), stderr: Path | None = None) -> str:
    """Shell command line that execs `apex-code` with `args` (the pane's pid is then the app's pid)."""
    script = Path(sys.executable).parent / "apex-code"
    if python_flags or not script.exists():
        parts = [sys.executable, *python_flags, "-m", "apex_coding_agent.cli", *args]
    else:
        parts = [str(script), *args]
    redirect = f" 2>{shlex.quote(str(stderr))}" if stderr is not None else ""
    return "exec " + shlex.join(parts) + redirect


def app_env(agent_dir: Path) -> dict[str, str]:
    """Environment for the app: no provider keys, offline, the temp agent dir, bytecode caching allowed."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TMUX", None)
    env.update(APEX_CODE_CODING_AGENT_DIR=str(agent_dir), APEX_CODE_OFFLINE="1", TERM="xterm-256color")
    return env


def write_agent_dir(agent_dir: Path, server: ScriptedModelServer) -> None:
    """models.json with one openai-completions model served by `server`."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": server.openai_base_url,
        "api": "openai-completions",
        "apiKey": "k",
        "models": [{"id": MODEL_ID}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


def one_run(tmux: TmuxServer, cwd: Path, agent_dir: Path) -> float:
    """Milliseconds from `tmux new-session` to the first frame showing the editor and the footer."""
    start = time.perf_counter()
    name = tmux.start(app_command(), app_env(agent_dir), cwd)
    try:
        return (tmux.wait_for(name, [RULE, MODEL_ID]) - start) * 1000
    finally:
        tmux.kill(name)


def imported_modules(log: str) -> dict[str, float]:
    """Top-level package -> cumulative import ms, from a `-X importtime` log (only the package's own line)."""
    found: dict[str, float] = {}
    for line in log.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        if name.isidentifier() and cumulative.isdigit():
            found[name] = int(cumulative) / 1000
    return found


def sdk_check(
    tmux: TmuxServer, cwd: Path, agent_dir: Path, settle_s: float = 4.0
) -> tuple[dict[str, float], dict[str, float]]:
    """Top-level imports done at the first paint and `settle_s` later, under `-X importtime` (slower start)."""
    log = agent_dir.parent / "importtime.log"
    name = tmux.start(app_command(python_flags=["-X", "importtime"], stderr=log), app_env(agent_dir), cwd)
    try:
        tmux.wait_for(name, [RULE, MODEL_ID])
        at_paint = imported_modules(log.read_text(errors="replace"))
        time.sleep(settle_s)
        later = imported_modules(log.read_text(errors="replace"))
    finally:
        tmux.kill(name)
    return at_paint, later


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    options, _unknown = parser.parse_known_args()  # nox passes the same posargs to every benchmark
    try:
        tmux = TmuxServer()
    except TmuxError as exc:
        print(f"bench_tui_startup: {exc}", file=sys.stderr)
        return 1
    with (
        tmux,
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModelServer([{"text": "hi", "repeat": True}]) as server,
    ):
        root = Path(tmp)
        cwd = root / "work"
        cwd.mkdir()
        agent_dir = root / "agent"
        write_agent_dir(agent_dir, server)
        try:
            one_run(tmux, cwd, agent_dir)
            times = [one_run(tmux, cwd, agent_dir) for _ in range(options.runs)]
            at_paint, later = sdk_check(tmux, cwd, agent_dir)
        except TmuxError as exc:
            print(f"bench_tui_startup: {exc}", file=sys.stderr)
            return 1
    median = statistics.median(times)
    verdict = "ok" if median <= GOAL_MS else "OVER GOAL"
    print(f"tui startup (launch -> editor painted, {options.runs} runs; goal <= {GOAL_MS:.0f} ms)")
    print(f"  median {median:7.1f} ms  [{verdict}]")
    print(f"  min    {min(times):7.1f} ms")
    print("  top-level imports at first paint / 4 s later (cumulative ms under -X importtime):")
    for module in SDK_MODULES:
        before = f"{at_paint[module]:7.1f}" if module in at_paint else "      -"
        after = f"{later[module]:7.1f}" if module in later else "      -"
        print(f"    {module:<12} {before}  {after}")
    sdks_before = [m for m in ("anthropic", "openai") if m in at_paint]
    sdks_after = [m for m in ("anthropic", "openai") if m in later and m not in at_paint]
    print(f"  provider SDKs loaded before first paint: {', '.join(sdks_before) or 'none'}")
    print(f"  provider SDKs loaded after first paint (background): {', '.join(sdks_after) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
