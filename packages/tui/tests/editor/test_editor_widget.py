"""The editor widget driven by urwid key names through the keybindings (tui.md §5, keybindings.md §5.1)."""

from pathlib import Path
from typing import Any

import urwid
from urwid.testing import press, render_text

from apex_tui.editor import CommandInfo, Editor, FileIndex
from apex_tui.keybindings import KeybindingManager

SIZE = (40,)


def make(manager: KeybindingManager | None = None, **kwargs: Any) -> tuple[Editor, list[str], list[str]]:
    editor = Editor(manager or KeybindingManager(), cwd=Path.cwd(), **kwargs)
    submitted: list[str] = []
    actions: list[str] = []
    urwid.connect_signal(editor, "submit", lambda _e, text: submitted.append(text))
    urwid.connect_signal(editor, "action", lambda _e, action: actions.append(action))
    return editor, submitted, actions


def type_text(editor: Editor, text: str) -> None:
    press(editor, SIZE, *text)


def test_shift_enter_breaks_the_line_and_enter_submits() -> None:
    editor, submitted, _ = make()
    press(editor, SIZE, "a", "shift enter", "b", "enter")
    assert submitted == ["a\nb"]


def test_backslash_enter_is_a_line_break() -> None:
    editor, submitted, _ = make()
    press(editor, SIZE, "a", "\\", "enter")
    assert submitted == []
    assert editor.text == "a\n"


def test_up_on_empty_editor_recalls_the_last_prompt_and_down_returns_the_draft() -> None:
    editor, _, _ = make()
    editor.clear(submitted="first prompt")
    press(editor, SIZE, "up")
    assert editor.text == "first prompt"
    press(editor, SIZE, "down")
    assert editor.text == ""


def test_large_paste_becomes_a_marker_and_submits_in_full() -> None:
    editor, submitted, _ = make()
    lines = [f"row {i}" for i in range(12)]
    keys = ["begin paste"]
    for index, line in enumerate(lines):
        keys.extend(line)
        if index < len(lines) - 1:
            keys.append("enter")
    keys.append("end paste")
    press(editor, SIZE, *keys)
    assert editor.text == "[paste #1 +12 lines]"
    assert "[paste #1 +12 lines]" in "\n".join(render_text(editor, SIZE))
    press(editor, SIZE, "enter")
    assert submitted == ["\n".join(lines)]
    press(editor, SIZE, "backspace")


def test_ctrl_w_twice_then_ctrl_y_restores_both_words_and_meta_y_cycles() -> None:
    editor, _, _ = make()
    type_text(editor, "old ")
    press(editor, SIZE, "ctrl w")
    editor.undo_stack.break_merge()
    editor.set_text("")
    type_text(editor, "one two")
    press(editor, SIZE, "ctrl w", "ctrl w")
    assert editor.text == ""
    press(editor, SIZE, "ctrl y")
    assert editor.text == "one two"
    press(editor, SIZE, "meta y")
    assert editor.text == "old "


def test_undo_reverts_a_word_at_a_time() -> None:
    editor, _, _ = make()
    type_text(editor, "hello world")
    press(editor, SIZE, "ctrl _")
    assert editor.text == "hello "
    press(editor, SIZE, "ctrl _")
    assert editor.text == ""


def test_ctrl_d_deletes_forward_on_text_and_exits_on_empty() -> None:
    editor, _, actions = make()
    type_text(editor, "ab")
    press(editor, SIZE, "home", "ctrl d")
    assert editor.text == "b"
    assert actions == []
    editor.set_text("")
    press(editor, SIZE, "ctrl d")
    assert actions == ["app.exit"]


def test_slash_autocomplete_lists_model_and_enter_submits_it() -> None:
    commands = [CommandInfo("model", "Select model"), CommandInfo("name", "Name")]
    editor, submitted, actions = make(commands=lambda: commands)
    type_text(editor, "/mo")
    assert [s.label for s in editor.suggestions] == ["/model"]
    assert "/model" in "\n".join(render_text(editor, SIZE))
    press(editor, SIZE, "enter")
    assert submitted == ["/model"]


def test_escape_closes_the_list_without_an_interrupt() -> None:
    editor, _, actions = make(commands=lambda: [CommandInfo("model")])
    type_text(editor, "/m")
    press(editor, SIZE, "esc")
    assert not editor.autocomplete_open
    assert actions == []
    press(editor, SIZE, "esc")
    assert actions == ["app.interrupt"]


def test_at_suggests_project_files(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hi")
    (tmp_path / "src").mkdir()
    (tmp_path / "ignored.log").write_text("")
    (tmp_path / ".gitignore").write_text("*.log\n")
    editor, _, _ = make(files=FileIndex(tmp_path))
    type_text(editor, "see @READ")
    assert [s.label for s in editor.suggestions] == ["README.md"]
    press(editor, SIZE, "tab")
    assert editor.text == "see @README.md "
    type_text(editor, "@ignored")
    assert editor.suggestions == []


def test_history_previous_rebound_to_ctrl_p_browses_instead_of_cycling_models() -> None:
    manager = KeybindingManager(user_bindings={"tui.editor.historyPrevious": ["ctrl+p"]})
    editor, _, actions = make(manager)
    editor.clear(submitted="earlier")
    press(editor, SIZE, "ctrl p")
    assert editor.text == "earlier"
    assert actions == []


def test_app_ids_are_emitted_as_actions() -> None:
    editor, _, actions = make()
    press(editor, SIZE, "ctrl o", "ctrl t", "meta enter", "ctrl c")
    assert actions == ["app.tools.expand", "app.thinking.toggle", "app.message.followUp", "app.clear"]


def test_rendering_has_rules_and_scroll_markers() -> None:
    editor, _, _ = make()
    editor.set_text("\n".join(str(i) for i in range(8)))
    rows = render_text(editor, SIZE)
    assert rows[0].startswith("─── ↑ 3 more")
    assert rows[-1] == "─" * 40
    assert rows[1:6] == [f"{i}".ljust(40) for i in range(3, 8)]


def test_a_recalled_command_does_not_open_autocomplete_and_up_goes_further_back() -> None:
    """Up recalls `/model` from the history; the suggestion list stays closed, so the next Up recalls the entry
    before it instead of moving in the list. Typing opens the list again."""
    commands = [CommandInfo("model", "Select model"), CommandInfo("mode", "A mode")]
    editor, _submitted, _ = make(commands=lambda: commands)
    for text in ("first prompt", "/model", "second prompt"):
        editor.clear(submitted=text)
    press(editor, SIZE, "up", "up")
    assert editor.text == "/model" and not editor.autocomplete_open
    press(editor, SIZE, "up")
    assert editor.text == "first prompt"
    press(editor, SIZE, "down")
    assert editor.text == "/model" and not editor.autocomplete_open
    press(editor, SIZE, "backspace")
    assert editor.autocomplete_open
