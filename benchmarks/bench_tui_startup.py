"""Start-up speed of the terminal app: launch of `apex-code` in tmux -> editor painted, and -> model shown (ms).

Starts the real `apex-code` (interactive mode) in a detached tmux session with a temp agent dir whose models.json
points at an in-process `ScriptedModelServer`, and polls `tmux capture-pane` every 5 ms (the measurement error).
Two moments per run, reported separately: the editor painted (its horizontal rules, the startup frame drawn before
the runtime is imported; goal <= 500 ms) and the model shown (the footer's model id, once the runtime is built and
the app's first frame replaced the startup frame). Prints median and min of each.

Then one run under `python -X importtime` shows which provider SDKs load before the editor is painted, before the
model is shown, and only later (in the background): the import log is read at each moment and a few seconds on.
A package is "loaded" when any of its modules is in the log: the app preloads an SDK with `importlib.import_module`
from a thread, and an import made through importlib writes no line for the package itself (only for the modules it
imports), so the log's cumulative figure for such a package is missing. The SDK import cost is therefore measured
on its own too, in a fresh `python -X importtime -c "import <sdk>"`.

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

from apex_ai.testing.scripted_server import ScriptedModelServer

RULE = "─" * 60
MODEL_ID = "bench-model"
TIMEOUT_S = 30.0
GOAL_MS = 500.0
PROVIDER_SDKS = ("anthropic", "openai")
SDK_MODULES = (*PROVIDER_SDKS, "httpx2", "pydantic", "urwid", "markdown_it", "pygments")
"""Top-level modules whose import time matters at start-up; the first two are the provider SDKs."""
SETTLE_S = 4.0
"""How long after the model is shown the import log is read again (the background preload has ended by then)."""


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
        self._keepalive = False

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
        if not self._keepalive:
            # A server exits with its last session; a `new-session` racing that exit fails ("server exited
            # unexpectedly"). One idle session keeps the server up between runs; `close()` ends it.
            self.run("new-session", "-d", "-s", "keepalive", "sleep 86400")
            self._keepalive = True
        name = f"bench-{uuid.uuid4().hex[:8]}"
        # A session takes the environment of the server (of the client that started it), not of the client asking
        # for the session: `env -i` gives the command exactly `env`. `exec` keeps the pane's pid the app's pid.
        assignments = shlex.join(f"{key}={value}" for key, value in env.items())
        line = f"exec env -i {assignments} sh -c {shlex.quote(command)}"
        self.run("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), "-c", str(cwd), line)
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


def one_run(tmux: TmuxServer, cwd: Path, agent_dir: Path) -> tuple[float, float]:
    """Milliseconds from `tmux new-session` to the editor painted, and to the footer showing the model id."""
    start = time.perf_counter()
    name = tmux.start(app_command(), app_env(agent_dir), cwd)
    try:
        painted = tmux.wait_for(name, [RULE])
        shown = tmux.wait_for(name, [RULE, MODEL_ID])
        return (painted - start) * 1000, (shown - start) * 1000
    finally:
        tmux.kill(name)


LOADED = -1.0
"""`imported_modules` value for a package whose own line is missing (imported through importlib, see the top)."""


def imported_modules(log: str) -> dict[str, float]:
    """Top-level package -> cumulative import ms from a `-X importtime` log (its own line), or LOADED when only
    its submodules have lines."""
    found: dict[str, float] = {}
    for line in log.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        package = name.partition(".")[0]
        if not package.isidentifier() or not cumulative.isdigit():
            continue
        if name == package:
            found[package] = int(cumulative) / 1000
        else:
            found.setdefault(package, LOADED)
    return found


def module_counts(log: str) -> dict[str, int]:
    """Top-level package -> how many of its modules (itself included) have a line in a `-X importtime` log."""
    counts: dict[str, int] = {}
    for line in log.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            package = line.rsplit("|", 1)[1].strip().partition(".")[0]
            counts[package] = counts.get(package, 0) + 1
    return counts


def sdk_check(tmux: TmuxServer, cwd: Path, agent_dir: Path, settle_s: float = SETTLE_S) -> tuple[str, str, str]:
    """The `-X importtime` log (a slower start) as it was when the editor was painted, when the model was shown
    and `settle_s` later."""
    log = agent_dir.parent / "importtime.log"
    name = tmux.start(app_command(python_flags=["-X", "importtime"], stderr=log), app_env(agent_dir), cwd)
    try:
        tmux.wait_for(name, [RULE])
        at_paint = log.read_text(errors="replace")
        tmux.wait_for(name, [RULE, MODEL_ID])
        at_model = log.read_text(errors="replace")
        time.sleep(settle_s)
        later = log.read_text(errors="replace")
    finally:
        tmux.kill(name)
    return at_paint, at_model, later


def import_alone_ms(module: str) -> float | None:
    """Cumulative ms of `import <module>` in a fresh interpreter (`-X importtime`); None when it fails."""
    command = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return None
    return imported_modules(result.stderr).get(module)


def _cell(log: str, final: str, module: str) -> str:
    """Cumulative ms; `loaded` without a figure; `k/n mods` while an import was still running; `-` not imported."""
    done, total = module_counts(log).get(module, 0), module_counts(final).get(module, 0)
    if done == 0:
        return "-"
    if done < total:
        return f"{done}/{total} mods"
    value = imported_modules(log).get(module, LOADED)
    return "loaded" if value == LOADED else f"{value:.1f}"


def _summary(label: str, times: Sequence[float], goal: float | None) -> str:
    median = statistics.median(times)
    verdict = "" if goal is None else ("  [ok]" if median <= goal else "  [OVER GOAL]")
    return f"  {label:<15} median {median:7.1f} ms  min {min(times):7.1f} ms{verdict}"


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
            runs = [one_run(tmux, cwd, agent_dir) for _ in range(options.runs)]
            at_paint, at_model, later = sdk_check(tmux, cwd, agent_dir)
        except TmuxError as exc:
            print(f"bench_tui_startup: {exc}", file=sys.stderr)
            return 1
    alone = {sdk: import_alone_ms(sdk) for sdk in PROVIDER_SDKS}
    print(f"tui startup ({options.runs} runs; goal: editor painted <= {GOAL_MS:.0f} ms)")
    print(_summary("editor painted", [painted for painted, _shown in runs], GOAL_MS))
    print(_summary("model shown", [shown for _painted, shown in runs], None))
    print(
        "  imports under -X importtime (cumulative ms; '-' none; 'k/n mods' importing; 'loaded' via importlib, no figure):"
    )
    print(f"    {'module':<12} {'editor painted':>15} {'model shown':>12} {f'{SETTLE_S:.0f} s later':>10}")
    for module in SDK_MODULES:
        cells = (_cell(at_paint, later, module), _cell(at_model, later, module), _cell(later, later, module))
        print(f"    {module:<12} {cells[0]:>15} {cells[1]:>12} {cells[2]:>10}")
    for sdk in PROVIDER_SDKS:
        cost = alone[sdk]
        print(f"  import {sdk} alone (fresh interpreter): " + ("failed" if cost is None else f"{cost:.1f} ms"))
    final = module_counts(later)
    for label, log in (("editor painted", at_paint), ("model shown", at_model)):
        counts = module_counts(log)
        complete = [m for m in PROVIDER_SDKS if counts.get(m, 0) and counts[m] == final[m]]
        started = [m for m in PROVIDER_SDKS if 0 < counts.get(m, 0) < final[m]]
        print(
            f"  provider SDKs at {label}: imported {', '.join(complete) or 'none'};"
            f" still importing {', '.join(started) or 'none'}"
        )
    background = [m for m in PROVIDER_SDKS if final.get(m, 0) > module_counts(at_model).get(m, 0)]
    print(f"  provider SDK imports finished after the model was shown (background): {', '.join(background) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
