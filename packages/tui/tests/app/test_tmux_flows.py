"""tmux end to end: tool approval answered in the dialog, SIGTERM/SIGHUP exits, `-r` resume picker (tui.md §7, §9)."""

import os
import signal
from pathlib import Path

from tmux_helpers import TmuxApp, pane_children, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

SCENARIO = [
    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo approved-$((6*7))"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo must-not-run > denied.txt"}}]},
    {"text": "All done here.", "repeat": True},
]


def test_bash_approved_once_then_denied_and_sigterm_exits_143(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    with ScriptedModelServer(SCENARIO) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            app.type("run the commands")
            app.keys("Enter")
            screen = app.wait_for("Allow bash?")
            assert "Allow once" in screen and "Deny" in screen
            app.keys("Enter")
            app.wait_for("approved-42")
            app.wait_for("must-not-run")
            screen = app.wait_for("Allow bash?")
            # No rule describes a redirect: the session choice is not offered, Deny is the second option.
            assert "Allow for this session" not in screen
            app.keys("Down", "Enter")  # Deny
            app.wait_for("bash was declined.")
            app.wait_for("All done here.")
            assert not (cwd / "denied.txt").exists()

            (pid,) = pane_children(app)
            os.kill(pid, signal.SIGTERM)
            app.wait_for("EXITED 143")
        finally:
            app.close()


def test_resume_flag_opens_the_picker_enter_switches_and_sighup_exits_129(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    with ScriptedModelServer([{"text": "Remembered reply.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        first = TmuxApp(cwd, agent_dir)
        try:
            first.wait_for("fake-model")
            first.type("first session prompt")
            first.keys("Enter")
            first.wait_for("Remembered reply.")
            first.keys("C-c", "C-c")
            first.wait_for("EXITED 0")
        finally:
            first.close()
        # The import log (written as each import ends) shows what came first: the provider SDK's preload must wait
        # until the picker is on screen, not compete with its listing (the picker's module is imported as it opens).
        imports = tmp_path / "imports.log"
        second = TmuxApp(cwd, agent_dir, args=("-r",), env={"PYTHONPROFILEIMPORTTIME": "1"}, stderr=imports)
        try:
            screen = second.wait_for("Resume Session (Current Folder)")
            assert "first session prompt" in screen
            second.wait_until(lambda _: "| openai" in imports.read_text(), "the SDK preload after the first frame")
            order = [line.rsplit("|", 1)[-1].strip() for line in imports.read_text().splitlines()]
            picker = order.index("apex_tui.app._sessions_flow")
            assert not [m for m in order[:picker] if m.split(".")[0] == "openai" or "providers.openai" in m]
            second.keys("Tab")
            second.wait_for("Resume Session (All)")
            second.keys("Enter")
            screen = second.wait_for("Resumed session")
            assert "Remembered reply." in screen
            (pid,) = pane_children(second)
            os.kill(pid, signal.SIGHUP)
            screen = second.wait_for("EXITED 129")
            assert "To resume this session" not in screen
        finally:
            second.close()
