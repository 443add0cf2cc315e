"""Resume picker: scope, sort cycle, named filter, paths, search syntaxes, rename and delete flows."""

from datetime import UTC, datetime, timedelta

from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import SessionEntry, SessionPicker

from .conftest import Signals

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SIZE = (70,)


def _entry(path: str, minutes: int, **kwargs: object) -> SessionEntry:
    return SessionEntry(path=path, modified=NOW - timedelta(minutes=minutes), **kwargs)  # type: ignore[arg-type]


def _current() -> list[SessionEntry]:
    return [
        _entry("/s/a.jsonl", 5, first_message="fix the parser", message_count=4, all_messages_text="tokenizer bug"),
        _entry("/s/b.jsonl", 120, name="Release notes", first_message="write notes", message_count=10),
        _entry("/s/c.jsonl", 1, first_message="fork of b", message_count=2, parent_session_path="/s/b.jsonl"),
        _entry("/s/d.jsonl", 3 * 24 * 60, first_message="old  idea\nsecond line", message_count=1),
    ]


def _picker(keymap: KeybindingManager, **kwargs: object) -> SessionPicker:
    return SessionPicker(_current(), keymap, now=lambda: NOW, **kwargs)  # type: ignore[arg-type]


def _paths(picker: SessionPicker) -> list[str]:
    return [item.value.path[3] for item in picker.visible_items]


def test_threaded_render_with_forks_under_parent(keymap: KeybindingManager) -> None:
    picker = _picker(keymap, active_path="/s/a.jsonl")
    assert render_text(picker, SIZE, strip=True) == [
        "── Resume Session (Current Folder) ───────────────────────────────────",
        "  Sort: Threaded",
        ">",
        "› fix the parser  4 msg · 5m · current",
        "  Release notes  10 msg · 2h",
        "    fork of b  2 msg · 1m",
        "  old idea second line  1 msg · 3d",
        "──────────────────────────────────────────────────────────────────────",
    ]


def test_sort_cycle_named_filter_and_paths(keymap: KeybindingManager) -> None:
    picker = _picker(keymap)
    press(picker, SIZE, "ctrl s")
    assert render_text(picker, SIZE, strip=True)[1] == "  Sort: Recent"
    assert _paths(picker) == ["c", "a", "b", "d"]
    press(picker, SIZE, "ctrl s")
    assert render_text(picker, SIZE, strip=True)[1] == "  Sort: Fuzzy"
    press(picker, SIZE, "ctrl s")
    assert picker.sort_mode == "threaded"
    press(picker, SIZE, "ctrl n")
    assert _paths(picker) == ["b"]
    assert render_text(picker, SIZE, strip=True)[1] == "  Sort: Threaded · Named only"
    press(picker, SIZE, "ctrl n", "ctrl p")
    assert "  fix the parser  4 msg · 5m · /s/a.jsonl" in render_text(picker, SIZE, strip=True)


def test_search_words_phrases_regex_and_fuzzy(keymap: KeybindingManager) -> None:
    picker = _picker(keymap)
    press(picker, SIZE, *"notes write")
    assert _paths(picker) == ["b"]
    picker.query.set_text('"the parser"')
    picker.refilter()
    assert _paths(picker) == ["a"]
    picker.query.set_text("tokenizer")  # the all-messages text of a record (when given) is searched
    picker.refilter()
    assert _paths(picker) == ["a"]
    picker.query.set_text("re:^fork|old")
    picker.refilter()
    assert _paths(picker) == ["c", "d"]
    picker.query.set_text("re:(")
    picker.refilter()
    assert "  Invalid regular expression" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "ctrl s", "ctrl s")
    picker.query.set_text("fxprs")
    picker.refilter()
    assert _paths(picker) == ["a"]


def test_tab_switches_scope_and_requests_rows(keymap: KeybindingManager) -> None:
    picker = _picker(keymap)
    signals = Signals(picker, "scope")
    press(picker, SIZE, "tab")
    assert signals.events == [("scope", "all")]
    assert render_text(picker, SIZE, strip=True)[0].startswith("── Resume Session (All) ──")
    assert picker.visible_items == []
    picker.set_sessions("all", [*_current(), _entry("/o/e.jsonl", 9, first_message="elsewhere", cwd="/o")])
    assert _paths(picker) == ["a", "e", "b", "c", "d"]
    press(picker, SIZE, "tab")
    assert signals.events == [("scope", "all")]  # current rows are loaded: no request
    assert picker.title == "Resume Session (Current Folder)"


def test_rename_inline(keymap: KeybindingManager) -> None:
    picker = _picker(keymap)
    signals = Signals(picker, "rename")
    press(picker, SIZE, "down", "ctrl r")
    assert render_text(picker, SIZE, strip=True)[2] == "  Rename: Release notes"
    press(picker, SIZE, "ctrl u", *"Notes v2", "enter")
    assert signals.events == [("rename", ("/s/b.jsonl", "Notes v2"))]
    assert "› Notes v2  10 msg · 2h" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "ctrl r", "x", "esc")
    assert picker.mode == "list" and len(signals.events) == 1


def test_delete_confirms_refuses_active_and_noninvasive_needs_empty_query(keymap: KeybindingManager) -> None:
    picker = _picker(keymap, active_path="/s/a.jsonl")
    signals = Signals(picker, "delete", "select")
    press(picker, SIZE, "ctrl d")
    assert "  Cannot delete the active session" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "down", "ctrl d")
    assert "  Delete session? (confirm / cancel)" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "esc")
    assert signals.events == [] and picker.mode == "list"
    press(picker, SIZE, "ctrl d", "enter")
    assert signals.events == [("delete", "/s/b.jsonl")]
    assert "b" not in _paths(picker)
    press(picker, SIZE, "o")
    assert press(picker, SIZE, "ctrl backspace") == ["ctrl backspace"]
    press(picker, SIZE, "backspace", "ctrl backspace", "enter")
    assert signals.names() == ["delete", "delete"]
    press(picker, SIZE, "enter")
    assert signals.events[-1][0] == "select"


def test_full_text_mode_asks_the_app_and_shows_snippets(keymap: KeybindingManager) -> None:
    picker = _picker(keymap)
    signals = Signals(picker, "search", "select")
    press(picker, SIZE, "ctrl f")
    lines = render_text(picker, SIZE, strip=True)
    assert lines[0].startswith("── Search Messages (Current Folder) ──")
    assert "  Type words to search every message" in lines and picker.visible_items == []
    press(picker, SIZE, *"pool race")
    assert signals.events[-1] == ("search", ("pool race", "current"))
    assert "  Searching…" in render_text(picker, SIZE, strip=True)
    hit = _entry("/s/a.jsonl", 5, first_message="fix the parser", snippet="a race in the pool", highlights=((2, 6),),
                 entry_id="e1")  # fmt: skip
    picker.set_search_results("pool rac", "current", [hit])  # an answer to an older query is not shown
    assert picker.visible_items == []
    picker.set_search_results("pool race", "current", [hit])
    assert "› fix the parser  0 msg · 5m  a race in the pool" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "enter")
    assert signals.events[-1] == ("select", hit)
    picker.set_search_results("pool race", "current", [])
    assert "  No messages match" in render_text(picker, SIZE, strip=True)
    press(picker, SIZE, "tab")  # the other scope is searched too
    assert signals.events[-1] == ("search", ("pool race", "all"))
    assert picker.title == "Search Messages (All)"
    press(picker, SIZE, "ctrl f")  # back to filtering names: typed text matches names and first messages
    assert picker.title == "Resume Session (All)" and not picker.full_text
