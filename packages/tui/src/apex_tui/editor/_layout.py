"""Visual rows of the editor text: each logical line cut into chunks of at most `width` columns."""

from __future__ import annotations

from dataclasses import dataclass

from urwid.str_util import calc_width


@dataclass(frozen=True)
class Row:
    """One visual row: text offsets `[start, end)`; `last` is true for the final chunk of a logical line."""

    start: int
    end: int
    last: bool


def char_width(char: str) -> int:
    """Terminal columns of one character (control characters count as one)."""
    return max(calc_width(char, 0, len(char)), 1) if char != "\t" else 4


def layout(text: str, width: int) -> list[Row]:
    """Rows of `text` at `width` columns (at least one row, even for empty text)."""
    width = max(width, 1)
    rows: list[Row] = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        chunk_start = start
        used = 0
        for index in range(start, end):
            w = char_width(text[index])
            if used + w > width and index > chunk_start:
                rows.append(Row(chunk_start, index, False))
                chunk_start = index
                used = 0
            used += w
        rows.append(Row(chunk_start, end, True))
        start = end + 1
    return rows


def cursor_row(rows: list[Row], cursor: int) -> int:
    """Index of the row that shows `cursor` (at a wrap point the cursor belongs to the next row)."""
    for index, row in enumerate(rows):
        if row.start <= cursor < row.end or (cursor == row.end and row.last):
            return index
    return len(rows) - 1


def columns(text: str, start: int, end: int) -> int:
    """Columns taken by `text[start:end]`."""
    return sum(char_width(c) for c in text[start:end])


def offset_at_column(text: str, row: Row, column: int) -> int:
    """The offset in `row` closest to `column` without passing it."""
    used = 0
    for index in range(row.start, row.end):
        w = char_width(text[index])
        if used + w > column:
            return index
        used += w
    # At a wrap point the end offset belongs to the next row: stay on this one.
    return row.end if row.last else max(row.start, row.end - 1)
