"""A tall canvas made of many parts whose per-frame cost does not grow with the number of parts.

urwid's `CanvasCombine` keeps one shard per part, and trimming, padding or counting the rows of the result walks
every shard; the markdown head of a 100k-character reply has thousands. `PartStack` is a leaf canvas instead (one
shard wherever it is combined) that finds the first visible part by bisection and reads only the visible parts.
`StackBuilder` appends parts over time; each `canvas()` snapshot stays valid while later parts are added.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterator, Mapping
from typing import TYPE_CHECKING

import urwid

if TYPE_CHECKING:
    # urwid's row type is only defined for type checkers, under a private name.
    from urwid.canvas import _ContentLine


class StackBuilder:
    """Parts of one width stacked top to bottom; `append` adds a part, `canvas()` snapshots the parts so far."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._parts: list[urwid.Canvas] = []
        self._starts: list[int] = []  # first row of each part
        self._rows = 0
        self._snapshot: PartStack | None = None

    def __len__(self) -> int:
        return len(self._parts)

    def append(self, part: urwid.Canvas) -> None:
        """Add `part` (exactly `width` columns) below the others."""
        if part.cols() != self.width:
            raise ValueError(f"part is {part.cols()} columns wide, the stack {self.width}")
        self._parts.append(part)
        self._starts.append(self._rows)
        self._rows += part.rows()
        self._snapshot = None

    def canvas(self) -> PartStack | None:
        """The parts so far as one canvas (the same object until the next `append`); None without parts."""
        if not self._parts:
            return None
        if self._snapshot is None:
            self._snapshot = PartStack(self._parts, self._starts, len(self._parts), self.width, self._rows)
        return self._snapshot


class PartStack(urwid.Canvas):
    """The first `count` parts of an append-only part list, read as one canvas."""

    def __init__(self, parts: list[urwid.Canvas], starts: list[int], count: int, width: int, rows: int) -> None:
        super().__init__()
        self._parts = parts
        self._starts = starts
        self._count = count
        self._cols = width
        self._total = rows

    def cols(self) -> int:
        """Column width of every part."""
        return self._cols

    def rows(self) -> int:
        """Rows of all parts."""
        return self._total

    def content(
        self,
        trim_left: int = 0,
        trim_top: int = 0,
        cols: int = 0,
        rows: int = 0,
        attr: Mapping[Hashable, Hashable] | None = None,
    ) -> Iterator[_ContentLine]:
        """Rows `trim_top` .. `trim_top + rows` and columns `trim_left` .. `trim_left + cols`, styles mapped by `attr`.

        Zero `cols`/`rows` mean "to the edge", as in urwid's own canvases.
        """
        cols = cols or self._cols - trim_left
        rows = rows or self._total - trim_top
        index = bisect_right(self._starts, trim_top, 0, self._count) - 1
        top = trim_top - self._starts[index]
        while rows > 0 and index < self._count:
            part = self._parts[index]
            take = min(part.rows() - top, rows)
            view = urwid.CompositeCanvas(part)
            if top or take < part.rows():
                view.trim(top, take)
            if trim_left or cols < self._cols:
                view.pad_trim_left_right(-trim_left, cols + trim_left - self._cols)
            for row in view.content():
                yield [(attr.get(a, a), cs, text) for a, cs, text in row] if attr else row
            rows -= take
            index += 1
            top = 0
