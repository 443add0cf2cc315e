"""The widget tree: transcript on top, the dock below — pending messages, status, the `Copied!`
flash, extension widgets above the editor, the editor slot, extension widgets below it, footer.

`Root` applies the key precedence of docs/keybindings.md: an open transcript search box first (fullscreen search
scope), then fullscreen transcript bindings, then extension shortcuts (only while the editor has the keys), then the
widget in the editor slot (editor or picker); editor page keys that find nothing to scroll fall through to the
transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import urwid

from apex_tui.editor import Editor
from apex_tui.keybindings import FULLSCREEN_VIEWPORT_IDS, KeybindingManager
from apex_tui.widgets import Footer, PendingArea, SearchBox, StatusLine, TranscriptView

DOCK_SLOT = 4
"""Index of the editor slot in the dock pile."""


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
        flash: urwid.Widget,
        above: urwid.Widget,
        below: urwid.Widget,
        fullscreen: bool = False,
    ) -> None:
        self.keymap = keymap
        self.transcript = transcript
        self.slot = slot
        self.fullscreen = fullscreen
        self.search_box: SearchBox | None = None
        self.on_search: Callable[[], None] | None = None
        """Called for `tui.altScreen.search` in fullscreen mode."""
        self.extension_key: Callable[[str], bool] | None = None
        """Runs the extension shortcut bound to a key; True when one ran."""
        self.before_render: Callable[[], None] | None = None
        """Called before each frame renders (the open search re-runs a stale query there)."""
        self.before_viewport_key: Callable[[str], None] | None = None
        """Called with a key the transcript is about to get as a viewport action (the app loads older history)."""
        self.dock = urwid.Pile([pending, status, flash, above, slot, below, footer], focus_item=DOCK_SLOT)
        super().__init__(urwid.Pile([("weight", 1, transcript), ("pack", self.dock)], focus_item=1))

    def show_search(self, box: SearchBox | None) -> None:
        """Put the search box under the transcript (it takes the keys and the cursor), or remove it."""
        pile = self._w
        if self.search_box is not None:
            del pile.contents[1]
        self.search_box = box
        if box is not None:
            pile.contents.insert(1, (box, pile.options("pack")))
            pile.focus_position = 1
        else:
            pile.focus_position = len(pile.contents) - 1
        self._invalidate()

    def render(self, size: tuple[()] | tuple[int] | tuple[int, int], focus: bool = False) -> urwid.Canvas:
        """The frame, after `before_render`."""
        if self.before_render is not None:
            self.before_render()
        return super().render(size, focus)

    def _transcript_size(self, size: tuple[int, int]) -> tuple[int, int]:
        maxcol, maxrow = size
        below = self.dock.rows((maxcol,), True) + (1 if self.search_box is not None else 0)
        return maxcol, max(0, maxrow - below)

    def _viewport_key(self, key: str) -> bool:
        return any(self.keymap.matches(key, id_) for id_ in FULLSCREEN_VIEWPORT_IDS if id_ != "tui.altScreen.search")

    def _transcript_key(self, box: tuple[int, int], key: str) -> str | None:
        if self.before_viewport_key is not None:
            self.before_viewport_key(key)
        return self.transcript.keypress(self._transcript_size(box), key)

    def keypress(self, size: tuple[()] | tuple[int] | tuple[int, int], key: str) -> str | None:
        """Precedence: search box, fullscreen viewport ids, extension shortcuts, the focused dock widget, then editor
        page keys → transcript."""
        box: tuple[int, int] = (size[0], size[1]) if len(size) == 2 else (80, 24)
        if self.search_box is not None:
            if self.search_box.keypress((box[0],), key) is None:
                return None
            if self._viewport_key(key):
                self._transcript_key(box, key)
            return None  # the search box has the focus: nothing else reaches the editor
        if self.fullscreen and self.keymap.matches(key, "tui.altScreen.search"):
            if self.on_search is not None:
                self.on_search()
            return None
        if self.fullscreen and self._viewport_key(key):
            return self._transcript_key(box, key)
        inner: Any = self.slot.original_widget
        if isinstance(inner, Editor) and self.extension_key is not None and self.extension_key(key):
            return None
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

    def mouse_event(
        self, size: tuple[()] | tuple[int] | tuple[int, int], event: str, button: int, col: int, row: int, focus: bool
    ) -> bool | None:
        """Wheel events over the dock scroll the transcript; everything else goes to the widgets."""
        if len(size) == 2 and event == "mouse press" and button in (4, 5):
            box = (size[0], size[1])
            transcript_rows = self._transcript_size(box)[1]
            if row >= transcript_rows:
                self.transcript.scroll(-1 if button == 4 else 1)
                return True
        return super().mouse_event(size, event, button, col, row, focus)
