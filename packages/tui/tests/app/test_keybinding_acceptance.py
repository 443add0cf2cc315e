"""keybindings.md acceptance 5, 9 and 10 on the whole app (the routing tables are tested in keybindings/): a broken
file still starts the app, page keys in fullscreen with default and remapped bindings, a user binding of an app id
beating the editor's default on the same key."""

import json
from pathlib import Path

from app_helpers import AppHarness

from apex_tui.app import InteractiveApp
from apex_tui.widgets import NoticeBlock
from apex_tui.widgets.pickers import ModelPicker


async def test_a_file_that_is_not_an_object_warns_once_and_the_app_runs_on_defaults(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "keybindings.json").write_text("[1, 2]")
    app = await harness.start()
    text = harness.text()
    assert text.count("Warning: keybindings.json") == 1
    assert "Warning: keybindings.json: expected an object; using default keybindings" in text
    harness.press("ctrl o")
    assert app.ctx.detail.value == "all"


async def fullscreen_with_long_editor(harness: AppHarness) -> tuple[InteractiveApp, int]:
    """A fullscreen app with 80 transcript lines and a 30-line draft (more than the editor box shows)."""
    app = await harness.start(fullscreen=True)
    app.root.fullscreen = True
    for index in range(80):
        app.feed.add(NoticeBlock(app.ctx, "info", f"line {index}"))
    app.editor.set_text("\n".join(f"draft {n}" for n in range(30)))
    harness.screen()
    return app, app.editor.cursor


async def test_fullscreen_page_up_scrolls_the_transcript_and_ctrl_page_up_the_editor(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app, cursor = await fullscreen_with_long_editor(harness)
    harness.press("page up")
    assert not app.transcript.following and app.editor.cursor == cursor
    harness.press("end")
    assert app.transcript.following
    harness.press("ctrl page up")
    assert app.transcript.following and app.editor.cursor < cursor


async def test_remapped_alt_screen_page_up_swaps_the_two_keys(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "keybindings.json").write_text(json.dumps({"tui.altScreen.pageUp": "ctrl+pageUp"}))
    app, cursor = await fullscreen_with_long_editor(harness)
    harness.press("page up")
    assert app.transcript.following and app.editor.cursor < cursor
    moved = app.editor.cursor
    harness.press("ctrl page up")
    assert not app.transcript.following and app.editor.cursor == moved


async def test_ctrl_k_bound_to_model_select_opens_the_picker_instead_of_killing_the_line(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "keybindings.json").write_text(json.dumps({"app.model.select": "ctrl+k"}))
    app = await harness.start()
    assert "Warning:" not in harness.text()  # a user binding over a default is no conflict
    harness.type("keep this")
    harness.press("home", "ctrl k")
    assert isinstance(app.slot.original_widget, ModelPicker)
    harness.press("esc")
    assert app.slot.original_widget is app.editor and app.editor.text == "keep this"
