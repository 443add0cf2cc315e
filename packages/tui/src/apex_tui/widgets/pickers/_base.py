"""The frame every picker draws in: a titled rule, its own lines, a closing rule. Flow widget, keymap driven.

Pickers replace the editor in the dock, so they are flow widgets sized by their content. Each picker
builds its frame as a list of markup lines (plus an optional cursor position); the frame is cached until the
picker's state changes, so `rows()` followed by `render()` builds it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import urwid
from urwid.str_util import calc_width

from apex_tui.widgets._canvas import Markup, Size, flow_width, stack, text_canvas
from apex_tui.widgets.transcript import KeyMatcher

RULE = "─"


@dataclass
class Frame:
    """Lines of a picker at one width; `cursor` is (column, row) of the text cursor, or None."""

    lines: list[Markup] = field(default_factory=list)
    cursor: tuple[int, int] | None = None


def text_width(text: str) -> int:
    """Display columns of `text`."""
    return calc_width(text, 0, len(text))


def rule(width: int, title: str = "", *, style: str = "borderAccent") -> Markup:
    """A horizontal rule of `width` columns, with `title` set into it after two rule characters."""
    if not title:
        return (style, RULE * width)
    head = f"{RULE * 2} "
    rest = max(0, width - text_width(head) - text_width(title) - 1)
    return [(style, head), ("accent", title), (style, " " + RULE * rest)]


class PickerBase(urwid.Widget):
    """A selectable flow widget drawn from `build(width)`.

    Subclasses implement `build` and `keypress`, call `changed()` after every state change, and emit their
    signals as `urwid.emit_signal(self, name, self, payload)`. They consult only `keymap.matches(key, id)`.
    """

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = True
    signals: ClassVar[list[str]] = ["cancel"]

    def __init__(self, keymap: KeyMatcher) -> None:
        super().__init__()
        self.keymap = keymap
        self._frame: tuple[int, int, Frame] | None = None
        self._version = 0

    def build(self, width: int) -> Frame:
        """The picker's lines at `width` columns."""
        raise NotImplementedError

    def changed(self) -> None:
        """Drop the cached frame and ask urwid to redraw."""
        self._version += 1
        self._frame = None
        self._invalidate()

    def frame(self, width: int) -> Frame:
        """The (cached) frame at `width`."""
        if self._frame is None or self._frame[:2] != (width, self._version):
            self._frame = (width, self._version, self.build(width))
        return self._frame[2]

    def rows(self, size: Size, focus: bool = False) -> int:
        """Number of lines of the frame."""
        return max(1, len(self.frame(flow_width(size)).lines))

    def render(self, size: Size, focus: bool = False) -> urwid.Canvas:
        """Each line clipped with an ellipsis to the width; the text cursor shown when focused."""
        width = flow_width(size)
        frame = self.frame(width)
        lines = frame.lines or [""]
        canvas = stack([text_canvas(line, width, wrap="ellipsis") for line in lines])
        if focus and frame.cursor is not None:
            canvas.cursor = (min(frame.cursor[0], width - 1), frame.cursor[1])
        return canvas

    def get_cursor_coords(self, size: Size) -> tuple[int, int] | None:
        """Where urwid should place the terminal cursor."""
        return self.frame(flow_width(size)).cursor

    def emit(self, name: str, payload: object = None) -> None:
        """Emit signal `name` with `(self, payload)` as callback arguments."""
        urwid.emit_signal(self, name, self, payload)

    def matches(self, key: str, *ids: str) -> str | None:
        """The first of `ids` that `key` is bound to, or None."""
        for action in ids:
            if self.keymap.matches(key, action):
                return action
        return None
