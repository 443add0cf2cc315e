"""Fullscreen extras: transcript search, copy of mouse selections, link clicks, the `Copied!` flash.

- Search: `tui.altScreen.search` opens a `SearchBox` row under the transcript; while it is open it takes the keys
  (`searchNext`/`searchPrevious`/`searchClose`, typing edits the query) and viewport keys still scroll. New
  transcript output re-runs the query at the next redraw, not per event.
- Selection: a finished drag is copied at once when `fullscreenCopyOnSelect` (default true); otherwise it stays
  highlighted until `app.message.copy` copies it. Copies go through the native clipboard tool or OSC 52.
- Links: a click on an OSC 8 link opens it with the platform opener when one is on PATH, else shows the URL.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import urwid

from apex_tui.app._clipboard import copy_to_clipboard
from apex_tui.widgets import SearchBox, TranscriptSearch
from apex_tui.widgets._canvas import Size, blank, flow_width, text_canvas

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

FLASH_SECONDS = 1.5
OPENERS: tuple[str, ...] = ("open", "xdg-open", "wslview") if sys.platform == "darwin" else ("xdg-open", "wslview")


class Flash(urwid.Widget):
    """A one-row message that disappears after `FLASH_SECONDS` (zero rows otherwise)."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self) -> None:
        super().__init__()
        self.text: str | None = None
        self._alarm: Any = None  # Any: an opaque alarm handle of the main loop

    def show(self, text: str, loop: urwid.MainLoop | None, on_hide: Callable[[], None]) -> None:
        """Show `text`; with a main loop it hides itself again (then `on_hide` asks for a redraw)."""
        self.text = text
        self._invalidate()
        if loop is None:
            return
        if self._alarm is not None:
            loop.remove_alarm(self._alarm)

        def hide(_loop: object = None, _data: object = None) -> None:
            self._alarm = None
            self.text = None
            self._invalidate()
            on_hide()

        self._alarm = loop.set_alarm_in(FLASH_SECONDS, hide)

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """One row while shown."""
        return 1 if self.text else 0

    def render(self, size: Size, focus: bool = False) -> urwid.Canvas:
        """The text in the success colour."""
        width = flow_width(size)
        if not self.text:
            return blank(width, 0)
        return text_canvas(("success", self.text), width, wrap="ellipsis")


class FullscreenExtras:
    """Search, selection copy and links of one app; see the module docstring."""

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app
        self.flash = Flash()
        self.search: TranscriptSearch | None = None
        self.box: SearchBox | None = None
        self.search_stale = False
        self.pending_selection: str | None = None
        urwid.connect_signal(app.transcript, "selection", self._on_selection)
        urwid.connect_signal(app.transcript, "link", self._on_link)

    # ----------------------------------------------------------------- search

    def open_search(self) -> None:
        """Show the search box (again, with its last query, when it was open before)."""
        if self.box is not None:
            return
        # The search matches the blocks the transcript holds: older history must be blocks too (a one-time cost,
        # ~1.5 s for a 50k-entry session).
        self.app.load_history()
        self.search = self.search or TranscriptSearch(self.app.transcript)
        self.box = SearchBox(self.search, keymap=self.app.keymap)
        urwid.connect_signal(self.box, "close", lambda _box: self.close_search())
        if self.search.query:
            self.search.refresh()
        self.app.root.show_search(self.box)
        self.app.redraw()

    def close_search(self) -> None:
        """Remove the box and its highlights; the view stays where the last match put it."""
        if self.box is None or self.search is None:
            return
        self.search.detach()
        self.box = None
        self.app.root.show_search(None)
        self.app.redraw()

    def transcript_changed(self) -> None:
        """Note that the open search must re-run (done once per redraw by `before_draw`)."""
        if self.box is not None:
            self.search_stale = True

    def before_draw(self) -> None:
        """Re-run a stale query."""
        if self.search_stale and self.search is not None and self.box is not None:
            self.search_stale = False
            self.search.refresh()
            self.box._invalidate()

    # ----------------------------------------------------------------- selection and links

    def _copy_on_select(self) -> bool:
        return bool(self.app.session.settings_manager.get_bool("fullscreenCopyOnSelect", True))

    def _on_selection(self, _view: object, text: str) -> None:
        if self._copy_on_select():
            self.copy(text)
            self.app.transcript.clear_selection()
        else:
            self.pending_selection = text

    def copy(self, text: str) -> None:
        """Copy `text` and flash `Copied!`."""
        copy_to_clipboard(text)
        self.flash.show("Copied!", self.app.main_loop, self.app.redraw)
        self.app.redraw()

    def copy_selection(self) -> bool:
        """`app.message.copy` with a selection kept by `fullscreenCopyOnSelect: false`: copy it; False if none."""
        if self.pending_selection is None or self.app.transcript.selection is None:
            return False
        text, self.pending_selection = self.pending_selection, None
        self.app.transcript.clear_selection()
        self.copy(text)
        return True

    def _on_link(self, _view: object, url: str) -> None:
        opener = next((name for name in OPENERS if shutil.which(name)), None)
        if opener is None:
            self.app.notify(f"Link: {url}")
            return
        try:
            subprocess.Popen(  # a browser outlives the click: never waited for
                [opener, url], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        except OSError as exc:
            self.app.notify(f"Could not open {url}: {exc}", "error")
