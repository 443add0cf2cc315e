"""The first frame comes before the runtime (tui.md §13): a light entry module, an editor and footer drawn at
once, and keys typed while the runtime builds reach the app's editor."""

import subprocess
import sys
from pathlib import Path

from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_tui.app._startup_frame import startup_widget
from apex_tui.keybindings import load_keybindings

RULE = "─" * 40


def test_the_entry_module_does_not_import_the_runtime() -> None:
    code = (
        "import sys, apex_tui.app\n"
        "heavy = [m for m in ('apex_coding_agent.runtime', 'apex_tui.app._app', 'apex_agent') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_startup_frame_shows_the_editor_rules_and_the_cwd(tmp_path: Path) -> None:
    widget = startup_widget(load_keybindings(tmp_path).manager, str(tmp_path))
    rows = [row.decode("utf-8") for row in widget.render((80, 10), focus=True).text]
    assert sum(RULE in row for row in rows) == 2
    assert any(str(tmp_path) in row for row in rows)


def test_keys_typed_before_the_runtime_is_ready_reach_the_editor(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    with ScriptedModelServer([{"text": "ok", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for(RULE)
            app.type("typed early")
            screen = app.wait_for("fake-model")
            screen = app.wait_for("typed early")
            assert "typed early" in screen
        finally:
            app.close()
