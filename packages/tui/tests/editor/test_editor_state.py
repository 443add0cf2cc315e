"""Pure editor state: history, kill ring, undo, paste markers (tui.md §5)."""

from apex_tui.editor import History, KillRing, PasteStore, UndoStack, clean_paste
from apex_tui.editor._state import Snapshot


def test_history_is_newest_first_skips_repeats_and_restores_the_draft() -> None:
    history = History()
    for text in ("one", "two", "two", "  "):
        history.add(text)
    assert history.entries == ["two", "one"]
    assert history.older("draft") == "two"
    assert history.older("ignored") == "one"
    assert history.older("ignored") is None
    assert history.newer() == "two"
    assert history.newer() == "draft"
    assert not history.browsing


def test_history_keeps_at_most_100_entries() -> None:
    history = History()
    for index in range(150):
        history.add(f"p{index}")
    assert len(history.entries) == 100
    assert history.entries[0] == "p149"


def test_kill_ring_merges_consecutive_kills_and_rotates() -> None:
    ring = KillRing()
    ring.kill("world", backward=True, merge=False)
    ring.kill("hello ", backward=True, merge=True)
    assert ring.newest() == "hello world"
    ring.kill("x", backward=False, merge=False)
    ring.kill("y", backward=False, merge=True)
    assert ring.entries == ["hello world", "xy"]
    assert ring.rotate() == "hello world"


def test_undo_merges_typing_per_word() -> None:
    undo = UndoStack()
    for index, char in enumerate("ab cd"):
        undo.record(Snapshot("ab cd"[:index], index), "type", char)
    assert [s.text for s in undo.snapshots] == ["", "ab "]


def test_paste_markers_expand_and_clean() -> None:
    store = PasteStore()
    twelve = "\n".join(f"line {i}" for i in range(12))
    assert PasteStore.is_large(twelve)
    marker = store.marker(twelve)
    assert marker == "[paste #1 +12 lines]"
    long_line = "x" * 1200
    assert store.marker(long_line) == "[paste #2 1200 chars]"
    assert store.expand(f"see {marker}!") == f"see {twelve}!"
    assert store.marker_ending_at(f"a {marker}", len(marker) + 2) == 2
    assert clean_paste("a\r\nb\tc\x07") == "a\nb    c"
