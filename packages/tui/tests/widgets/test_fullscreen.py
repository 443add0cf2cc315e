"""Fullscreen transcript extras: scrollbar column, mouse selection, link clicks, OSC 8 link styles."""

import urwid
from urwid.testing import render_runs, render_text

from apex_tui.widgets import (
    AssistantTextBlock,
    Block,
    LinkStyle,
    MarkdownRenderer,
    NoticeBlock,
    RenderContext,
    TranscriptView,
    hyperlink_escape,
    link_url,
)
from apex_tui.widgets.scrollbar import THUMB, TRACK, thumb

SIZE = (40, 10)


def _lines(ctx: RenderContext, count: int) -> list[Block]:
    return [NoticeBlock(ctx, "info", f"line {i}") for i in range(count)]


def _bar(view: TranscriptView) -> str:
    return "".join(row[-1] for row in render_text(view, SIZE))


def test_thumb_geometry() -> None:
    assert thumb(10, 0, 5) == (0, 10)
    assert thumb(10, 0, 100) == (0, 1)
    assert thumb(10, 90, 100) == (9, 1)
    assert thumb(10, 45, 100) == (4, 1)
    assert thumb(10, 0, 20) == (0, 5)
    assert thumb(10, 10, 20) == (5, 5)


def test_scrollbar_modes() -> None:
    ctx = RenderContext()
    short = TranscriptView(ctx, items=_lines(ctx, 3), scrollbar="auto")
    assert render_text(short, SIZE, strip=True)[0] == " line 0"
    assert _bar(short) == " " * 10  # auto: nothing to scroll, no column
    long = TranscriptView(ctx, items=_lines(ctx, 100), scrollbar="auto")
    assert _bar(long) == TRACK * 9 + THUMB  # following: the thumb sits at the bottom
    long.scroll_to_top()
    assert _bar(long) == THUMB + TRACK * 9
    assert render_text(long, SIZE)[0].rstrip(TRACK + THUMB).rstrip() == " line 0"
    always = TranscriptView(ctx, items=_lines(ctx, 3), scrollbar="always")
    assert _bar(always) == THUMB * 10
    assert render_runs(always, SIZE)[0][-1] == ("scrollbar.thumb", THUMB)
    hidden = TranscriptView(ctx, items=_lines(ctx, 100))
    assert _bar(hidden) == " " * 10
    hidden.set_scrollbar("always")
    assert _bar(hidden) == TRACK * 9 + THUMB


def test_scrollbar_estimates_long_transcripts() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 50_000), scrollbar="always")
    assert _bar(view) == TRACK * 9 + THUMB
    view.scroll_to_top()
    assert _bar(view) == THUMB + TRACK * 9
    assert sum(b.builds for b in view.walker) <= 30


def test_drag_selects_rows_and_emits_the_text() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 3), mouse_select=True)
    render_text(view, SIZE)
    copied: list[str] = []
    urwid.connect_signal(view, "selection", lambda _w, text: copied.append(text))
    assert view.mouse_event(SIZE, "mouse press", 1, 3, 0, True)
    assert view.mouse_event(SIZE, "mouse drag", 1, 4, 2, True)
    runs = render_runs(view, SIZE)
    assert runs[0] == [(None, " li"), ("selection", "ne 0".ljust(37))]  # to the row's end, as terminals do
    assert runs[1] == [("selection", " line 1".ljust(40))]
    assert runs[2] == [("selection", " line"), (None, " 2".ljust(35))]
    assert view.mouse_event(SIZE, "mouse release", 0, 4, 2, True)
    assert copied == ["ne 0\n line 1\n line"]
    view.clear_selection()
    assert all(attr is None for attr, _ in render_runs(view, SIZE)[0])


def test_dragging_on_the_edge_scrolls_and_extends_the_selection() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 30), mouse_select=True)
    render_text(view, SIZE)  # lines 20..29
    copied: list[str] = []
    urwid.connect_signal(view, "selection", lambda _w, text: copied.append(text))
    view.mouse_event(SIZE, "mouse press", 1, 0, 5, True)  # line 25
    view.mouse_event(SIZE, "mouse drag", 1, 0, 0, True)  # top edge: scroll up one line
    view.mouse_event(SIZE, "mouse drag", 1, 0, 0, True)
    view.mouse_event(SIZE, "mouse release", 0, 0, 0, True)
    assert render_text(view, SIZE, strip=True)[0] == " line 18"
    assert copied == [" line 18\n line 19\n line 20\n line 21\n line 22\n line 23\n line 24\n"]


def test_clicking_a_link_emits_its_url_and_plain_clicks_do_nothing() -> None:
    ctx = RenderContext(markdown=MarkdownRenderer(hyperlinks=True))
    view = TranscriptView(
        ctx, items=[AssistantTextBlock(ctx, "see [the docs](https://example.com/d) now")], mouse_select=True
    )
    rows = render_text(view, SIZE, strip=True)
    assert rows[1] == " see the docs now"
    opened: list[str] = []
    urwid.connect_signal(view, "link", lambda _w, url: opened.append(url))
    view.mouse_event(SIZE, "mouse press", 1, 6, 1, True)
    view.mouse_event(SIZE, "mouse release", 0, 6, 1, True)
    view.mouse_event(SIZE, "mouse press", 1, 1, 1, True)
    view.mouse_event(SIZE, "mouse release", 0, 1, 1, True)
    assert opened == ["https://example.com/d"]


def test_markdown_links_with_and_without_hyperlinks() -> None:
    plain = MarkdownRenderer()
    canvas = plain.render("[docs](https://x.dev)", 40)
    assert canvas is not None
    assert canvas.text[0].decode().rstrip() == "docs (https://x.dev)"
    linked = MarkdownRenderer(hyperlinks=True)
    canvas = linked.render("[docs](https://x.dev)", 40)
    assert canvas is not None
    (attr, _, run), *_ = next(iter(canvas.content()))
    assert run == b"docs"
    assert attr == "md.link"  # palette lookups see the plain style name
    assert link_url(attr) == "https://x.dev"
    assert hyperlink_escape(attr) == "\x1b]8;;https://x.dev\x1b\\"
    assert hyperlink_escape("md.link") == "\x1b]8;;\x1b\\"
    assert link_url(LinkStyle("md.link", "a\x1b]b")) == "a\x1b]b"
    assert hyperlink_escape(LinkStyle("md.link", "a\x1b]b")) == "\x1b]8;;a]b\x1b\\"
    linked.set_hyperlinks(False)
    canvas = linked.render("[docs](https://x.dev)", 40)
    assert canvas is not None
    assert canvas.text[0].decode().rstrip() == "docs (https://x.dev)"


def test_hyperlink_setting_is_part_of_the_block_cache_key() -> None:
    ctx = RenderContext()
    block = AssistantTextBlock(ctx, "[docs](https://x.dev)")
    assert render_text(block, (40,), strip=True)[1] == " docs (https://x.dev)"
    ctx.markdown.set_hyperlinks(True)
    assert render_text(block, (40,), strip=True)[1] == " docs"
