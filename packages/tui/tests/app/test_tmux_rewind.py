"""tmux end to end: a model writes and runs `sed -i`; `/rewind` in the real app puts the files back, `/redo` returns
them."""

from pathlib import Path

from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

SCENARIO = [
    {"tool_calls": [{"name": "write", "arguments": {"path": "new.txt", "content": "made by the model\n"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "sed -i 's/calm/CHAOS/' notes.txt"}}]},
    {"text": "Changed both.", "repeat": True},
]


def test_rewind_files_and_conversation_then_redo(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("keep calm\n")
    agent_dir = tmp_path / "agent"
    with ScriptedModelServer(SCENARIO) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=("--permission-mode", "bypassPermissions"))
        try:
            app.wait_for("fake-model")
            app.type("shake things up")
            app.keys("Enter")
            app.wait_for("Changed both.")
            assert (cwd / "notes.txt").read_text() == "keep CHAOS\n"
            app.type("/rewind")
            app.keys("Enter")
            screen = app.wait_for("Rewind to before message")
            assert "2 files: new.txt, notes.txt" in screen
            app.keys("Enter")
            app.wait_for("Rewind what?")
            app.keys("Enter")  # conversation and files
            app.wait_for("Rewound: 2 files restored")
            assert (cwd / "notes.txt").read_text() == "keep calm\n"
            assert not (cwd / "new.txt").exists()
            app.keys("C-u")
            app.type("/redo")
            app.keys("Enter")
            app.wait_for("Redone: 2 files restored")
            assert (cwd / "notes.txt").read_text() == "keep CHAOS\n"
            assert (cwd / "new.txt").read_text() == "made by the model\n"
        finally:
            app.close()
