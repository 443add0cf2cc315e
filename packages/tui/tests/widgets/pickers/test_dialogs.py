"""Confirm, input and select dialogs, including the countdown hooks."""

from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import ConfirmDialog, InputDialog, SelectDialog

from .conftest import FakeLoop, Signals

SIZE = (40,)


def test_confirm_dialog_answers_and_swallows_other_keys(keymap: KeybindingManager) -> None:
    dialog = ConfirmDialog("Delete session?", keymap, message="This cannot be undone.", hint="enter yes · esc no")
    signals = Signals(dialog, "confirm", "cancel")
    assert render_text(dialog, SIZE, strip=True) == [
        "── Delete session? ─────────────────────",
        "This cannot be undone.",
        "enter yes · esc no",
        "────────────────────────────────────────",
    ]
    assert press(dialog, SIZE, "x", "enter", "ctrl c") == []
    assert signals.events == [("confirm", None), ("cancel", None)]


def test_confirm_dialog_countdown_ticks_and_times_out(keymap: KeybindingManager) -> None:
    loop = FakeLoop()
    dialog = ConfirmDialog("Trust this project?", keymap)
    signals = Signals(dialog, "timeout", "confirm")
    dialog.start_timeout(loop, 3)
    assert render_text(dialog, SIZE, strip=True)[0].startswith("── Trust this project? (3s) ──")
    loop.fire()
    assert render_text(dialog, SIZE, strip=True)[0].startswith("── Trust this project? (2s) ──")
    loop.fire()
    loop.fire()
    assert signals.events == [("timeout", None)]
    assert loop.pending == {} and loop.delays == [1.0, 1.0, 1.0]


def test_answer_stops_the_countdown(keymap: KeybindingManager) -> None:
    loop = FakeLoop()
    dialog = ConfirmDialog("Sure?", keymap)
    dialog.start_timeout(loop, 10)
    press(dialog, SIZE, "enter")
    assert loop.pending == {} and dialog.countdown.remaining is None


def test_input_dialog_edits_and_submits(keymap: KeybindingManager) -> None:
    dialog = InputDialog("Label", keymap, placeholder="empty clears the label")
    signals = Signals(dialog, "submit", "cancel")
    assert render_text(dialog, SIZE, strip=True)[1] == "> empty clears the label"
    press(dialog, SIZE, *"helo", "left", "l", "home", "H", "delete")
    assert dialog.text == "Hello"
    assert dialog.get_cursor_coords(SIZE) == (3, 1)
    press(dialog, SIZE, "end", " ", *"world", "ctrl w", "enter")
    assert signals.events == [("submit", "Hello ")]
    press(dialog, SIZE, "esc")
    assert signals.names() == ["submit", "cancel"]


def test_masked_input_shows_stars(keymap: KeybindingManager) -> None:
    dialog = InputDialog("API key", keymap, masked=True, message="Paste your key")
    press(dialog, SIZE, *"sk-123")
    assert render_text(dialog, SIZE, strip=True)[1:3] == ["Paste your key", "> ******"]
    assert dialog.text == "sk-123"


def test_select_dialog_returns_option_and_times_out(keymap: KeybindingManager) -> None:
    loop = FakeLoop()
    dialog = SelectDialog("Pick", ["Allow", "Deny"], keymap, message="Run rm?", descriptions=["once"])
    signals = Signals(dialog, "select", "timeout")
    dialog.start_timeout(loop, 2)
    assert render_text(dialog, SIZE, strip=True) == [
        "── Pick (2s) ───────────────────────────",
        "Run rm?",
        "› Allow  once",
        "  Deny",
        "────────────────────────────────────────",
    ]
    loop.fire()
    press(dialog, SIZE, "down", "enter")
    assert signals.events == [("select", "Deny")]
    assert loop.pending == {}
    other = SelectDialog("Pick", ["a"], keymap)
    other_signals = Signals(other, "timeout")
    other.start_timeout(loop, 1)
    loop.fire()
    assert other_signals.events == [("timeout", None)]
