"""Mouse selection over the rendered transcript (fullscreen): which cells are selected, and their text.

Points are in content coordinates (block index, row inside the block's canvas, column), so a selection stays on the
same text while the view scrolls under it. The view draws it as a row decorator and emits its text; copying
(native clipboard tool or OSC 52, `fullscreenCopyOnSelect`) is the app's decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from apex_tui.widgets._overlay import Span, col_to_char

if TYPE_CHECKING:
    from apex_tui.widgets.transcript import TranscriptView, VisibleRow


class SelectionPoint(NamedTuple):
    """A cell of the rendered transcript."""

    block: int
    row: int
    col: int


class Selection:
    """The cells from one point to another in reading order, both ends included (either may come first)."""

    style = "selection"

    def __init__(self, anchor: SelectionPoint, focus: SelectionPoint) -> None:
        self.anchor = anchor
        self.focus = focus

    @property
    def start(self) -> SelectionPoint:
        """The earlier end."""
        return min(self.anchor, self.focus)

    @property
    def end(self) -> SelectionPoint:
        """The later end."""
        return max(self.anchor, self.focus)

    def _row_span(self, index: int, row: int, text: str) -> tuple[int, int] | None:
        start, end = self.start, self.end
        if (index, row) < (start.block, start.row) or (index, row) > (end.block, end.row):
            return None
        first = col_to_char(text, start.col) if (index, row) == (start.block, start.row) else 0
        last = col_to_char(text, end.col) + 1 if (index, row) == (end.block, end.row) else len(text)
        return (first, min(last, len(text)))

    def spans(self, view: TranscriptView, rows: Sequence[VisibleRow]) -> dict[int, list[Span]]:
        """The selected part of each visible row."""
        out: dict[int, list[Span]] = {}
        for number, row in enumerate(rows):
            span = self._row_span(row.block, row.block_row, row.text)
            if span is not None and span[1] > span[0]:
                out[number] = [(span[0], span[1], self.style)]
        return out

    def text(self, view: TranscriptView) -> str:
        """The selected text: one line per rendered row, trailing blanks removed."""
        start, end = self.start, self.end
        lines: list[str] = []
        for index in range(start.block, end.block + 1):
            for row, text in enumerate(view.block_rows(index)):
                span = self._row_span(index, row, text)
                if span is not None:
                    lines.append(text[span[0] : span[1]].rstrip())
        return "\n".join(lines)
