"""The transcript: a `ListBox` over a list of blocks whose frame cost is O(visible rows), with follow-end scrolling.

Scroll state is ours, not the ListBox's focus logic: either `following` (the last row of the last block sits on the
bottom row) or an anchor `(index, inset)` — the block on the top row and how many of its rows are above the top.
Each render places the ListBox focus from that state, so the ListBox only lays out the blocks that fill the view
(tui.md §2 scroll rules: new output never moves a non-following view; reaching the bottom resumes following).
The transcript never takes focus; the app passes it keys (`keypress`) that its keymap binds to `tui.altScreen.*`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Literal, Protocol

import urwid
from urwid.widget.listbox import VisibleInfo

from apex_tui.widgets._block import Block, DetailLevel, RenderContext
from apex_tui.widgets._canvas import Size


class KeyMatcher(Protocol):
    """What widgets need from the keybindings manager."""

    def matches(self, key: str, action_id: str) -> bool:
        """True when `key` (an urwid key name) is bound to `action_id`."""
        ...


class TranscriptWalker(urwid.ListWalker[int, Block]):
    """A list walker over blocks with integer positions; appends and focus moves are O(1)."""

    def __init__(self, items: Iterable[Block] = ()) -> None:
        super().__init__()
        self._items: list[Block] = list(items)
        self._focus = max(0, len(self._items) - 1)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, position: int) -> Block:
        return self._items[position]

    def __iter__(self) -> Iterator[Block]:
        return iter(self._items)

    def get_focus(self) -> tuple[Block, int] | tuple[None, None]:
        """The focus block and position, or (None, None) when empty."""
        if not self._items:
            return None, None
        return self._items[self._focus], self._focus

    def set_focus(self, position: int) -> None:
        """Move the focus; emits `modified` only when it changes."""
        if position != self._focus:
            self._focus = position
            self._modified()

    def place_focus(self, position: int) -> None:
        """Move the focus without emitting `modified` (used while rendering, when nothing else changed)."""
        self._focus = position

    def get_next(self, position: int) -> tuple[Block, int] | tuple[None, None]:
        """The block after `position`."""
        if position + 1 >= len(self._items):
            return None, None
        return self._items[position + 1], position + 1

    def get_prev(self, position: int) -> tuple[Block, int] | tuple[None, None]:
        """The block before `position`."""
        if position <= 0:
            return None, None
        return self._items[position - 1], position - 1

    def next_position(self, position: int) -> int:
        """Position after `position`; raises IndexError at the end."""
        if position + 1 >= len(self._items):
            raise IndexError(position)
        return position + 1

    def prev_position(self, position: int) -> int:
        """Position before `position`; raises IndexError at the start."""
        if position <= 0:
            raise IndexError(position)
        return position - 1

    def positions(self, reverse: bool = False) -> Iterable[int]:
        """All positions, optionally last first."""
        return range(len(self._items) - 1, -1, -1) if reverse else range(len(self._items))

    def append(self, block: Block) -> None:
        """Add a block at the end."""
        self._items.append(block)
        self._modified()

    def extend(self, blocks: Iterable[Block]) -> None:
        """Add blocks at the end."""
        self._items.extend(blocks)
        self._modified()

    def remove_at(self, position: int) -> Block:
        """Remove and return the block at `position`."""
        block = self._items.pop(position)
        self._focus = min(self._focus, max(0, len(self._items) - 1))
        self._modified()
        return block

    def clear(self) -> None:
        """Remove every block."""
        self._items.clear()
        self._focus = 0
        self._modified()


Scroll = Literal["pageUp", "pageDown", "halfPageUp", "halfPageDown", "lineUp", "lineDown", "top", "bottom"]


class TranscriptView(urwid.ListBox[int]):
    """The scrollable transcript (a BOX widget). Holds tens of thousands of blocks; opens showing the newest.

    `visible_positions` lists the blocks laid out by the last frame (for tests and benchmarks).
    """

    def __init__(
        self,
        ctx: RenderContext | None = None,
        *,
        keymap: KeyMatcher | None = None,
        items: Iterable[Block] = (),
    ) -> None:
        self.ctx = ctx if ctx is not None else RenderContext()
        self.walker = TranscriptWalker(items)
        super().__init__(self.walker)
        self.keymap = keymap
        self.following = True
        self._anchor = (0, 0)
        self._size: tuple[int, int] | None = None
        self.visible_positions: list[int] = []
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
        return self.walker.remove_at(position)

    def clear(self) -> None:
        """Remove every block and follow the end again."""
        self.walker.clear()
        self.following = True
        self._anchor = (0, 0)

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

    def refresh(self) -> None:
        """Redraw after a context change: blocks rebuild lazily when they next come into view."""
        for position in self.visible_positions:
            if position < len(self.walker):
                self.walker[position].refresh()
        self._invalidate()

    # -- rendering ----------------------------------------------------------------------------------------------

    def selectable(self) -> bool:
        """Never takes focus (tui.md §14)."""
        return False

    def render(self, size: Size, focus: bool = False) -> urwid.CompositeCanvas | urwid.SolidCanvas:
        """Lay out the blocks around the scroll position; cost grows with visible rows, not with the block count."""
        maxcol, maxrow = self._box(size)
        self._size = (maxcol, maxrow)
        count = len(self.walker)
        self.visible_positions = []
        if count and maxrow:
            if self.following:
                index = count - 1
                offset = maxrow - self._rows(index, maxcol)
            else:
                index, inset = self._clamped_anchor(maxcol)
                offset = -inset
            self._place(index, offset, maxcol)
        return super().render((maxcol, maxrow), focus)

    def calculate_visible(self, size: tuple[int, int], focus: bool = False) -> VisibleInfo | tuple[None, None, None]:
        """The ListBox layout; also records which positions it laid out."""
        visible = super().calculate_visible(size, focus)
        middle, top, bottom = visible
        if middle is not None and top is not None and bottom is not None:
            above = [item.position for item in top.fill]
            below = [item.position for item in bottom.fill]
            self.visible_positions = [*reversed(above), middle.focus_pos, *below]
        return visible

    @staticmethod
    def _box(size: Size) -> tuple[int, int]:
        if len(size) != 2:
            raise ValueError("the transcript is a box widget: it renders with a (maxcol, maxrow) size")
        return size[0], size[1]

    def _rows(self, index: int, maxcol: int) -> int:
        return self.walker[index].rows((maxcol,))

    def _place(self, index: int, offset: int, maxcol: int) -> None:
        self.walker.place_focus(index)
        self.set_focus_pending = None
        self.set_focus_valign_pending = None
        if offset >= 0:
            self.offset_rows = offset
            self.inset_fraction = (0, 1)
        else:
            self.offset_rows = 0
            self.inset_fraction = (-offset, self._rows(index, maxcol))

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
        maxcol, maxrow = self._size
        if not self.following:
            return self._clamped_anchor(maxcol)
        remaining = maxrow
        for index in range(len(self.walker) - 1, -1, -1):
            rows = self._rows(index, maxcol)
            if rows >= remaining:
                return index, rows - remaining
            remaining -= rows
        return (0, 0)

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
        self._size = self._box(size)
        if self.keymap is not None:
            for action, handler in self._actions.items():
                if self.keymap.matches(key, action):
                    handler()
                    return None
        return key

    def mouse_event(self, size: Size, event: str, button: int, col: int, row: int, focus: bool) -> bool:
        """Wheel events scroll one line each (fullscreen mode captures the mouse)."""
        self._size = self._box(size)
        if event == "mouse press" and button in (4, 5):
            self.scroll(-1 if button == 4 else 1)
            return True
        return False
