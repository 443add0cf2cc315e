"""Driving the real `apex-code` in a detached tmux session against the scripted model server.

Each `TmuxApp` runs on its own tmux server (`tmux -L <unique socket> -f /dev/null`) and `close()` kills that
server: the default server is shared with the developer's own tmux and with other test runs, whose
`kill-session`/`kill-server` could end ours mid-test, and a private socket leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from apex_ai.testing.scripted_server import ScriptedModelServer

TMUX = shutil.which("tmux")
MISSING_TMUX = (
    "tmux is required by the terminal app's end-to-end tests and is not on PATH: install it "
    "(apt-get install tmux; .ci/run does) rather than skipping these tests"
)
WIPE_SENTINEL = "#WIPED#"
"""What `TmuxApp.wipe_pane` leaves on the last row until the app repaints it."""
PROMPT = "shell>"
"""The interactive shell's prompt (`interactive_shell=True`)."""


def write_models(agent_dir: Path, server: ScriptedModelServer) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": server.openai_base_url,
        "api": "openai-completions",
        "apiKey": "k",
        "models": [{"id": "fake-model"}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


def strip_sgr(text: str) -> str:
    """`capture-pane -e` output without its colour sequences."""
    return re.sub(r"\x1b\[[0-9;:]*m", "", text)


_SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def visible_cells(text: str) -> list[list[tuple[str, str, str, frozenset[int]]]]:
    """`capture-pane -e` output as rows of what each cell shows: (character, foreground, background, attributes).

    tmux places colour changes where it likes (the end of one row or the start of the next); a blank cell's
    foreground shows nothing and is left out, and trailing default blank cells are dropped."""
    fg, bg, flags = "", "", set[int]()
    rows: list[list[tuple[str, str, str, frozenset[int]]]] = []
    for line in text.split("\n"):
        row: list[tuple[str, str, str, frozenset[int]]] = []
        pos = 0
        for match in [*_SGR.finditer(line), None]:
            chunk = line[pos : match.start() if match else len(line)]
            row.extend((ch, "" if ch == " " else fg, bg, frozenset(flags)) for ch in chunk)
            if match is None:
                break
            pos = match.end()
            codes = [int(c) if c else 0 for c in re.split("[;:]", match.group(1))]
            while codes:
                code = codes.pop(0)
                if code == 0:
                    fg, bg, flags = "", "", set()
                elif code in (38, 48):
                    # 38;5;n or 38;2;r;g;b
                    size = 1 if codes and codes[0] == 5 else 3
                    value = ";".join(str(c) for c in codes[: size + 1])
                    del codes[: size + 1]
                    fg, bg = (value, bg) if code == 38 else (fg, value)
                elif code == 39:
                    fg = ""
                elif code == 49:
                    bg = ""
                elif 30 <= code <= 37 or 90 <= code <= 97:
                    fg = str(code)
                elif 40 <= code <= 47 or 100 <= code <= 107:
                    bg = str(code)
                elif 21 <= code <= 29:
                    flags -= {code - 20, 1} if code == 22 else {code - 20}
                else:
                    flags.add(code)
        while row and row[-1][0] == " " and not row[-1][2] and not row[-1][3]:
            row.pop()
        rows.append(row)
    return rows


class TmuxApp:
    """One tmux session running `apex-code` on a private tmux server; `wait_for` polls capture-pane."""

    def __init__(
        self,
        cwd: Path,
        agent_dir: Path,
        args: tuple[str, ...] = (),
        width: int = 120,
        height: int = 40,
        *,
        env: dict[str, str] | None = None,
        interactive_shell: bool = False,
        tmux_conf: str = "/dev/null",
        stderr: Path | None = None,
    ) -> None:
        """`env` adds variables for the app. With `interactive_shell` the pane runs `bash -i` (job control, a
        `$ ` prompt) and the command line is typed into it, as a person starts the app. `tmux_conf` is the server's
        configuration file (none by default). `stderr`: a file the app's standard error goes to instead of the
        pane."""
        if TMUX is None:
            pytest.fail(MISSING_TMUX)
        self.conf = tmux_conf
        """The tmux configuration file the server starts with (`-f`)."""
        self.name = f"apex-{uuid.uuid4().hex[:8]}"
        self.socket = f"apex-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        full_env = {
            k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")
        }
        full_env.update(APEX_CODE_CODING_AGENT_DIR=str(agent_dir), APEX_CODE_OFFLINE="1", TERM="xterm-256color")
        full_env.update(env or {})
        full_env.pop("TMUX", None)
        command = " ".join(shlex.quote(p) for p in [sys.executable, "-m", "apex_coding_agent.cli", *args])
        if stderr is not None:
            command += f" 2>{shlex.quote(str(stderr))}"
        size = ["-x", str(width), "-y", str(height)]
        if interactive_shell:
            rcfile = cwd.parent / "test-bashrc"
            rcfile.write_text("PS1='shell> '\n")
            shell = f"cd {shlex.quote(str(cwd))} && exec bash --noprofile --rcfile {shlex.quote(str(rcfile))} -i"
            self.tmux("new-session", "-d", "-s", self.name, *size, shell, env=full_env)
            try:
                self.wait_for(PROMPT)
            except AssertionError:
                self.close()  # the caller never gets the object, so nobody else would stop the server
                raise
            self.type(command)  # alone: a list (`cmd; echo`) would go on running when `cmd` is stopped
            self.keys("Enter")
            return
        shell = f"cd {shlex.quote(str(cwd))} && {command}; echo EXITED $?; sleep 30"
        self.tmux("new-session", "-d", "-s", self.name, *size, shell, env=full_env)

    def tmux(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        """Run one tmux command on this app's server; its stdout."""
        assert TMUX is not None
        command = [TMUX, "-L", self.socket, "-f", self.conf, *args]
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"`{shlex.join(command)}` exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def capture(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name, check=False)

    def rows(self) -> list[str]:
        """The visible screen, one string per row (trailing blanks kept as tmux prints them)."""
        return self.capture().split("\n")

    def history(self) -> str:
        """Scrollback and screen (`capture-pane -S -`)."""
        return self.tmux("capture-pane", "-p", "-S", "-", "-t", self.name, check=False)

    def alternate_on(self) -> bool:
        """Whether the pane shows the alternate screen."""
        return self.tmux("display-message", "-p", "-t", self.name, "#{alternate_on}").strip() == "1"

    def wait_until(self, check: Callable[[str], bool], what: str, timeout: float = 15.0) -> str:
        """Poll the screen until `check(screen)` holds; the screen that passed."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{what}: not seen after {timeout}s:\n{screen}")

    def hex_keys(self, data: bytes) -> None:
        """Send raw bytes (`send-keys -H`): modified keys tmux has no name for."""
        self.tmux("send-keys", "-t", self.name, "-H", *(f"{b:02x}" for b in data))

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

    def capture_attrs(self) -> str:
        """The visible screen with its colours and attributes (`capture-pane -e`)."""
        return self.tmux("capture-pane", "-p", "-e", "-t", self.name, check=False)

    def cursor(self) -> str:
        """Where the pane's cursor is and whether it shows: `x,y,flag`."""
        return self.tmux("display-message", "-p", "-t", self.name, "#{cursor_x},#{cursor_y},#{cursor_flag}").strip()

    def settled(self, timeout: float = 15.0) -> str:
        """The screen (with attributes) once two captures 0.2 s apart agree: no redraw is under way."""
        deadline = time.monotonic() + timeout
        previous = self.capture_attrs()
        while time.monotonic() < deadline:
            time.sleep(0.2)
            current = self.capture_attrs()
            if current == previous:
                return current
            previous = current
        raise AssertionError(f"the screen never settled after {timeout}s:\n{self.capture()}")

    def wipe_pane(self) -> None:
        """Clear the pane from outside the app (written to the pane's terminal) and leave a sentinel on its last
        row: only a full repaint by the app removes it."""
        tty = self.tmux("display-message", "-p", "-t", self.name, "#{pane_tty}").strip()
        rows = int(self.tmux("display-message", "-p", "-t", self.name, "#{pane_height}").strip())
        with open(tty, "w") as out:
            out.write(f"\x1b[0m\x1b[2J\x1b[{rows};1H{WIPE_SENTINEL}")

    def assert_repaint_stable(self, what: str) -> str:
        """The invariant: the screen equals what a forced full repaint of the same state shows.

        The settled screen (text, colours, cursor) is compared with the one the app paints from scratch after the
        pane was wiped: a SIGWINCH without a size change makes urwid repaint every row. Any difference is
        something an earlier frame left behind (or lost) that the app's state no longer holds."""
        before = self.settled()
        cursor = self.cursor()
        (pid,) = pane_children(self)
        self.wipe_pane()
        os.kill(pid, signal.SIGWINCH)
        self.wait_until(lambda s: WIPE_SENTINEL not in s, f"{what}: the repaint after the wipe")
        after = self.settled()
        cursor_after = self.cursor()
        # A hidden cursor's position is nothing the user sees.
        cursors_differ = cursor != cursor_after and not (cursor.endswith(",0") and cursor_after.endswith(",0"))
        if visible_cells(before) != visible_cells(after) or cursors_differ:
            plain = strip_sgr(before) != strip_sgr(after)
            old, new = (strip_sgr(before), strip_sgr(after)) if plain else (before, after)
            diff = "\n".join(
                difflib.unified_diff(old.split("\n"), new.split("\n"), "on screen", "repainted", lineterm="")
            )
            raise AssertionError(
                f"{what}: the screen differs from a full repaint of the same state "
                f"(cursor {cursor} vs {cursor_after}):\n{diff or '(the cursor only)'}\n"
                f"--- on screen:\n{strip_sgr(before)}"
            )
        return strip_sgr(after)

    def pane_pid(self) -> int:
        """Pid of the pane's shell."""
        return int(self.tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").strip())

    def close(self) -> None:
        """Kill this app's tmux server (its only session and the app in it).

        A server that survives `kill-server` (seen under load with an interactive bash pane) is killed by
        pid, so no test leaves a tmux server behind.
        """
        pid_text = self.tmux("display-message", "-p", "#{pid}", check=False).strip()
        self.tmux("kill-server", check=False)
        if not pid_text.isdigit():
            return
        pid = int(pid_text)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


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
