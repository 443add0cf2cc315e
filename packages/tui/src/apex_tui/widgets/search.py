"""Transcript search: a query box, match navigation, and match highlighting.

Matching runs over each block's `search_text()` (case-insensitive, cached per block version), never over laid-out
rows, so a query over 50k blocks builds no canvas. Highlighting runs over the rows on screen only: every occurrence
of the query in a visible row is drawn in `search.match`, and the current match in `search.current`. The current
match is the k-th occurrence in its block's text; it is drawn at the k-th occurrence in the block's rendered rows
(the last one when fewer are rendered, e.g. inside a collapsed tool preview, where it is still scrolled to).
A match split by a line wrap is counted but not highlighted. The count reads `i/n` or `No matches`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import ClassVar

import urwid
from urwid.str_util import calc_width

from apex_tui.widgets._canvas import Markup, Size, flow_width, text_canvas
from apex_tui.widgets._overlay import Span
from apex_tui.widgets.transcript import KeyMatcher, TranscriptView, VisibleRow


def _occurrences(text: str, query: str) -> list[int]:
    """Start indices of the non-overlapping occurrences of `query` in `text` (both already lower-cased)."""
    found: list[int] = []
    start = text.find(query)
    while start != -1 and query:
        found.append(start)
        start = text.find(query, start + len(query))
    return found


class TranscriptSearch:
    """Search state over a transcript view; while attached it draws its highlights on the view.

    Matches are numbered in transcript order; `next()` moves toward the end and wraps to the first match,
    `previous()` the other way. A new query selects the last match at or above the bottom of the view.
    """

    match_style: ClassVar[str] = "search.match"
    current_style: ClassVar[str] = "search.current"

    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.query = ""
        self._blocks: list[int] = []
        self._starts: list[int] = []
        self.total = 0
        self.current: int | None = None
        self._located: tuple[tuple[int, int, int, int, str, object], tuple[int, int] | None] | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def attach(self) -> None:
        """Start drawing highlights on the view."""
        if self not in self.view.decorators:
            self.view.decorators.append(self)
            self.view._invalidate()

    def detach(self) -> None:
        """Stop drawing highlights (search closed); the view stays where the last match put it."""
        if self in self.view.decorators:
            self.view.decorators.remove(self)
            self.view._invalidate()

    # -- matching -----------------------------------------------------------------------------------------------

    def set_query(self, query: str) -> None:
        """Search for `query` and select the match nearest above the bottom of the view."""
        self.query = query
        self._scan()
        if not self.total:
            self.current = None
        else:
            shown = self.view.visible_positions
            bottom = shown[-1] if shown else len(self.view.walker) - 1
            position = bisect.bisect_right(self._blocks, bottom)
            self.current = self._starts[position] - 1 if position else 0
            self._reveal()
        self.view._invalidate()

    def refresh(self) -> None:
        """Re-run the query after the transcript changed, keeping the current match's block when it still matches."""
        current = self.match(self.current) if self.current is not None else None
        self._scan()
        if current is None or not self.total:
            self.current = 0 if self.total else None
        else:
            position = bisect.bisect_left(self._blocks, current[0])
            position = min(position, len(self._blocks) - 1)
            same = self._blocks[position] == current[0]
            self.current = self._starts[position] + (min(current[1], self._count(position) - 1) if same else 0)
        self.view._invalidate()

    def _scan(self) -> None:
        self._blocks, self._starts, self.total = [], [], 0
        self._located = None
        needle = self.query.lower()
        if not needle:
            return
        for index, block in enumerate(self.view.walker):
            count = block.folded_search_text().count(needle)
            if count:
                self._blocks.append(index)
                self._starts.append(self.total)
                self.total += count
        self._starts.append(self.total)

    def _count(self, position: int) -> int:
        return self._starts[position + 1] - self._starts[position]

    def match(self, number: int) -> tuple[int, int]:
        """(block index, occurrence within the block's text) of match `number` (0-based)."""
        position = bisect.bisect_right(self._starts, number) - 1
        return self._blocks[position], number - self._starts[position]

    @property
    def label(self) -> str:
        """`i/n`, `No matches`, or empty while the query is empty."""
        if not self.query:
            return ""
        if self.current is None:
            return "No matches"
        return f"{self.current + 1}/{self.total}"

    # -- navigation ---------------------------------------------------------------------------------------------

    def next(self) -> None:
        """The next match toward the end, wrapping to the first."""
        if self.current is not None:
            self.current = (self.current + 1) % self.total
            self._reveal()
            self.view._invalidate()

    def previous(self) -> None:
        """The previous match toward the start, wrapping to the last."""
        if self.current is not None:
            self.current = (self.current - 1) % self.total
            self._reveal()
            self.view._invalidate()

    def _reveal(self) -> None:
        if self.current is None:
            return
        index, _ = self.match(self.current)
        location = self._location()
        self.view.reveal(index, location[0] if location is not None else 0)

    def _location(self) -> tuple[int, int] | None:
        """(row in the block, character in the row) of the current match as rendered, when it is rendered."""
        if self.current is None:
            return None
        index, occurrence = self.match(self.current)
        block = self.view.walker[index]
        size = self.view._size
        key = (index, occurrence, block.version, size[0] if size else 0, self.query.lower(), block.ctx.key)
        if self._located is not None and self._located[0] == key:
            return self._located[1]
        needle = self.query.lower()
        found = [
            (row, start)
            for row, text in enumerate(self.view.block_rows(index))
            for start in _occurrences(text.lower(), needle)
        ]
        location = found[min(occurrence, len(found) - 1)] if found else None
        self._located = (key, location)
        return location

    # -- drawing ------------------------------------------------------------------------------------------------

    def spans(self, view: TranscriptView, rows: Sequence[VisibleRow]) -> dict[int, list[Span]]:
        """Every occurrence on screen in `search.match`, the current one in `search.current`."""
        needle = self.query.lower()
        if not needle or self.current is None:
            return {}
        current_block = self.match(self.current)[0]
        location = self._location()
        out: dict[int, list[Span]] = {}
        for number, row in enumerate(rows):
            for start in _occurrences(row.text.lower(), needle):
                is_current = row.block == current_block and location == (row.block_row, start)
                style = self.current_style if is_current else self.match_style
                out.setdefault(number, []).append((start, start + len(needle), style))
        return out


class _DefaultKeys:
    """The default search keys, for a box used without the app's keymap."""

    _BINDINGS: ClassVar[dict[str, tuple[str, ...]]] = {
        "tui.altScreen.searchNext": ("enter", "ctrl g"),
        "tui.altScreen.searchPrevious": ("shift enter", "ctrl shift g"),
        "tui.altScreen.searchClose": ("esc",),
    }

    def matches(self, key: str, action_id: str) -> bool:
        return key in self._BINDINGS.get(action_id, ())


class SearchBox(urwid.Widget):
    """The one-row search box: `Search: <query>` with the match count on the right.

    Typing edits the query and searches at once; `tui.altScreen.searchNext` / `searchPrevious` move between
    matches; `tui.altScreen.searchClose` emits `close` (the app removes the box and calls `search.detach()`).
    """

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = True
    signals: ClassVar[list[str]] = ["close"]
    prompt = "Search: "

    def __init__(self, search: TranscriptSearch, *, keymap: KeyMatcher | None = None) -> None:
        super().__init__()
        self.search = search
        self.keymap: KeyMatcher = keymap if keymap is not None else _DefaultKeys()
        search.attach()

    @property
    def query(self) -> str:
        """The text typed so far."""
        return self.search.query

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """Always one row."""
        return 1

    def render(self, size: Size, focus: bool = False) -> urwid.Canvas:
        """Prompt, query and the count at the right edge, clipped to width."""
        width = flow_width(size)
        label = self.search.label
        left = self.prompt + self.query
        gap = max(1, width - calc_width(left, 0, len(left)) - calc_width(label, 0, len(label)))
        style = "warning" if label == "No matches" else "muted"
        markup: list[Markup] = [("accent", self.prompt), self.query, " " * gap, (style, label)]
        canvas = text_canvas(markup, width, wrap="clip")
        if focus:
            canvas.cursor = self.get_cursor_coords((width,))
        return canvas

    def get_cursor_coords(self, size: tuple[int]) -> tuple[int, int]:
        """The cursor sits after the query."""
        left = self.prompt + self.query
        return (min(size[0] - 1, calc_width(left, 0, len(left))), 0)

    def keypress(self, size: Size, key: str) -> str | None:
        """Edit the query, move between matches, or close."""
        if self.keymap.matches(key, "tui.altScreen.searchNext"):
            self.search.next()
        elif self.keymap.matches(key, "tui.altScreen.searchPrevious"):
            self.search.previous()
        elif self.keymap.matches(key, "tui.altScreen.searchClose"):
            self._emit("close")
        elif key == "backspace":
            if self.query:
                self.search.set_query(self.query[:-1])
        elif len(key) == 1 and key.isprintable():
            self.search.set_query(self.query + key)
        else:
            return key
        self._invalidate()
        return None
