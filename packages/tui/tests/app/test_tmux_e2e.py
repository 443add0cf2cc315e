"""End to end in tmux (tui.md acceptance 14, keybindings.md 12): the real CLI, a real terminal, a scripted model."""

import json
from pathlib import Path

from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer


def test_submit_reply_reload_and_exit(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    with ScriptedModelServer([{"text": "Hello from the scripted model!", "repeat": True}]) as server:
        write_models(agent_dir, server)
        (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "alt+o"}))
        app = TmuxApp(cwd, agent_dir)
        try:
            screen = app.wait_for("fake-model")
            assert "─" * 40 in screen
            app.type("hello")
            app.keys("Enter")
            app.wait_for("Hello from the scripted model!")
            assert server.requests, "the model server got no request"

            # Remapped key: alt+o cycles the detail level; after switching back and /reload, ctrl+o does.
            app.keys("M-o")
            app.wait_for("Conversation detail: all")
            (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "ctrl+o"}))
            app.type("/reload")
            app.keys("Enter")
            app.wait_for("Reloaded keybindings")
            app.keys("C-o")
            app.wait_for("Conversation detail: overview")

            app.keys("C-c", "C-c")
            screen = app.wait_for("EXITED 0")
            assert "To resume this session: apex-code --session" in screen
        finally:
            app.close()
        # The app ran on its own tmux server, which `close()` ended (no session left on that socket).
        assert app.tmux("list-sessions", check=False) == ""
