"""`/resume` (scope, sort, rename, delete), and `/import` through the real app (tui.md §9, acceptance 13)."""

import os
import time
from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_coding_agent.checkpoints.gc import referenced_blobs
from apex_coding_agent.session import SessionManager
from apex_tui.widgets.pickers import ConfirmDialog, SessionPicker


async def _sessions_a_and_b(harness: AppHarness) -> tuple[str, str]:
    """Two written sessions; B is active. Returns their file paths."""
    harness.script(faux_assistant_message("answer A"), faux_assistant_message("answer B"))
    app = await harness.start(persisted=True)
    harness.type("question A")
    harness.press("enter")
    await harness.settle()
    first = app.session.session_file
    harness.type("/new")
    harness.press("enter")
    await harness.settle()
    harness.type("question B")
    harness.press("enter")
    await harness.settle()
    second = app.session.session_file
    assert first is not None and second is not None
    return str(first), str(second)


async def test_resume_sort_scope_and_switch(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    first, _ = await _sessions_a_and_b(harness)
    app = harness.running
    harness.type("/resume")
    harness.press("enter")
    picker = app.slot.original_widget
    assert isinstance(picker, SessionPicker)
    text = harness.text()
    assert "Resume Session (Current Folder)" in text and "question A" in text and "question B" in text
    assert "Sort: Threaded" in text
    harness.press("ctrl s")
    assert "Sort: Recent" in harness.text()
    harness.press("ctrl s")
    assert "Sort: Fuzzy" in harness.text()
    harness.press("tab")
    assert "Resume Session (All)" in harness.text()
    assert picker.sessions["all"] is not None and len(picker.sessions["all"]) == 2
    harness.press("tab")
    harness.type("question A")
    harness.press("enter")
    await harness.settle()
    assert app.session.session_file == first
    assert "Resumed session" in harness.text() and "answer A" in harness.text()
    assert "answer B" not in harness.text()


async def test_resume_full_text_search_opens_the_session_at_the_hit(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    first, _ = await _sessions_a_and_b(harness)
    app = harness.running
    harness.type("/resume")
    harness.press("enter")
    harness.type("answer")  # typed text filters names and first messages: no session is named or begins so
    assert "question A" not in harness.text()
    harness.press("ctrl f")
    await harness.settle()  # the search runs off the event loop
    text = harness.text()
    assert "Search Messages (Current Folder)" in text
    assert "answer A" in text and "answer B" in text  # each session's snippet
    harness.press("ctrl u")
    harness.type("answer A")
    await harness.settle()
    picker = app.slot.original_widget
    assert isinstance(picker, SessionPicker)
    [hit] = [item.value for item in picker.visible_items]
    assert hit.path == first and hit.entry_id is not None
    harness.press("enter")
    await harness.settle()
    assert app.session.session_file == first
    assert app.session.session_manager.get_leaf_id() == hit.entry_id  # at the hit, as /tree puts it
    assert "Navigated to selected point" in harness.text()


async def test_resume_rename_and_delete_but_never_the_active_session(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    first, second = await _sessions_a_and_b(harness)
    app = harness.running
    harness.type("/resume")
    harness.press("enter")
    harness.press("ctrl d")  # B, the active session, is listed first
    assert "Cannot delete the active session" in harness.text()
    assert Path(second).exists()

    harness.press("down", "ctrl r")
    harness.type("renamed A")
    harness.press("enter")
    reopened = SessionManager.open(first)
    try:
        assert reopened.get_session_name() == "renamed A"
    finally:
        reopened.close()
    assert "Session name set: renamed A" in harness.text()

    harness.press("ctrl d")
    assert "Delete session?" in harness.text()
    harness.press("enter")
    assert not Path(first).exists()
    assert Path(second).exists()
    assert "renamed A" not in harness.text()
    harness.press("esc")
    assert app.slot.original_widget is app.editor


async def test_import_asks_then_replaces_the_session(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("exported answer"))
    app = await harness.start(persisted=True)
    harness.type("to be exported")
    harness.press("enter")
    await harness.settle()
    harness.type("/export saved.jsonl")
    harness.press("enter")
    harness.type("/new")
    harness.press("enter")
    await harness.settle()
    assert "exported answer" not in harness.text()
    harness.type("/import saved.jsonl")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, ConfirmDialog)
    assert "Import session?" in harness.text()
    harness.press("esc")
    assert "exported answer" not in harness.text()
    harness.type("/import saved.jsonl")
    harness.press("enter")
    harness.press("enter")
    await harness.settle()
    assert "Imported session from" in harness.text()
    assert "exported answer" in harness.text()
    harness.type("/import")
    harness.press("enter")
    assert "Usage: /import <file.jsonl>" in harness.text()


async def test_deleting_a_session_removes_the_checkpoint_blobs_only_it_referred_to(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    write = [faux_tool_call("write", {"path": "a.txt", "content": "in A"})]
    edit = [faux_tool_call("edit", {"path": "b.txt", "edits": [{"oldText": "B0", "newText": "B1"}]})]
    (harness.cwd / "a.txt").write_text("before A")
    (harness.cwd / "b.txt").write_text("before B0")
    harness.script(
        faux_assistant_message(write, stop_reason="toolUse"),
        faux_assistant_message("answer A"),
        faux_assistant_message(edit, stop_reason="toolUse"),
        faux_assistant_message("answer B"),
    )
    app = await harness.start(persisted=True)
    for prompt in ("question A", "/new", "question B"):
        harness.type(prompt)
        harness.press("enter")
        await harness.settle()
    sessions = harness.agent_dir / "sessions"
    [path_a] = [p for p in sessions.rglob("*.jsonl") if str(p) != app.session.session_file]
    store = harness.agent_dir / "checkpoints" / "blobs"

    def stored() -> set[str]:
        return {p.parent.name + p.name for p in store.rglob("*") if p.is_file()}

    before = stored()
    referenced_before = referenced_blobs([sessions]).blobs & before
    long_ago = time.time() - 2 * 3600  # older than the grace period, as the blobs of finished turns are
    for path in store.rglob("*"):
        os.utime(path, (long_ago, long_ago))

    harness.type("/resume")
    harness.press("enter")
    harness.press("down", "ctrl d")  # A: B, the active session, is listed first
    harness.press("enter")
    await harness.settle()  # the blobs are collected off the event loop
    assert not path_a.exists()
    referenced_after = referenced_blobs([sessions]).blobs
    assert referenced_before - referenced_after, "session A kept no blob of its own"
    assert referenced_after & before, "session B kept no blob"
    assert stored() == before & referenced_after
