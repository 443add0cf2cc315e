"""Generic select list: rendering, fuzzy filter, wrap-around moves, paging, signals."""

from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import SelectItem, SelectList
from apex_tui.widgets.pickers._fuzzy import fuzzy_filter, fuzzy_score

from .conftest import Signals


def _fruits(keymap: KeybindingManager, **kwargs: object) -> SelectList[str]:
    names = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape"]
    items = [SelectItem(n, n.title(), f"{len(n)} letters") for n in names]
    return SelectList(items, keymap, title="Fruit", **kwargs)  # type: ignore[arg-type]


def test_renders_title_query_rows_and_rules(keymap: KeybindingManager) -> None:
    widget = _fruits(keymap, max_visible=3)
    assert render_text(widget, (30,), strip=True) == [
        "── Fruit ─────────────────────",
        ">",
        "› Apple  5 letters",
        "  Banana  6 letters",
        "  Cherry  6 letters",
        "  (1/7)",
        "──────────────────────────────",
    ]


def test_typing_filters_fuzzily_and_backspace_widens(keymap: KeybindingManager) -> None:
    widget = _fruits(keymap)
    signals = Signals(widget, "select", "highlight")
    assert press(widget, (30,), "e", "r", "y") == []
    assert [item.value for item in widget.visible_items] == ["cherry", "elderberry"]
    assert widget.get_cursor_coords((30,)) == (5, 1)
    press(widget, (30,), "backspace", "backspace", "backspace")
    assert len(widget.visible_items) == 7
    press(widget, (30,), "z", "z")
    assert "  No matches" in render_text(widget, (30,), strip=True)
    press(widget, (30,), "enter")
    assert "select" not in signals.names()


def test_moves_wrap_and_pages_clamp(keymap: KeybindingManager) -> None:
    widget = _fruits(keymap, max_visible=3)
    press(widget, (30,), "up")
    assert widget.highlighted_value() == "grape"
    press(widget, (30,), "down")
    assert widget.highlighted_value() == "apple"
    press(widget, (30,), "page down")
    assert widget.highlighted_value() == "date"
    press(widget, (30,), "page down", "page down")
    assert widget.highlighted_value() == "grape"
    assert render_text(widget, (30,), strip=True)[2:5] == [
        "  Elderberry  10 letters",
        "  Fig  3 letters",
        "› Grape  5 letters",
    ]
    press(widget, (30,), "page up")
    assert widget.highlighted_value() == "date"


def test_confirm_and_cancel_emit_signals(keymap: KeybindingManager) -> None:
    widget = _fruits(keymap)
    signals = Signals(widget, "select", "cancel", "highlight")
    press(widget, (30,), "down", "enter", "esc")
    assert signals.events == [("highlight", "banana"), ("select", "banana"), ("cancel", None)]


def test_unbound_keys_are_returned(keymap: KeybindingManager) -> None:
    widget = _fruits(keymap, filterable=False)
    assert press(widget, (30,), "a", "f5") == ["a", "f5"]


def test_user_bindings_replace_default_keys() -> None:
    keymap = KeybindingManager("linux", {"tui.select.down": ["ctrl+n"], "tui.select.confirm": ["tab"]})
    widget = _fruits(keymap, filterable=False)
    signals = Signals(widget, "select")
    assert press(widget, (30,), "down") == ["down"]
    press(widget, (30,), "ctrl n", "tab")
    assert signals.events == [("select", "banana")]


def test_fuzzy_ranks_contiguous_before_scattered() -> None:
    assert fuzzy_score("son", "claude-sonnet") is not None
    assert fuzzy_score("xyz", "claude-sonnet") is None
    ranked = fuzzy_filter("son", ["s-o-n", "sonnet", "mason"], str)
    assert ranked == ["sonnet", "mason", "s-o-n"]
    assert fuzzy_filter("  ", ["b", "a"], str) == ["b", "a"]
