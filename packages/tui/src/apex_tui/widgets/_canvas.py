"""Canvas building blocks: laid-out text, vertical stacks, prefix columns.

Text is laid out with urwid's text layout directly instead of through throwaway `urwid.Text` widgets, so building a
block's canvas leaves nothing in urwid's `CanvasCache`.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from typing import Literal, TypeAlias

import urwid
from urwid.canvas import apply_text_layout
from urwid.text_layout import default_layout
from urwid.util import decompose_tagmarkup

# urwid's own markup type is private; this is the subset we produce: str, (style, markup) or a list of those.
Markup: TypeAlias = str | tuple[Hashable, "Markup"] | list["Markup"]

Wrap = Literal["space", "any", "clip", "ellipsis"]

Size = tuple[()] | tuple[int] | tuple[int, int]
"""The size argument urwid passes to `render`."""


def flow_width(size: Size) -> int:
    """The column count of a flow widget's `(maxcol,)` size."""
    if not size:
        raise ValueError("a flow widget renders with a (maxcol,) size")
    return size[0]


def plain_text(markup: Markup) -> str:
    """The characters of `markup` without styles."""
    text, _ = decompose_tagmarkup(markup)
    return text if isinstance(text, str) else text.decode()


def text_canvas(markup: Markup, width: int, *, wrap: Wrap = "space") -> urwid.CompositeCanvas:
    """Lay `markup` out at `width` columns; at least one row, even for empty text."""
    text, attrib = decompose_tagmarkup(markup)
    layout = default_layout.layout(text, width, "left", wrap)
    return urwid.CompositeCanvas(apply_text_layout(text, attrib, layout, width))


@functools.lru_cache(maxsize=256)
def _solid(width: int, rows: int) -> urwid.SolidCanvas:
    return urwid.SolidCanvas(" ", width, rows)


def blank(width: int, rows: int = 1) -> urwid.CompositeCanvas:
    """`rows` empty rows of `width` columns."""
    return urwid.CompositeCanvas(_solid(width, rows))


def stack(canvases: Sequence[urwid.Canvas]) -> urwid.CompositeCanvas:
    """Canvases one above the other (all must have the same width)."""
    if len(canvases) == 1:
        return urwid.CompositeCanvas(canvases[0])
    return urwid.CanvasCombine([(c, None, False) for c in canvases])


def with_prefix(
    canvas: urwid.Canvas, first: Markup, rest: Markup, prefix_width: int, *, total_width: int
) -> urwid.CompositeCanvas:
    """`canvas` with a column of `prefix_width` on its left: `first` on row one, `rest` on every other row."""
    rows = canvas.rows()
    lines: list[Markup] = [first]
    for _ in range(rows - 1):
        lines.extend(["\n", rest])
    prefix = text_canvas(lines, prefix_width, wrap="clip")
    return urwid.CanvasJoin([(prefix, None, False, prefix_width), (canvas, None, False, total_width - prefix_width)])


def pad_sides(canvas: urwid.Canvas, left: int, right: int) -> urwid.CompositeCanvas:
    """`canvas` with `left` and `right` blank columns."""
    padded = urwid.CompositeCanvas(canvas)
    if left or right:
        padded.pad_trim_left_right(left, right)
    return padded


def filled(canvas: urwid.Canvas, style: Hashable) -> urwid.CompositeCanvas:
    """A copy of `canvas` whose unstyled cells take `style`; styled cells are layered over it."""
    result = urwid.CompositeCanvas(canvas)
    result.fill_attr(style)
    return result
