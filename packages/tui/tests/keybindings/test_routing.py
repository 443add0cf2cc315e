"""Precedence while the main editor is focused (keybindings.md §5, §9; acceptance checks 9 and 10, routing part)."""

import json
from pathlib import Path

import pytest

from apex_tui.keybindings import (
    EDITOR_ACTION_IDS,
    EDITOR_APP_IDS,
    EXTENSION,
    KEYBINDINGS,
    RESERVED_IDS,
    Context,
    EditorState,
    KeybindingManager,
    check_extension_shortcut,
    ids_in_scope,
    load_keybindings,
    parse_key,
    route_editor_key,
    route_scope_key,
)

REGULAR = EditorState()
EMPTY = EditorState(editor_empty=True)
FULLSCREEN = EditorState(fullscreen=True)
SEARCHING = EditorState(fullscreen=True, search_focused=True)
AUTOCOMPLETE = EditorState(autocomplete_open=True)


def manager_from(tmp_path: Path, bindings: dict[str, object]) -> KeybindingManager:
    (tmp_path / "keybindings.json").write_text(json.dumps(bindings), encoding="utf-8")
    manager, warnings = load_keybindings(tmp_path, sys_platform="linux", env={})
    assert warnings == ()
    return manager


@pytest.fixture
def default() -> KeybindingManager:
    return KeybindingManager("linux")


def test_history_binding_beats_model_cycling_in_the_editor_only(tmp_path: Path) -> None:
    manager = manager_from(tmp_path, {"tui.editor.historyPrevious": "ctrl+p"})
    assert route_editor_key(manager, "ctrl p", REGULAR) == "tui.editor.historyPrevious"
    # ctrl+p keeps its meaning in pickers.
    assert route_scope_key(manager, "ctrl p", "session picker") == ["app.session.togglePath"]
    assert route_scope_key(manager, "ctrl p", "model picker") == ["app.models.toggleProvider"]


def test_ctrl_p_cycles_models_by_default(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl p", REGULAR) == "app.model.cycleForward"
    assert route_editor_key(default, "ctrl P", REGULAR) == "app.model.cycleBackward"


def test_ctrl_d_deletes_forward_unless_the_editor_is_empty(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl d", REGULAR) == "tui.editor.deleteCharForward"
    assert route_editor_key(default, "ctrl d", EMPTY) == "app.exit"
    assert route_editor_key(default, "delete", EMPTY) == "tui.editor.deleteCharForward"


def test_escape_with_autocomplete_open_only_closes_it(default: KeybindingManager) -> None:
    assert route_editor_key(default, "esc", AUTOCOMPLETE) == "tui.select.cancel"
    assert route_editor_key(default, "esc", REGULAR) == "app.interrupt"


def test_autocomplete_takes_arrows_tab_and_enter(default: KeybindingManager) -> None:
    assert route_editor_key(default, "up", AUTOCOMPLETE) == "tui.select.up"
    assert route_editor_key(default, "down", AUTOCOMPLETE) == "tui.select.down"
    assert route_editor_key(default, "tab", AUTOCOMPLETE) == "tui.input.tab"
    assert route_editor_key(default, "enter", AUTOCOMPLETE) == "tui.select.confirm"
    assert route_editor_key(default, "up", REGULAR) == "tui.editor.cursorUp"
    assert route_editor_key(default, "enter", REGULAR) == "tui.input.submit"


def test_fullscreen_page_keys(default: KeybindingManager, tmp_path: Path) -> None:
    assert route_editor_key(default, "page up", FULLSCREEN) == "tui.altScreen.pageUp"
    assert route_editor_key(default, "ctrl page up", FULLSCREEN) == "tui.editor.pageUp"
    assert route_editor_key(default, "page up", REGULAR) == "tui.editor.pageUp"
    assert route_editor_key(default, "home", FULLSCREEN) == "tui.altScreen.top"
    assert route_editor_key(default, "ctrl home", FULLSCREEN) == "tui.editor.cursorLineStart"
    assert route_editor_key(default, "end", REGULAR) == "tui.editor.cursorLineEnd"
    swapped = manager_from(tmp_path, {"tui.altScreen.pageUp": "ctrl+pageUp"})
    assert route_editor_key(swapped, "page up", FULLSCREEN) == "tui.editor.pageUp"
    assert route_editor_key(swapped, "ctrl page up", FULLSCREEN) == "tui.altScreen.pageUp"


def test_fullscreen_search_box_keys(default: KeybindingManager) -> None:
    assert route_editor_key(default, "enter", SEARCHING) == "tui.altScreen.searchNext"
    assert route_editor_key(default, "shift enter", SEARCHING) == "tui.altScreen.searchPrevious"
    assert route_editor_key(default, "esc", SEARCHING) == "tui.altScreen.searchClose"
    # Without the search box focused the same keys belong to the editor.
    assert route_editor_key(default, "enter", FULLSCREEN) == "tui.input.submit"
    assert route_editor_key(default, "esc", FULLSCREEN) == "app.interrupt"
    assert route_editor_key(default, "ctrl F", FULLSCREEN) == "tui.altScreen.search"
    assert route_editor_key(default, "ctrl F", REGULAR) is None


def test_windows_search_shadows_cursor_right_in_fullscreen() -> None:
    manager = KeybindingManager("wsl")
    assert route_editor_key(manager, "ctrl f", FULLSCREEN) == "tui.altScreen.search"
    assert route_editor_key(manager, "ctrl f", REGULAR) == "tui.editor.cursorRight"


def test_previous_prompt_beats_a_history_binding_in_fullscreen(tmp_path: Path) -> None:
    manager = manager_from(tmp_path, {"tui.editor.historyPrevious": "ctrl+up"})
    assert route_editor_key(manager, "ctrl up", FULLSCREEN) == "tui.altScreen.previousPrompt"
    assert route_editor_key(manager, "ctrl up", REGULAR) == "tui.editor.historyPrevious"


def test_app_binding_beats_editor_action(tmp_path: Path) -> None:
    manager = manager_from(tmp_path, {"app.model.select": "ctrl+k"})
    assert route_editor_key(manager, "ctrl k", REGULAR) == "app.model.select"


def test_picker_only_ids_never_act_in_the_editor(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl s", REGULAR) is None
    assert route_editor_key(default, "meta down", REGULAR) is None
    assert route_editor_key(default, "L", REGULAR) is None
    for definition in KEYBINDINGS:
        in_editor = Context.EDITOR in definition.contexts
        routed = definition.id in EDITOR_APP_IDS or definition.id in EDITOR_ACTION_IDS
        # app.redraw never reaches a widget: the main loop's input filter takes it (test_redraw.py).
        special = definition.id in {"app.interrupt", "app.exit", "app.clipboard.pasteImage", "app.redraw"}
        assert in_editor == (routed or special), definition.id


def test_extensions_and_paste_order(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl v", REGULAR) == "app.clipboard.pasteImage"
    assert route_editor_key(default, "meta x", REGULAR, extension_keys={"meta x"}) == EXTENSION
    # Fullscreen viewport keys still come first.
    assert route_editor_key(default, "page up", FULLSCREEN, extension_keys={"page up"}) == "tui.altScreen.pageUp"


def test_clear_wins_over_copy_and_text_is_unrouted(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl c", REGULAR) == "app.clear"
    assert route_editor_key(default, "a", REGULAR) is None
    assert route_editor_key(default, ("mouse press", 1, 0, 0), REGULAR) is None


def test_ctrl_j_and_shift_enter_insert_a_line(default: KeybindingManager) -> None:
    assert route_editor_key(default, "ctrl j", REGULAR) == "tui.input.newLine"
    assert route_editor_key(default, "shift enter", REGULAR) == "tui.input.newLine"
    assert route_editor_key(default, "meta enter", REGULAR) == "app.message.followUp"


def test_scopes() -> None:
    assert "tui.select.up" in ids_in_scope("tree")
    assert "app.tree.filter.all" in ids_in_scope("tree")
    assert "app.models.enableAll" not in ids_in_scope("tree")
    assert "tui.altScreen.top" in ids_in_scope("fullscreen editor")
    assert "tui.altScreen.top" not in ids_in_scope("editor")


def test_extension_shortcut_on_a_reserved_key_is_skipped(default: KeybindingManager) -> None:
    check = check_extension_shortcut(default, parse_key("ctrl+k"), "my-ext")
    assert not check.allowed
    assert check.clashes == ("tui.editor.deleteToLineEnd",)
    assert check.warning == "my-ext: shortcut ctrl+k skipped: it is reserved by tui.editor.deleteToLineEnd"


def test_extension_shortcut_over_a_plain_builtin_wins_with_a_warning(default: KeybindingManager) -> None:
    check = check_extension_shortcut(default, parse_key("ctrl+w"), "my-ext")
    assert check.allowed
    assert check.warning == "my-ext: shortcut ctrl+w overrides tui.editor.deleteWordBackward"
    free = check_extension_shortcut(default, parse_key("alt+shift+x"), "my-ext")
    assert free.allowed and free.warning is None and free.clashes == ()


def test_extension_check_uses_resolved_keys(tmp_path: Path) -> None:
    manager = manager_from(tmp_path, {"app.clear": "alt+c"})
    moved = check_extension_shortcut(manager, parse_key("ctrl+c"), "x")
    assert moved.clashes == ("tui.input.copy", "tui.select.cancel")
    assert "app.clear" not in moved.clashes
    assert not check_extension_shortcut(manager, parse_key("alt+c"), "x").allowed
    assert len(RESERVED_IDS) == 19  # the 18 of keybindings.md §9 and app.redraw
