"""The transcript scrollbar column: thumb geometry and its one-column canvas.

`hidden` never draws it; `always` reserves the rightmost column; `auto` draws it only while the content is taller
than the viewport (Decision from the task brief: "auto" means "when there is something to scroll", not "only while
scrolling", so the column does not flicker in and out and re-wrap every block as keys are pressed).
"""

from __future__ import annotations

from typing import Literal

import urwid

from apex_tui.widgets._canvas import Markup, text_canvas

ScrollbarMode = Literal["auto", "always", "hidden"]

THUMB = "┃"
TRACK = "│"


def thumb(viewport: int, top: int, total: int) -> tuple[int, int]:
    """(first row, row count) of the thumb for a `viewport`-row window starting at content row `top` of `total`.

    The thumb is at least one row, touches the top at `top == 0` and the bottom when the window shows the end.
    """
    if viewport <= 0:
        return (0, 0)
    if total <= viewport:
        return (0, viewport)
    size = max(1, min(viewport, round(viewport * viewport / total)))
    span = total - viewport
    top = max(0, min(top, span))
    start = round(top * (viewport - size) / span)
    return (start, size)


def scrollbar_canvas(viewport: int, top: int, total: int) -> urwid.CompositeCanvas:
    """A one-column canvas: `scrollbar.thumb` cells over a `scrollbar.track` line."""
    start, size = thumb(viewport, top, total)
    lines: list[Markup] = []
    for row in range(viewport):
        if row:
            lines.append("\n")
        inside = start <= row < start + size
        lines.append(("scrollbar.thumb", THUMB) if inside else ("scrollbar.track", TRACK))
    return text_canvas(lines, 1, wrap="clip")
