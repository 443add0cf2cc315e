"""`/rewind` and `/redo` through the real app: the message picker, the mode question, the conflict question."""

from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_tui.widgets.pickers import SelectList


async def _two_turns(harness: AppHarness) -> None:
    harness.script(
        faux_assistant_message([faux_tool_call("write", {"path": "a.txt", "content": "one"})], stop_reason="toolUse"),
        faux_assistant_message("reply one"),
        faux_assistant_message(
            [faux_tool_call("bash", {"command": "echo two > a.txt && echo b > b.txt"})], stop_reason="toolUse"
        ),
        faux_assistant_message("reply two"),
    )
    await harness.start()
    for prompt in ("first question", "second question"):
        harness.type(prompt)
        harness.press("enter")
        await harness.settle()


async def test_rewind_conversation_and_files_then_redo(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.cwd / "a.txt").write_text("mine")
    await _two_turns(harness)
    app = harness.running
    harness.type("/rewind")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, SelectList)
    assert "Rewind to before message" in harness.text()
    assert "2 files: a.txt, b.txt" in harness.text()  # the second turn, newest first
    harness.press("down", "enter")  # the first question
    assert "Rewind what?" in harness.text()
    harness.press("enter")  # conversation and files
    await harness.settle()
    assert app.slot.original_widget is app.editor
    assert app.editor.text == "first question"
    assert app.session.messages == []
    assert (harness.cwd / "a.txt").read_text() == "mine"
    assert not (harness.cwd / "b.txt").exists()
    assert "Rewound: 2 files restored" in harness.text()

    app.editor.set_text("")
    harness.type("/redo")
    harness.press("enter")
    await harness.settle()
    assert (harness.cwd / "a.txt").read_text() == "two\n"
    assert (harness.cwd / "b.txt").read_text() == "b\n"
    assert len(app.session.messages) == 8
    assert "Redone: 2 files restored" in harness.text()


async def test_a_conflicting_file_is_asked_about_and_kept_or_taken(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    (harness.cwd / "a.txt").write_text("edited by hand\n")
    harness.type("/rewind")
    harness.press("enter")
    harness.press("enter")  # the second question
    harness.press("down", "down", "enter")  # files only
    assert "1 file changed since the agent wrote them" in harness.text()
    harness.press("down", "down", "enter")  # show the diff, then the same question again
    assert "now → checkpoint: a.txt" in harness.text()
    assert "1 file changed since the agent wrote them" in harness.text()
    harness.press("enter")  # keep theirs
    await harness.settle()
    assert (harness.cwd / "a.txt").read_text() == "edited by hand\n"
    assert not (harness.cwd / "b.txt").exists()
    assert "kept (changed by someone else): a.txt" in harness.text()
    assert len(app.session.messages) == 8  # files only: the conversation stays


async def test_leaving_a_branch_in_tree_offers_to_restore_its_files(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    harness.type("/tree")
    harness.press("enter")
    harness.press("up")  # the last reply: its turn's files stay as they are
    harness.press("enter", "enter")  # no summary
    await harness.settle()
    assert "The branch you left" not in harness.text()
    harness.type("/tree")
    harness.press("enter")
    harness.press("up", "up", "up")  # the second question
    harness.press("enter", "enter")
    await harness.settle()
    assert "The branch you left changed 2 files" in harness.text()
    harness.press("down", "enter")  # restore the files too
    await harness.settle()
    assert app.editor.text == "second question"
    assert (harness.cwd / "a.txt").read_text() == "one"
    assert not (harness.cwd / "b.txt").exists()
    assert "Files restored: 2 files restored" in harness.text()


async def test_an_interrupted_restore_is_offered_first(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    checkpoints = app.session.checkpoints
    first = checkpoints.get_checkpoints()[0].entry_id

    def crash(path: str) -> None:
        raise KeyboardInterrupt

    checkpoints.on_restore_file = crash
    try:
        await checkpoints.rewind(first, mode="files")
    except KeyboardInterrupt:
        pass
    checkpoints.on_restore_file = None
    harness.type("/rewind")
    harness.press("enter")
    assert "A file restore was interrupted" in harness.text()
    harness.press("enter")  # complete it
    assert "Restore completed" in harness.text()
    assert not (harness.cwd / "a.txt").exists() and not (harness.cwd / "b.txt").exists()
    assert not checkpoints.pending_restore
