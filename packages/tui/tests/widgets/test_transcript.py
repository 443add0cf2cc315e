"""Transcript: frame cost independent of size, follow-end scrolling, detail cycle, isolation from the dock."""

import urwid
from urwid.testing import render_text

from apex_tui.widgets import (
    AssistantTextBlock,
    Block,
    DetailLevel,
    NoticeBlock,
    RenderContext,
    StatusLine,
    ThinkingBlock,
    ToolCallBlock,
    TranscriptView,
    UserMessageBlock,
)

SIZE = (40, 10)


class Keys:
    """A keymap: action id -> urwid key names (the interface widgets take)."""

    def __init__(self, bindings: dict[str, list[str]]) -> None:
        self.bindings = bindings

    def matches(self, key: str, action_id: str) -> bool:
        return key in self.bindings.get(action_id, [])


def _lines(ctx: RenderContext, count: int) -> list[Block]:
    return [NoticeBlock(ctx, "info", f"line {i}") for i in range(count)]


def _text(view: TranscriptView) -> list[str]:
    return render_text(view, SIZE, strip=True)


def _total_renders(view: TranscriptView) -> int:
    return sum(block.renders for block in view.walker)


def _frame_cost(count: int) -> tuple[int, int]:
    """Block renders and builds for one frame after a one-character delta on the streaming tail."""
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, count))
    tail = AssistantTextBlock(ctx, "streaming")
    view.append(tail)
    keep = view.render(SIZE)  # what the screen holds between frames
    renders, builds = _total_renders(view), sum(b.builds for b in view.walker)
    tail.append("x")
    keep = view.render(SIZE)
    del keep
    return _total_renders(view) - renders, sum(b.builds for b in view.walker) - builds


def test_opens_showing_the_newest_items() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 50_000))
    assert _text(view) == [f" line {i}" for i in range(49_990, 50_000)]
    assert view.visible_positions == list(range(49_990, 50_000))


def test_frame_cost_does_not_depend_on_transcript_size() -> None:
    small = _frame_cost(10)
    large = _frame_cost(50_000)
    assert small == large
    renders, builds = large
    assert renders == 1  # only the tail re-rendered; the other visible blocks came from urwid's canvas cache
    assert builds == 1


def test_first_frame_builds_only_visible_blocks() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 50_000))
    view.render(SIZE)
    assert sum(b.builds for b in view.walker) == 10


def test_follow_scroll_up_and_return() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 100))
    _text(view)
    view.page_up()  # viewport 10 - 4 = 6 rows
    assert not view.following
    assert _text(view)[0] == " line 84"
    view.append(NoticeBlock(ctx, "info", "new output"))
    assert _text(view)[0] == " line 84"  # new output never moves a non-following view
    view.scroll(-1)
    assert _text(view)[0] == " line 83"
    view.half_page_down()
    assert _text(view)[0] == " line 88"
    view.page_down()
    assert view.following
    assert _text(view)[-1] == " new output"
    view.append(NoticeBlock(ctx, "info", "more"))
    assert _text(view)[-2:] == [" new output", " more"]


def test_scrolling_within_a_tall_block() -> None:
    ctx = RenderContext()
    tall = AssistantTextBlock(ctx, "\n\n".join(f"p{i}" for i in range(20)))  # 1 gap row + 39 rows
    view = TranscriptView(ctx, items=[*_lines(ctx, 3), tall])
    assert _text(view)[-1] == " p19"
    view.scroll(-2)
    assert _text(view)[-1] == " p18"
    view.scroll(-1)
    assert _text(view)[-1] == ""
    view.scroll_to_top()
    assert _text(view)[:4] == [" line 0", " line 1", " line 2", ""]
    view.scroll(4)
    assert _text(view)[0] == " p0"
    view.scroll(-1)
    assert _text(view)[0] == ""
    view.scroll_to_bottom()
    assert view.following
    assert _text(view)[-1] == " p19"


def test_keys_go_through_the_keymap() -> None:
    ctx = RenderContext()
    keys = Keys({"tui.altScreen.pageUp": ["page up"], "tui.altScreen.bottom": ["end"], "tui.altScreen.top": ["home"]})
    view = TranscriptView(ctx, keymap=keys, items=_lines(ctx, 100))
    _text(view)
    assert view.keypress(SIZE, "page up") is None
    assert not view.following
    assert view.keypress(SIZE, "page down") == "page down"  # unbound here: urwid's command map never acts
    assert view.keypress(SIZE, "end") is None
    assert view.following
    assert view.keypress(SIZE, "home") is None
    assert _text(view)[0] == " line 0"
    assert TranscriptView(ctx, items=_lines(ctx, 3)).keypress(SIZE, "page up") == "page up"


def test_mouse_wheel_scrolls_one_line() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 100))
    _text(view)
    assert view.mouse_event(SIZE, "mouse press", 4, 0, 0, False)
    assert _text(view)[0] == " line 89"
    assert not view.mouse_event(SIZE, "mouse press", 1, 0, 0, False)


def test_prompt_jumps() -> None:
    ctx = RenderContext()
    items: list[Block] = []
    for turn in range(3):
        items.append(UserMessageBlock(ctx, f"question {turn}"))
        items.extend(_lines(ctx, 20))
    view = TranscriptView(ctx, items=items)
    _text(view)
    view.previous_prompt()
    assert _text(view)[2] == " question 2"
    view.previous_prompt()
    assert _text(view)[2] == " question 1"
    view.next_prompt()
    assert _text(view)[2] == " question 2"
    assert not view.following


def test_short_transcript_sits_at_the_top() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 2))
    assert _text(view) == [" line 0", " line 1", *[""] * 8]
    assert render_text(TranscriptView(ctx), SIZE) == [" " * 40] * 10


def test_detail_cycle_applies_to_existing_blocks() -> None:
    ctx = RenderContext()
    assert ctx.detail is DetailLevel.DETAILS
    bash = ToolCallBlock(ctx, "bash", {"command": "seq 30"})
    bash.set_result("\n".join(str(i) for i in range(1, 31)))
    view = TranscriptView(ctx, items=[ThinkingBlock(ctx, "deep thought"), bash])
    size = (50, 60)
    frame = render_text(view, size, strip=True)
    assert " deep thought" in frame
    assert " 25" not in frame
    assert view.cycle_detail() is DetailLevel.ALL
    frame = render_text(view, size, strip=True)
    assert " 1" in frame
    assert " 25" in frame
    assert view.cycle_detail() is DetailLevel.OVERVIEW
    frame = render_text(view, size, strip=True)
    assert " Thinking..." in frame
    assert " deep thought" not in frame
    assert view.cycle_detail() is DetailLevel.DETAILS
    view.set_hide_thinking(True)
    assert " Thinking..." in render_text(view, size, strip=True)


def test_spinner_ticks_do_not_re_render_the_transcript() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 1_000))

    class Loop:
        def __init__(self) -> None:
            self.alarms: list[object] = []

        def set_alarm_in(self, sec: float, callback: object, user_data: object = None) -> object:
            self.alarms.append(callback)
            return len(self.alarms)

        def remove_alarm(self, handle: object) -> bool:
            return True

    loop = Loop()
    status = StatusLine(loop)
    root = urwid.Pile([("weight", 1, view), ("pack", status), ("pack", urwid.Text("footer"))])
    status.start("Working...")
    screen = root.render((40, 12), focus=False)
    renders = _total_renders(view)
    for _ in range(5):
        tick = loop.alarms[-1]
        assert callable(tick)
        tick(None, None)
        screen = root.render((40, 12), focus=False)
    assert status.ticks == 5
    assert _total_renders(view) == renders
    assert screen.rows() == 12


def test_theme_change_rebuilds_visible_blocks() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 100))
    _text(view)
    builds = sum(b.builds for b in view.walker)
    view.set_theme_key(1234)
    _text(view)
    assert sum(b.builds for b in view.walker) == builds + 10


def test_remove_and_clear() -> None:
    ctx = RenderContext()
    view = TranscriptView(ctx, items=_lines(ctx, 5))
    removed = view.remove_at(4)
    assert isinstance(removed, NoticeBlock)
    assert len(view) == 4
    assert view.last is view.walker[3]
    view.clear()
    assert len(view) == 0
    assert view.last is None
    assert view.following


def test_resize_keeps_the_top_block_while_scrolled() -> None:
    ctx = RenderContext()
    items: list[Block] = [AssistantTextBlock(ctx, f"reply {i} " + "word " * 12) for i in range(30)]
    view = TranscriptView(ctx, items=items)
    render_text(view, (60, 10))
    view.jump_to(5)
    assert render_text(view, (60, 10), strip=True)[1] == " reply 5 word word word word word word word word word word"
    narrow = render_text(view, (20, 10), strip=True)
    assert narrow[1] == " reply 5 word word"
    assert not view.following
    view.scroll(1000)
    assert view.following
    assert render_text(view, (20, 10), strip=True)[-3:] == render_text(items[-1], (20,), strip=True)[-3:]
