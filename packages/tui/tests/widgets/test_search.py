"""Transcript search: counts, wrapping navigation, highlights of the rows on screen, the search box, 50k blocks."""

import urwid
from urwid.testing import render_runs, render_text

from apex_tui.widgets import (
    Block,
    DetailLevel,
    NoticeBlock,
    RenderContext,
    SearchBox,
    ToolCallBlock,
    TranscriptSearch,
    TranscriptView,
)

SIZE = (40, 10)


def _view(texts: list[str]) -> tuple[RenderContext, TranscriptView]:
    ctx = RenderContext()
    return ctx, TranscriptView(ctx, items=[NoticeBlock(ctx, "info", t) for t in texts])


def _texts() -> list[str]:
    texts = [f"line {i}" for i in range(20)]
    texts[3] = "a needle here"
    texts[7] = "needle and NEEDLE"
    texts[15] = "last needle"
    return texts


def _styles_of(view: TranscriptView, row: int) -> list[tuple[object, str]]:
    return [(attr, text) for attr, text in render_runs(view, SIZE)[row] if attr is not None]


def test_count_wraps_and_follows_the_current_match() -> None:
    _, view = _view(_texts())
    render_text(view, SIZE)  # showing blocks 10..19
    search = TranscriptSearch(view)
    search.attach()
    search.set_query("needle")
    assert search.total == 4
    assert search.label == "4/4"  # the last match at or above the bottom of the view
    search.next()
    assert search.label == "1/4"  # wrapped to the first
    rows = render_text(view, SIZE, strip=True)
    assert " a needle here" in rows
    assert not view.following
    search.previous()
    assert search.label == "4/4"
    search.previous()
    assert search.label == "3/4"
    assert search.match(2) == (7, 1)  # second occurrence in block 7 (case-insensitive)


def test_current_and_other_matches_are_highlighted() -> None:
    _, view = _view(_texts())
    render_text(view, SIZE)
    search = TranscriptSearch(view)
    search.attach()
    search.set_query("needle")
    search.previous()  # 3/4: the "NEEDLE" of block 7
    rows = render_text(view, SIZE, strip=True)
    row = rows.index(" needle and NEEDLE")
    assert _styles_of(view, row) == [("search.match", "needle"), ("search.current", "NEEDLE")]
    search.previous()  # 2/4: the first occurrence in the same block
    assert _styles_of(view, row) == [("search.current", "needle"), ("search.match", "NEEDLE")]
    search.detach()
    assert _styles_of(view, row) == []


def test_no_matches_and_empty_query() -> None:
    _, view = _view(_texts())
    search = TranscriptSearch(view)
    assert search.label == ""
    search.set_query("haystack")
    assert search.label == "No matches"
    search.next()
    assert search.current is None


def test_match_inside_a_collapsed_tool_preview_scrolls_to_its_block() -> None:
    ctx = RenderContext()
    tool = ToolCallBlock(ctx, "read", {"path": "a.txt"})
    tool.set_result("\n".join(f"row {i}" for i in range(30)) + "\nhidden treasure")
    items: list[Block] = [tool, *[NoticeBlock(ctx, "info", f"line {i}") for i in range(40)]]
    view = TranscriptView(ctx, items=items)
    render_text(view, SIZE)
    search = TranscriptSearch(view)
    search.attach()
    search.set_query("treasure")
    assert search.label == "1/1"
    render_text(view, SIZE)
    assert 0 in view.visible_positions
    view.set_detail(DetailLevel.ALL)
    search.refresh()
    search.next()
    frame = render_text(view, SIZE, strip=True)
    assert any("hidden treasure" in row for row in frame)


def test_refresh_counts_new_blocks() -> None:
    ctx, view = _view(_texts())
    search = TranscriptSearch(view)
    search.set_query("needle")
    view.append(NoticeBlock(ctx, "info", "one more needle"))
    search.refresh()
    assert search.total == 5


def test_search_box_keys() -> None:
    _, view = _view(_texts())
    render_text(view, SIZE)
    search = TranscriptSearch(view)
    box = SearchBox(search)
    closed: list[bool] = []
    urwid.connect_signal(box, "close", lambda *_: closed.append(True))
    for key in "needle":
        assert box.keypress((40,), key) is None
    assert render_text(box, (40,)) == ["Search: needle" + " " * 23 + "4/4"]
    box.keypress((40,), "enter")
    assert search.label == "1/4"
    box.keypress((40,), "shift enter")
    assert search.label == "4/4"
    box.keypress((40,), "backspace")
    assert box.query == "needl"
    assert box.keypress((40,), "page up") == "page up"
    box.keypress((40,), "esc")
    assert closed == [True]
    assert box.get_cursor_coords((40,)) == (13, 0)


def test_search_over_50k_blocks_builds_only_what_is_shown() -> None:
    ctx = RenderContext()
    items: list[Block] = [
        NoticeBlock(ctx, "info", f"entry {i} {'marker' if i % 1000 == 7 else ''}") for i in range(50_000)
    ]
    view = TranscriptView(ctx, items=items)
    render_text(view, SIZE)
    search = TranscriptSearch(view)
    search.attach()
    search.set_query("marker")
    search.next()
    assert search.total == 50
    assert search.label == "1/50"
    frame = render_text(view, SIZE, strip=True)
    assert any(row.startswith(" entry 7 marker") for row in frame)
    # What keeps search fast is building only the blocks around the jumps, never all 50k; its speed itself
    # is measured by the benchmarks, not asserted here.
    assert sum(block.builds for block in view.walker) < 100
