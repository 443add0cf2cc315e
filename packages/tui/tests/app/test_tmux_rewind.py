"""tmux end to end: a model writes and runs `sed -i`; `/rewind` in the real app puts the files back, `/redo` returns
them; a restore cut short is asked about when the app opens the session again."""

import asyncio
from pathlib import Path

import pytest
from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent import SessionManager, create_agent_session

SCENARIO = [
    {"tool_calls": [{"name": "write", "arguments": {"path": "new.txt", "content": "made by the model\n"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "sed -i 's/calm/CHAOS/' notes.txt"}}]},
    {"text": "Changed both.", "repeat": True},
]


async def _cut_a_restore_short(cwd: Path, agent_dir: Path) -> None:
    """Rewind the files of the session's first turn and die after the first file (as a killed process would)."""
    [path] = list((agent_dir / "sessions").rglob("*.jsonl"))
    manager = SessionManager.open(path)
    created = await create_agent_session(cwd=str(cwd), agent_dir=str(agent_dir), session_manager=manager)
    checkpoints = created.session.checkpoints
    # The redo of a rewind moved the leaf back in memory only: the file's last entry is the rewind. Go back to the
    # turn the way `/tree` does.
    turn = next(e for e in manager.get_entries() if getattr(e, "custom_type", None) == "apex-code.checkpoint")
    await created.session.navigate_tree(turn.id)

    def crash(_path: str) -> None:
        raise KeyboardInterrupt

    checkpoints.on_restore_file = crash
    with pytest.raises(KeyboardInterrupt):
        await checkpoints.rewind(checkpoints.get_checkpoints()[0].entry_id, mode="files")
    assert checkpoints.pending_restore
    created.session.dispose()
    manager.close()


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

        asyncio.run(_cut_a_restore_short(cwd, agent_dir))
        half = {name: (cwd / name).read_text() if (cwd / name).exists() else None for name in ("new.txt", "notes.txt")}
        assert half != {"new.txt": "made by the model\n", "notes.txt": "keep CHAOS\n"}  # one file already written
        app = TmuxApp(cwd, agent_dir, args=("-c",))
        try:
            screen = app.wait_for("A file restore was interrupted")
            assert "Complete it" in screen and "Revert it" in screen
            app.keys("Down")
            app.keys("Enter")
            screen = app.wait_for("Restore reverted: 1 files written")
            assert "A file restore was interrupted" not in screen and "Complete it" not in screen
            assert (cwd / "notes.txt").read_text() == "keep CHAOS\n"
            assert (cwd / "new.txt").read_text() == "made by the model\n"
            app.type("still here")  # the editor has the keys again
            app.wait_for("still here")
        finally:
            app.close()
