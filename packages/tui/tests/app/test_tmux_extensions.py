"""tmux end to end: an extension's startup dialog, command, status, widget and shortcut, and a custom theme file in the
real `apex-code` (tui.md §1, §11; extension UI in the TUI)."""

import copy
import json
from pathlib import Path

from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_tui.theme import BUILTIN_THEMES

EXTENSION = """
def extension(pi):
    @pi.on("session_start")
    async def start(event, ctx):
        ok = await ctx.ui.confirm("Welcome aboard?", "The demo extension asks at startup.")
        ctx.ui.notify(f"welcome answered {ok}", "info")

    async def stamp(args, ctx):
        ctx.ui.set_status("stamp", "stamped " + args)
        ctx.ui.set_widget("note", ["widget line from the extension"])

    pi.register_command("stamp", stamp, description="Stamp the footer")
    pi.register_shortcut("alt+k", lambda ctx: ctx.ui.notify("alt k pressed", "info"))
"""


def test_extension_dialog_command_status_widget_shortcut_and_theme(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    extension = tmp_path / "demo.py"
    extension.write_text(EXTENSION)
    theme = copy.deepcopy(dict(BUILTIN_THEMES["dark"]))
    theme["name"] = "ocean"
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        (agent_dir / "themes").mkdir()
        (agent_dir / "themes" / "ocean.json").write_text(json.dumps(theme))
        (agent_dir / "settings.json").write_text(json.dumps({"theme": "ocean"}))
        app = TmuxApp(cwd, agent_dir, args=("-e", str(extension)))
        try:
            screen = app.wait_for("Welcome aboard?")
            assert "[Themes] ocean" in screen and "[Extensions] demo.py" in screen
            app.keys("Enter")
            app.wait_for("welcome answered True")
            app.type("/stamp now")
            app.keys("Enter")
            screen = app.wait_for("stamped now")
            assert "widget line from the extension" in screen
            app.keys("M-k")
            app.wait_for("alt k pressed")
            app.keys("C-c", "C-c")
            app.wait_for("EXITED 0")
        finally:
            app.close()
