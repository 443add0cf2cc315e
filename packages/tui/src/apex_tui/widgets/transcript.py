"""The transcript: a custom BOX widget that composes the visible rows itself, with follow-end scrolling.

Scroll state is ours: either `following` (the last row of the last block sits on the bottom row) or an anchor
`(index, inset)` — the block on the top row and how many of its rows are above the top. A frame walks blocks from
that anchor (or up from the end while following) until the viewport is full, trims the first and last canvas and
stacks them, so its cost grows with the visible rows, never with the block count. Each block's canvas comes through
urwid's canvas cache; only blocks whose content or context changed rebuild (scroll rules: new output never
moves a non-following view; reaching the bottom resumes following).

On top of the composed rows the view draws its row decorators (transcript search highlights, the mouse selection)
and, per `scrollbar`, a one-column scrollbar. The transcript never takes focus; the app passes it keys (`keypress`)
its keymap binds to `tui.altScreen.*`, and mouse events in fullscreen mode. Signals: `selection` (text of a finished
drag selection) and `link` (URL of a clicked OSC 8 link); the app decides about the clipboard and opening links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, Literal, NamedTuple, Protocol

import urwid

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets._canvas import Size, blank, stack
from apex_tui.widgets._overlay import Span, attr_at, restyle_rows, row_text
from apex_tui.widgets._walker import TranscriptWalker
from apex_tui.widgets.hyperlink import link_url
from apex_tui.widgets.scrollbar import ScrollbarMode, scrollbar_canvas
from apex_tui.widgets.selection import Selection, SelectionPoint

EXACT_SCROLLBAR_LIMIT = 500
"""Up to this many blocks the scrollbar measures every block; above it, it estimates from the blocks on screen."""


class KeyMatcher(Protocol):
    """What widgets need from the keybindings manager."""

    def matches(self, key: str, action_id: str) -> bool:
        """True when `key` (an urwid key name) is bound to `action_id`."""
        ...


class VisibleRow(NamedTuple):
    """One row of the last frame: the block it belongs to, its row inside that block's canvas, and its text."""

    block: int
    block_row: int
    text: str


class RowDecorator(Protocol):
    """Something drawn over the visible rows (search highlights, the selection)."""

    def spans(self, view: TranscriptView, rows: Sequence[VisibleRow]) -> dict[int, list[Span]]:
        """Styled character spans keyed by viewport row."""
        ...


Scroll = Literal["pageUp", "pageDown", "halfPageUp", "halfPageDown", "lineUp", "lineDown", "top", "bottom"]


class TranscriptView(urwid.Widget):
    """The scrollable transcript (a BOX widget). Holds tens of thousands of blocks; opens showing the newest.

    `visible_positions` lists the blocks laid out by the last frame and `built_blocks` counts the blocks laid out so
    far (for tests and benchmarks).
    """

    _sizing = frozenset([urwid.Sizing.BOX])
    _selectable = False
    ignore_focus = True
    signals: ClassVar[list[str]] = ["selection", "link"]

    def __init__(
        self,
        ctx: RenderContext | None = None,
        *,
        keymap: KeyMatcher | None = None,
        items: Iterable[Block] = (),
        scrollbar: ScrollbarMode = "hidden",
        mouse_select: bool = False,
    ) -> None:
        super().__init__()
        self.ctx = ctx if ctx is not None else RenderContext()
        self.walker = TranscriptWalker(items)
        urwid.connect_signal(self.walker, "modified", self._invalidate)
        self.keymap = keymap
        self.following = True
        self._anchor = (0, 0)
        self._size: tuple[int, int] | None = None
        self._scrollbar: ScrollbarMode = scrollbar
        self._bar = 0
        self.visible_positions: list[int] = []
        self._rows_map: list[tuple[int, int]] = []
        self.decorators: list[RowDecorator] = []
        self.selection: Selection | None = None
        self._press: SelectionPoint | None = None
        self.mouse_select = mouse_select
        """Whether left-button drags select text and clicks open links (fullscreen mode turns it on)."""
        self._actions: dict[str, Callable[[], None]] = {
            "tui.altScreen.pageUp": self.page_up,
            "tui.altScreen.pageDown": self.page_down,
            "tui.altScreen.halfPageUp": self.half_page_up,
            "tui.altScreen.halfPageDown": self.half_page_down,
            "tui.altScreen.lineUp": lambda: self.scroll(-1),
            "tui.altScreen.lineDown": lambda: self.scroll(1),
            "tui.altScreen.top": self.scroll_to_top,
            "tui.altScreen.bottom": self.scroll_to_bottom,
            "tui.altScreen.previousPrompt": self.previous_prompt,
            "tui.altScreen.nextPrompt": self.next_prompt,
        }

    # -- content ------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.walker)

    def append(self, block: Block) -> None:
        """Add a block at the end; a following view shows it, a scrolled view stays where it is."""
        self.walker.append(block)

    def extend(self, blocks: Iterable[Block]) -> None:
        """Add several blocks at the end."""
        self.walker.extend(blocks)

    def remove_at(self, position: int) -> Block:
        """Remove the block at `position`, keeping the top row where it was when possible."""
        index, inset = self._anchor
        if position < index:
            self._anchor = (index - 1, inset)
        elif position == index:
            self._anchor = (index, 0)
        self.clear_selection()
        return self.walker.remove_at(position)

    def clear(self) -> None:
        """Remove every block and follow the end again."""
        self.walker.clear()
        self.following = True
        self._anchor = (0, 0)
        self.clear_selection()

    @property
    def built_blocks(self) -> int:
        """How many of the held blocks have laid out a canvas at least once (what rendering has cost so far).

        A frame lays out only the blocks it shows (plus, while following, the ones it measures up from the end), so
        this stays bounded by the viewport however many blocks the transcript holds. Counting walks every block:
        for tests and benchmarks, not for per-frame use.
        """
        return sum(1 for block in self.walker if block.builds)

    @property
    def last(self) -> Block | None:
        """The newest block (the streaming tail), if any."""
        return self.walker[len(self.walker) - 1] if len(self.walker) else None

    # -- detail level / context ---------------------------------------------------------------------------------

    def cycle_detail(self) -> DetailLevel:
        """Move to the next detail level (overview → details → all → overview) and redraw; returns the new level."""
        self.set_detail(self.ctx.detail.next())
        return self.ctx.detail

    def set_detail(self, level: DetailLevel) -> None:
        """Apply a detail level to every block, existing and future."""
        self.ctx.detail = level
        self.refresh()

    def set_hide_thinking(self, hide: bool) -> None:
        """Apply `hideThinkingBlock`."""
        self.ctx.hide_thinking = hide
        self.refresh()

    def set_theme_key(self, key: int) -> None:
        """Record a theme change (styles are names; this only forces a redraw)."""
        self.ctx.theme_key = key
        self.refresh()

    def set_scrollbar(self, mode: ScrollbarMode) -> None:
        """Apply `fullscreenScrollbar` (`hidden` in regular mode)."""
        self._scrollbar = mode
        self._invalidate()

    @property
    def scrollbar(self) -> ScrollbarMode:
        """The scrollbar mode."""
        return self._scrollbar

    def refresh(self) -> None:
        """Redraw after a context change: blocks rebuild lazily when they next come into view."""
        for position in self.visible_positions:
            if position < len(self.walker):
                self.walker[position].refresh()
        self._invalidate()

    # -- rendering ----------------------------------------------------------------------------------------------

    def selectable(self) -> bool:
        """Never takes focus."""
        return False

    @staticmethod
    def _box(size: Size) -> tuple[int, int]:
        if len(size) != 2:
            raise ValueError("the transcript is a box widget: it renders with a (maxcol, maxrow) size")
        return size[0], size[1]

    def _rows(self, index: int, maxcol: int) -> int:
        return self.walker[index].rows((maxcol,))

    def _content_size(self, size: Size) -> tuple[int, int]:
        """The block area of a `size` box: the full box minus the scrollbar column when one is drawn."""
        maxcol, maxrow = self._box(size)
        self._bar = self._bar_width(maxcol, maxrow)
        self._size = (maxcol - self._bar, maxrow)
        return self._size

    def _bar_width(self, maxcol: int, maxrow: int) -> int:
        if self._scrollbar == "hidden" or maxcol < 2:
            return 0
        if self._scrollbar == "always":
            return 1
        # auto: only when the content is taller than the viewport (stops measuring as soon as it is).
        total = 0
        for index in range(len(self.walker) - 1, -1, -1):
            total += self._rows(index, maxcol - 1)
            if total > maxrow:
                return 1
        return 0

    def _window(self, maxcol: int, maxrow: int) -> tuple[int, int]:
        """The (index, inset) of the top row this frame shows."""
        if not self.following:
            index, inset = self._clamped_anchor(maxcol)
            if self._fills_from(index, inset, maxcol, maxrow):
                return index, inset
            # Only after a resize or a removal: show the end instead of blank rows under the content.
        return self._end_window(maxcol, maxrow)

    def _end_window(self, maxcol: int, maxrow: int) -> tuple[int, int]:
        remaining = maxrow
        for index in range(len(self.walker) - 1, -1, -1):
            rows = self._rows(index, maxcol)
            if rows >= remaining:
                return index, rows - remaining
            remaining -= rows
        return (0, 0)  # everything fits: the transcript sits at the top

    def _fills_from(self, index: int, inset: int, maxcol: int, maxrow: int) -> bool:
        total = self._rows(index, maxcol) - inset
        position = index + 1
        while total < maxrow and position < len(self.walker):
            total += self._rows(position, maxcol)
            position += 1
        return total >= maxrow or (index == 0 and inset == 0)

    def render(self, size: Size, focus: bool = False) -> urwid.CompositeCanvas:
        """Compose the visible rows; cost grows with visible rows, not with the block count."""
        outer_cols, maxrow = self._box(size)
        maxcol, maxrow = self._content_size(size)
        self.visible_positions = []
        self._rows_map = []
        parts: list[urwid.Canvas] = []
        filled = 0
        if len(self.walker) and maxrow:
            index, inset = self._window(maxcol, maxrow)
            while filled < maxrow and index < len(self.walker):
                # A copy: the canvas urwid's cache hands out must never be trimmed in place.
                canvas = urwid.CompositeCanvas(self.walker[index].render((maxcol,)))
                if inset:
                    canvas.trim(inset)
                extra = filled + canvas.rows() - maxrow
                if extra > 0:
                    canvas.trim_end(extra)
                self.visible_positions.append(index)
                self._rows_map.extend((index, inset + row) for row in range(canvas.rows()))
                parts.append(canvas)
                filled += canvas.rows()
                index, inset = index + 1, 0
        if filled < maxrow:
            parts.append(blank(maxcol, maxrow - filled))
        content = stack(parts) if parts else blank(maxcol, 0)
        content = self._decorate(content)
        if not self._bar:
            return content
        top, total = self._scroll_extent(maxcol, maxrow)
        bar = scrollbar_canvas(maxrow, top, total)
        return urwid.CanvasJoin([(content, None, False, maxcol), (bar, None, False, outer_cols - maxcol)])

    def _decorate(self, content: urwid.CompositeCanvas) -> urwid.CompositeCanvas:
        decorators: list[RowDecorator] = list(self.decorators)
        if self.selection is not None:
            decorators.append(self.selection)
        if not decorators or not self._rows_map:
            return content
        texts = [row_text(row) for row in content.content()]
        rows = [VisibleRow(index, block_row, texts[n]) for n, (index, block_row) in enumerate(self._rows_map)]
        spans: dict[int, list[Span]] = {}
        for decorator in decorators:
            for row, found in decorator.spans(self, rows).items():
                spans.setdefault(row, []).extend(found)
        return restyle_rows(content, spans) if spans else content

    def _scroll_extent(self, maxcol: int, maxrow: int) -> tuple[int, int]:
        """(content row at the top of the viewport, total content rows); estimated for long transcripts."""
        count = len(self.walker)
        index, inset = self._rows_map[0] if self._rows_map else (0, 0)
        if count <= EXACT_SCROLLBAR_LIMIT:
            above = sum(self._rows(i, maxcol) for i in range(index))
            total = above + sum(self._rows(i, maxcol) for i in range(index, count))
            return above + inset, total
        shown = self.visible_positions or [count - 1]
        average = sum(self._rows(i, maxcol) for i in shown) / len(shown)
        total = max(maxrow, round(average * count))
        if self.following:
            return total - maxrow, total
        return min(total - maxrow, round(average * index) + inset), total

    def block_rows(self, index: int) -> list[str]:
        """The text of every row of block `index` at the last rendered width (builds its canvas if needed)."""
        width = self._size[0] if self._size is not None else 80
        return [row_text(row) for row in self.walker[index].render((width,)).content()]

    def visible_rows(self) -> list[tuple[int, int]]:
        """(block index, row in block) of each row of the last frame, top to bottom."""
        return list(self._rows_map)

    def _clamped_anchor(self, maxcol: int) -> tuple[int, int]:
        index, inset = self._anchor
        index = min(index, len(self.walker) - 1)
        inset = max(0, min(inset, self._rows(index, maxcol) - 1))
        return index, inset

    # -- scrolling ----------------------------------------------------------------------------------------------

    def top_anchor(self) -> tuple[int, int]:
        """(block index, rows of it above the top edge) of the top row in the last rendered size."""
        if not len(self.walker) or self._size is None:
            return (0, 0)
        return self._window(*self._size)

    def _at_bottom(self, index: int, inset: int, maxcol: int, maxrow: int) -> bool:
        total = self._rows(index, maxcol) - inset
        position = index + 1
        while total <= maxrow and position < len(self.walker):
            total += self._rows(position, maxcol)
            position += 1
        return total <= maxrow

    def scroll(self, rows: int) -> None:
        """Scroll by `rows` (negative = up). Scrolling up stops following; reaching the bottom resumes it."""
        if not rows or not len(self.walker) or self._size is None:
            return
        maxcol, maxrow = self._size
        index, inset = self.top_anchor()
        inset += rows
        if rows < 0:
            while inset < 0 and index > 0:
                index -= 1
                inset += self._rows(index, maxcol)
            inset = max(inset, 0)
        else:
            last = len(self.walker) - 1
            while index < last and inset >= self._rows(index, maxcol):
                inset -= self._rows(index, maxcol)
                index += 1
            inset = min(inset, self._rows(index, maxcol) - 1)
        self._set_anchor(index, inset)

    def _set_anchor(self, index: int, inset: int) -> None:
        assert self._size is not None
        maxcol, maxrow = self._size
        self.following = self._at_bottom(index, inset, maxcol, maxrow)
        self._anchor = (index, inset)
        self._invalidate()

    def _viewport(self) -> int:
        return self._size[1] if self._size is not None else 0

    def page_up(self) -> None:
        """Up by viewport − 4 rows (at least 1)."""
        self.scroll(-max(1, self._viewport() - 4))

    def page_down(self) -> None:
        """Down by viewport − 4 rows (at least 1)."""
        self.scroll(max(1, self._viewport() - 4))

    def half_page_up(self) -> None:
        """Up by half the viewport."""
        self.scroll(-max(1, self._viewport() // 2))

    def half_page_down(self) -> None:
        """Down by half the viewport."""
        self.scroll(max(1, self._viewport() // 2))

    def scroll_to_top(self) -> None:
        """Show the first block at the top; stops following unless everything fits."""
        if len(self.walker) and self._size is not None:
            self._set_anchor(0, 0)

    def scroll_to_bottom(self) -> None:
        """Show the end and follow new output."""
        self.following = True
        self._invalidate()

    def jump_to(self, index: int) -> None:
        """Bring the start of block `index` to the top row (as far as the content below allows)."""
        if 0 <= index < len(self.walker) and self._size is not None:
            self._set_anchor(index, 0)

    def reveal(self, index: int, row: int) -> None:
        """Scroll so row `row` of block `index` shows a third of the way down; no move when it is on screen."""
        if not 0 <= index < len(self.walker) or (index, row) in self._rows_map:
            return
        if self._size is None:
            self.following = False
            self._anchor = (index, row)
            self._invalidate()
            return
        self._set_anchor(index, max(0, row))
        self.scroll(-(self._size[1] // 3))

    def previous_prompt(self) -> None:
        """Jump to the start of the previous user/assistant message above the top row."""
        index, inset = self.top_anchor()
        start = index if inset > 0 else index - 1
        for position in range(start, -1, -1):
            if self.walker[position].is_prompt:
                self.jump_to(position)
                return

    def next_prompt(self) -> None:
        """Jump to the start of the next user/assistant message below the top row."""
        index, _inset = self.top_anchor()
        for position in range(index + 1, len(self.walker)):
            if self.walker[position].is_prompt:
                self.jump_to(position)
                return

    # -- input --------------------------------------------------------------------------------------------------

    def keypress(self, size: Size, key: str) -> str | None:
        """Handle keys bound to `tui.altScreen.*` scroll actions; everything else is returned unhandled.

        urwid's default command map is never consulted, so 'page up' etc. only act through the keymap.
        """
        self._content_size(size)
        if self.keymap is not None:
            for action, handler in self._actions.items():
                if self.keymap.matches(key, action):
                    handler()
                    return None
        return key

    def mouse_event(self, size: Size, event: str, button: int, col: int, row: int, focus: bool) -> bool:
        """Wheel scrolls one line per event; a left-button drag selects rows, a click on a link emits `link`.

        A finished drag emits `selection` with the selected text. Dragging on the top or bottom row scrolls one
        line per event, so holding the pointer at an edge extends the selection past the viewport.
        """
        maxcol, maxrow = self._content_size(size)
        if event == "mouse press" and button in (4, 5):
            self.scroll(-1 if button == 4 else 1)
            return True
        if not self.mouse_select:
            return False
        if event == "mouse press" and button == 1:
            self.clear_selection()
            self._press = self._point_at(col, row)
            return self._press is not None
        if event == "mouse drag" and self._press is not None:
            edge = -1 if row <= 0 else (1 if row >= maxrow - 1 else 0)
            if edge:
                self.scroll(edge)
                self.render(size)  # refreshes the row map for the moved window
            point = self._point_at(min(col, maxcol - 1), max(0, min(row, maxrow - 1)))
            if point is not None:
                self.selection = Selection(self._press, point)
                self._invalidate()
            return True
        if event == "mouse release" and self._press is not None:
            press, self._press = self._press, None
            if self.selection is None:
                self._click(press, col)
                return True
            text = self.selection.text(self)
            if text:
                self._emit("selection", text)
            return True
        return False

    def _point_at(self, col: int, row: int) -> SelectionPoint | None:
        if not 0 <= row < len(self._rows_map):
            return None
        index, block_row = self._rows_map[row]
        return SelectionPoint(index, block_row, col)

    def _click(self, point: SelectionPoint, col: int) -> None:
        width = self._size[0] if self._size is not None else 80
        rows = list(self.walker[point.block].render((width,)).content())
        if point.row < len(rows):
            url = link_url(attr_at(rows[point.row], col))
            if url:
                self._emit("link", url)

    def clear_selection(self) -> None:
        """Drop the highlighted selection (after a copy, or when the content under it changes)."""
        if self.selection is not None:
            self.selection = None
            self._invalidate()


__all__ = ["KeyMatcher", "RowDecorator", "Scroll", "TranscriptView", "TranscriptWalker", "VisibleRow"]
