"""Row-level restyling of a rendered canvas: search highlights and the mouse selection are drawn over the frame.

Spans index characters of a row's text (not columns), so `str.find` results apply directly; `col_to_char` maps a
mouse column to that index. Only the restyled rows are rebuilt; the others stay shards of the original canvas.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import urwid
from urwid.str_util import calc_width

Span = tuple[int, int, Hashable]
"""(first character, end character, style) within one row's text."""

# urwid canvas rows are runs of (attribute, character set, encoded text).
Row = Sequence[tuple[Hashable, str | None, bytes]]


def row_text(row: Row) -> str:
    """The characters of one canvas row."""
    return "".join(run.decode("utf-8", "replace") for _, _, run in row)


def canvas_rows(canvas: urwid.Canvas) -> list[str]:
    """The text of every row of `canvas`."""
    return [row_text(row) for row in canvas.content()]


def col_to_char(text: str, col: int) -> int:
    """Index of the character of `text` drawn at column `col` (len(text) past the end)."""
    width = 0
    for index, char in enumerate(text):
        width += calc_width(char, 0, 1)
        if width > col:
            return index
    return len(text)


def char_to_col(text: str, index: int) -> int:
    """The column where character `index` of `text` starts."""
    return calc_width(text, 0, min(index, len(text)))


def attr_at(row: Row, col: int) -> Hashable:
    """The attribute of the cell at column `col` of `row` (None past the end)."""
    start = 0
    for attr, _, run in row:
        text = run.decode("utf-8", "replace")
        end = start + calc_width(text, 0, len(text))
        if start <= col < end:
            return attr
        start = end
    return None


def _restyled_row(row: Row, spans: Iterable[Span], width: int) -> urwid.TextCanvas:
    cells: list[tuple[Hashable, str | None, str]] = []
    for attr, cs, run in row:
        text = run.decode("utf-8", "replace")
        if cs is not None:
            # Line-drawing charset runs are kept whole; they never hold searchable text.
            cells.append((attr, cs, text))
        else:
            cells.extend((attr, None, char) for char in text)
    for start, end, style in spans:
        for index in range(max(0, start), min(end, len(cells))):
            _, cs, char = cells[index]
            if cs is None:
                cells[index] = (style, cs, char)
    text_parts: list[bytes] = []
    attrs: list[tuple[Hashable, int]] = []
    charsets: list[tuple[str | None, int]] = []
    for attr, cs, char in cells:
        encoded = char.encode("utf-8")
        text_parts.append(encoded)
        if attrs and attrs[-1][0] == attr and charsets[-1][0] == cs:
            attrs[-1] = (attr, attrs[-1][1] + len(encoded))
            charsets[-1] = (cs, charsets[-1][1] + len(encoded))
        else:
            attrs.append((attr, len(encoded)))
            charsets.append((cs, len(encoded)))
    # urwid's TextCanvas types its charset runs as literals; the values come straight from a canvas row.
    return urwid.TextCanvas([b"".join(text_parts)], [attrs], [charsets], maxcol=width)  # type: ignore[list-item]


def restyle_rows(canvas: urwid.Canvas, spans: Mapping[int, Sequence[Span]]) -> urwid.CompositeCanvas:
    """`canvas` with the character spans of some rows drawn in other styles."""
    if not spans:
        return urwid.CompositeCanvas(canvas)
    width = canvas.cols()
    rows = canvas.rows()
    parts: list[urwid.Canvas] = []
    cursor = 0
    content = list(canvas.content())
    for index in sorted(r for r in spans if 0 <= r < rows):
        if index > cursor:
            shard = urwid.CompositeCanvas(canvas)
            shard.trim(cursor, index - cursor)
            parts.append(shard)
        parts.append(_restyled_row(content[index], spans[index], width))
        cursor = index + 1
    if cursor < rows:
        shard = urwid.CompositeCanvas(canvas)
        shard.trim(cursor, rows - cursor)
        parts.append(shard)
    if len(parts) == 1:
        return urwid.CompositeCanvas(parts[0])
    return urwid.CanvasCombine([(part, None, False) for part in parts])
