"""The widget tree (tui.md §1, §14): transcript on top, the dock (pending, status, editor slot, footer) below.

`Root` applies the key precedence of keybindings.md §5: fullscreen transcript bindings first, then the widget in
the editor slot (editor or picker); editor page keys that find nothing to scroll fall through to the transcript.
"""

from __future__ import annotations

from typing import Any

import urwid

from apex_tui.editor import Editor
from apex_tui.keybindings import FULLSCREEN_VIEWPORT_IDS, KeybindingManager
from apex_tui.widgets import Footer, StatusLine, TranscriptView


class PendingArea(urwid.Widget):
    """Queued steering / follow-up messages, one dim truncated line each, plus the dequeue hint."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def set_queues(self, steering: list[str], follow_up: list[str], dequeue_hint: str) -> None:
        """Show the queues (empty queues hide the area)."""
        lines = [f"Steering: {t}" for t in steering] + [f"Follow-up: {t}" for t in follow_up]
        if lines and dequeue_hint:
            lines.append(f"↳ {dequeue_hint} to edit all queued messages")
        self.lines = [line.replace("\n", " ") for line in lines]
        self._invalidate()

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """One row per line."""
        return len(self.lines)

    def render(self, size: tuple[()] | tuple[int] | tuple[int, int], focus: bool = False) -> urwid.Canvas:
        """Dim lines, clipped with an ellipsis."""
        width = size[0] if size else 80
        if not self.lines:
            return urwid.SolidCanvas(" ", width, 0)
        canvases = [urwid.Text(("dim", line), wrap="ellipsis").render((width,)) for line in self.lines]
        return urwid.CanvasCombine([(c, None, False) for c in canvases])


class Root(urwid.WidgetWrap[urwid.Pile]):
    """The top-level widget; keys go to the editor slot, the transcript only through its bindings."""

    def __init__(
        self,
        keymap: KeybindingManager,
        transcript: TranscriptView,
        pending: PendingArea,
        status: StatusLine,
        slot: urwid.WidgetPlaceholder[Any],
        footer: Footer,
        *,
        fullscreen: bool = False,
    ) -> None:
        self.keymap = keymap
        self.transcript = transcript
        self.slot = slot
        self.fullscreen = fullscreen
        self.dock = urwid.Pile([pending, status, slot, footer], focus_item=2)
        super().__init__(urwid.Pile([("weight", 1, transcript), ("pack", self.dock)], focus_item=1))

    def _transcript_size(self, size: tuple[int, int]) -> tuple[int, int]:
        maxcol, maxrow = size
        return maxcol, max(0, maxrow - self.dock.rows((maxcol,), True))

    def keypress(self, size: tuple[()] | tuple[int] | tuple[int, int], key: str) -> str | None:
        """§5.1: fullscreen viewport ids, then the focused dock widget, then editor page keys → transcript."""
        box: tuple[int, int] = (size[0], size[1]) if len(size) == 2 else (80, 24)
        if self.fullscreen and any(self.keymap.matches(key, id_) for id_ in FULLSCREEN_VIEWPORT_IDS):
            return self.transcript.keypress(self._transcript_size(box), key)
        inner: Any = self.slot.original_widget
        result: str | None = inner.keypress((box[0],), key)
        if result is None:
            return None
        if isinstance(inner, Editor):
            if self.keymap.matches(result, "tui.editor.pageUp"):
                self.transcript.page_up()
                return None
            if self.keymap.matches(result, "tui.editor.pageDown"):
                self.transcript.page_down()
                return None
        return result
